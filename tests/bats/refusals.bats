#!/usr/bin/env bats
# shellcheck disable=SC2154 # $stderr and $output are set by bats' run
# What gpuvm refuses to take, and how it says so: a function it cannot identify,
# what the host needs whatever ids= says, a group with members that are no PCI function of
# this host; and the cause of every outcome that is not a success, in "errors".

load helpers

setup() {
	mkfx workstation
}

# dev_dir ADDR: the device's directory in the tree.
dev_dir() {
	readlink -f "$ROOT/sys/bus/pci/devices/$1"
}

override() {
	cat "$ROOT/sys/bus/pci/devices/$1/driver_override"
}

@test "a GPU whose uevent cannot be read is reported, never taken, and vm-passthrough does not succeed" {
	d=$(dev_dir 0000:01:00.0)
	rm "$d/uevent" && mkdir "$d/uevent"
	gv --cmdline "gpuvm.mode=vm-passthrough" apply
	assert_failure 1
	output=$(cat "$ROOT/run/gpuvm/state.json")
	[ "$(jqr .result)" = failed ]
	[ "$(dev_field 0000:01:00.0 role)" = unidentified ]
	[ "$(dev_field 0000:01:00.0 vendor)" = 10de ]	# from its vendor file
	[ "$(dev_field 0000:01:00.0 device)" = 1e87 ]
	assert_regex "$(jqr '.errors[0]')" "^0000:01:00.0: not identified: its uevent could not be used \(Is a directory\); its vendor and device files say 10de:1e87, which the default match selects, so vm-passthrough cannot be called reached; never taken$"
	assert_regex "$stderr" "gpuvm: error: 0000:01:00.0: not identified"
	# Never taken, nor its slot-mates.
	for f in 0 1 2 3; do [ "$(override "0000:01:00.$f")" = "(null)" ]; done
	[ ! -s "$ROOT/sys/bus/pci/drivers/nouveau/unbind" ]
}

@test "vm-vgpu and plan say the same; container mode warns and succeeds" {
	d=$(dev_dir 0000:01:00.0)
	rm "$d/uevent" && mkdir "$d/uevent"
	gv --cmdline "gpuvm.mode=vm-vgpu" plan --json
	assert_failure 1
	[ "$(jqr '.errors | length')" = 1 ]
	assert_regex "$(jqr '.errors[0]')" "so vm-vgpu cannot be called reached"
	gv --cmdline "gpuvm.mode=container" apply
	assert_success
	output=$(cat "$ROOT/run/gpuvm/state.json")
	[ "$(jqr '.errors | length')" = 0 ]
	assert_regex "$(jqr '.warnings[0]')" "^0000:01:00.0: not identified: .*: left as it is$"
	[ "$(override 0000:01:00.0)" = "(null)" ]
}

@test "a function with nothing readable: vendor unknown, still never taken" {
	d=$(dev_dir 0000:01:00.0)
	for a in uevent vendor device class; do rm "$d/$a" && mkdir "$d/$a"; done
	gv --cmdline "gpuvm.mode=vm-passthrough" plan --json
	assert_failure 1
	[ "$(dev_field 0000:01:00.0 vendor)" = ffff ]
	[ "$(dev_field 0000:01:00.0 class)" = ffffff ]
	assert_regex "$(dev_field 0000:01:00.0 reason)" "its vendor is unknown: it may be a device this mode selects"
	# exclude= names it: wanted by no one, so the run succeeds; it is still listed.
	gv --cmdline "gpuvm.mode=vm-passthrough gpuvm.exclude=0000:01:00.0" plan --json
	assert_success
	[ "$(dev_field 0000:01:00.0 role)" = unidentified ]
	assert_regex "$(jqr '.warnings[0]')" "^0000:01:00.0: not identified"
}

@test "an unidentified companion blocks the GPU's group" {
	d=$(dev_dir 0000:01:00.1)
	rm "$d/uevent" && mkdir "$d/uevent"
	gv --cmdline "gpuvm.mode=vm-passthrough" apply
	assert_failure 1
	output=$(cat "$ROOT/run/gpuvm/state.json")
	[ "$(dev_field 0000:01:00.0 result)" = held ]
	assert_regex "$(dev_field 0000:01:00.0 reason)" "IOMMU group 2 is not viable: 0000:01:00.1 could not be identified \(Is a directory\)"
	[ "$(override 0000:01:00.1)" = "(null)" ]
}

@test "ids=8086:* binds no storage, ISA/LPC, SMBus, nor their group, and names each refusal" {
	gv --cmdline "gpuvm.mode=vm-passthrough gpuvm.ids=8086:*" apply
	assert_failure 4	# the PCH's group cannot be had: partial
	for a in 0000:00:17.0 0000:00:1f.0 0000:00:1f.4; do
		[ "$(override "$a")" = "(null)" ]
	done
	for a in 0000:00:1f.3 0000:00:1f.5; do	# members of the LPC bridge's group: held, not bound
		[ "$(override "$a")" = vfio-pci ]
	done
	output=$(cat "$ROOT/run/gpuvm/state.json")
	[ "$(dev_field 0000:00:17.0 role)" = host ]
	[ "$(dev_field 0000:00:1f.3 result)" = held ]
	assert_regex "$(jqr '.warnings | join("|")')" "0000:00:17.0: ids= matches it, but the host needs it \(a mass-storage controller\): never bound"
	assert_regex "$(jqr '.warnings | join("|")')" "0000:00:1f.0: ids= matches it, but the host needs it \(an ISA/LPC bridge\): never bound"
	assert_regex "$(jqr '.warnings | join("|")')" "0000:00:1f.4: ids= matches it, but the host needs it \(an SMBus controller\): never bound"
	assert_regex "$(jqr '.errors | join("|")')" "0000:00:1f.3: IOMMU group 28 is not viable: 0000:00:1f.0 \(8086:7a84, no driver\) is needed by the host"
	[ "$(jqr '.groups[] | select(.id == 28) | .blocked_by | join(",")')" = "0000:00:1f.0,0000:00:1f.4" ]
	# What the host does not need is bound as asked: the NIC.
	[ "$(override 0000:07:00.0)" = vfio-pci ]
}

@test "container mode with host_driver= reserves no storage controller either" {
	gv --cmdline "gpuvm.mode=container gpuvm.ids=8086:* gpuvm.host_driver=nvidia" apply
	for a in 0000:00:17.0 0000:00:1f.0 0000:00:1f.4; do
		[ "$(override "$a")" = "(null)" ]
	done
	[ "$(override 0000:07:00.0)" = nvidia ]
}

@test "the root disk's controller and the serial console's device, as the running host shows them" {
	# Root on a USB disk, through device-mapper; the console on the LPSS UART.
	printf '22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/mapper/vg-root rw\n' \
		>"$ROOT/proc/self-mountinfo"
	mkdir -p "$ROOT/proc/self" && mv "$ROOT/proc/self-mountinfo" "$ROOT/proc/self/mountinfo"
	mkdir -p "$ROOT/sys/dev/block" "$ROOT/sys/devices/virtual/block/dm-0/slaves" "$ROOT/sys/class/block" \
		"$ROOT/sys/class/tty"
	ln -s ../../devices/virtual/block/dm-0 "$ROOT/sys/dev/block/254:0"
	sda2=../../devices/pci0000:00/0000:00:14.0/usb2/2-1/2-1:1.0/host0/target0:0:0/0:0:0:0/block/sda/sda2
	ln -s "$sda2" "$ROOT/sys/class/block/sda2"
	ln -s "../../../../pci0000:00/0000:00:14.0/usb2/2-1/2-1:1.0/host0/target0:0:0/0:0:0:0/block/sda/sda2" \
		"$ROOT/sys/devices/virtual/block/dm-0/slaves/sda2"
	ln -s ../../devices/pci0000:00/0000:00:1e.0/dw-apb-uart.0/tty/ttyS0 "$ROOT/sys/class/tty/ttyS0"
	gv --cmdline "gpuvm.mode=vm-passthrough gpuvm.ids=8086:7ae0,8086:7aa8,8086:1533 console=ttyS0,115200n8" plan --json
	assert_regex "$(dev_field 0000:00:14.0 reason)" "^ids= matches it, but the host needs it \(the root file system's disk is behind it\): never bound$"
	assert_regex "$(dev_field 0000:00:1e.0 reason)" "^ids= matches it, but the host needs it \(a console= serial port is behind it\): never bound$"
	[ "$(dev_field 0000:07:00.0 action)" = bind ]
	# Without console=, the UART is the NIC's peer again: selected and bound.
	gv --cmdline "gpuvm.mode=vm-passthrough gpuvm.ids=8086:7aa8" plan --json
	[ "$(dev_field 0000:00:1e.0 action)" = bind ]
}

@test "an IOMMU group with a member that is no PCI function of this host is not viable" {
	g="$ROOT/sys/kernel/iommu_groups/2/devices"
	ln -s ../../../../devices/pci0000:00/0000:00:1c.0/0000:09:00.0 "$g/0000:09:00.0"
	ln -s ../../../../devices/platform/ACPI0007:00 "$g/ACPI0007:00"
	gv --cmdline "gpuvm.mode=vm-passthrough" plan --json
	assert_failure 1
	[ "$(jqr '.groups[] | select(.id == 2) | .viable')" = false ]
	[ "$(jqr '.groups[] | select(.id == 2) | .blocked_by | join(",")')" = "0000:09:00.0,ACPI0007:00" ]
	[ "$(dev_field 0000:01:00.0 action)" = hold ]
	assert_regex "$(dev_field 0000:01:00.0 reason)" "IOMMU group 2 is not viable: its member 0000:09:00.0 is not a PCI function this host lists \(vfio takes a group whole\), among others"
	gv --cmdline "gpuvm.mode=vm-passthrough" plan
	assert_output --partial "2 (DMA-FQ) NOT viable: 0000:01:00.0 0000:01:00.1 0000:01:00.2 0000:01:00.3; blocked by 0000:09:00.0 ACPI0007:00"
}

@test "every outcome that is not a success says why in errors: no IOMMU (plan and apply)" {
	mkfx noiommu
	gv --cmdline "gpuvm.mode=vm-passthrough" plan --json
	assert_failure 3
	assert_regex "$(jqr '.errors[0]')" "^vm-passthrough needs an active IOMMU and none is active: 1 selected device held \(on_error=hold\)"
	assert_regex "$(jqr '.errors | join("|")')" "0000:01:00.0: the IOMMU is not active"
	gv --cmdline "gpuvm.mode=vm-passthrough gpuvm.on_error=release" apply
	assert_failure 3
	output=$(cat "$ROOT/run/gpuvm/state.json")
	assert_regex "$(jqr '.errors[0]')" "^vm-passthrough needs an active IOMMU and none is active: 1 selected device left to the host \(on_error=release\)"
}

@test "every outcome that is not a success says why in errors: a group that is not viable" {
	mkfx gpu-nic
	gv --cmdline "gpuvm.mode=vm-passthrough" plan --json
	assert_failure 1
	assert_regex "$(jqr '.errors[0]')" "^0000:01:00.0: IOMMU group 1 is not viable: 0000:02:00.0"
	# A success has none.
	mkfx workstation
	gv --cmdline "gpuvm.mode=vm-passthrough" plan --json
	assert_success
	[ "$(jqr '.errors | length')" = 0 ]
	[ "$(jqr '.warnings | length')" = 0 ]
}
