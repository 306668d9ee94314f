#!/usr/bin/env bats
# shellcheck disable=SC2154 # $stderr and $output are set by bats' run
# A node split per GPU (gpus=): in a VM mode only the GPUs gpus= selects go to vfio, the
# others stay with the host driver, a group that holds both stays whole with the host, and
# apply publishes what it pinned under /run/gpuvm/pinned. hgx8 has GPUs 0000:{03,23,43,63}:00.0
# on NUMA node 0 and the same addresses in domain 0001 on node 1; two-gpus has two GPUs in one
# IOMMU group (0000:03:00.0 and 0000:04:00.0).

load helpers

N0="0000:03:00.0 0000:23:00.0 0000:43:00.0 0000:63:00.0"
N1="0001:03:00.0 0001:23:00.0 0001:43:00.0 0001:63:00.0"

override() {
	cat "$ROOT/sys/bus/pci/devices/$1/driver_override"
}

conf() {
	mkdir -p "$ROOT/etc/gpuvm"
	printf '%s\n' "$@" >"$ROOT/etc/gpuvm/gpuvm.conf"
}

@test "gpus=numa:1 in the host config: node 1's GPUs to vfio-pci, node 0's stay on nvidia, each said why" {
	mkfx hgx8
	conf mode=vm-passthrough gpus=numa:1
	gv plan --json
	assert_success
	[ "$(jqr .settings.gpus.value)" = numa:1 ]
	[ "$(jqr .settings.gpus.source)" = /etc/gpuvm/gpuvm.conf:2 ]
	[ "$(jqr .selected)" = 4 ]
	[ "$(jqr '.pinned | join(" ")')" = "$N1" ]
	for a in $N1; do
		[ "$(dev_field "$a" action)" = bind ]
		assert_regex "$(dev_field "$a" reason)" "selected by gpus= in IOMMU group"
	done
	for a in $N0; do
		[ "$(dev_field "$a" action)" = keep ]
		[ "$(dev_field "$a" reason)" = "GPU 10de:2330 not selected by gpus= (/etc/gpuvm/gpuvm.conf:2): left on nvidia (mode vm-passthrough: only what gpus= selects goes to VMs)" ]
	done
	[ -z "$stderr" ]
	gv plan
	assert_line "gpus: numa:1 (from /etc/gpuvm/gpuvm.conf:2)"
}

@test "apply pins the selection: a record a device under /run/gpuvm/pinned, driver_override set; another selection removes the old records" {
	mkfx hgx8
	conf mode=vm-passthrough gpus=numa:1
	gv apply
	assert_success
	for a in $N1; do
		[ "$(override "$a")" = vfio-pci ]
		[ "$(cat "$ROOT/run/gpuvm/pinned/$a")" = "$(printf 'mode=vm-passthrough\nmode_source=/etc/gpuvm/gpuvm.conf:1\nselection=gpus\nselection_source=/etc/gpuvm/gpuvm.conf:2\ndriver=vfio-pci')" ]
	done
	for a in $N0; do
		[ "$(override "$a")" = "(null)" ]
		[ ! -e "$ROOT/run/gpuvm/pinned/$a" ]
	done
	output=$(cat "$ROOT/run/gpuvm/state.json")
	[ "$(jqr '.pinned | join(" ")')" = "$N1" ]
	[ "$(stat -c %a "$ROOT/run/gpuvm/pinned/0001:03:00.0")" = 644 ]
	# the metrics file says the same
	[ "$(grep -c '^gpuvm_pinned{' "$ROOT/run/gpuvm/metrics/gpuvm.prom")" = 4 ]
	grep -qx 'gpuvm_pinned{address="0001:03:00.0",mode="vm-passthrough"} 1' "$ROOT/run/gpuvm/metrics/gpuvm.prom"
	# another selection: the records follow it, the GPU left out goes back to the host
	conf mode=vm-passthrough "gpus=0001:03:00.0, 0000:03:00.0"
	gv apply
	assert_success
	[ "$(find "$ROOT/run/gpuvm/pinned" -type f -printf '%f\n' | sort | tr '\n' ' ')" = "0000:03:00.0 0001:03:00.0 " ]
	[ "$(override 0001:23:00.0)" = "" ]
	# container mode pins nothing
	conf mode=container gpus=0001:03:00.0
	gv apply
	assert_success
	[ -z "$(ls "$ROOT/run/gpuvm/pinned")" ]
}

@test "gpuvm.gpus= on the command line over the host config's" {
	mkfx hgx8
	conf mode=vm-passthrough gpus=numa:1
	gv --cmdline "gpuvm.gpus=0000:23:00.0" plan --json
	assert_success
	[ "$(jqr .settings.gpus.source)" = cmdline ]
	[ "$(jqr '.pinned | join(" ")')" = 0000:23:00.0 ]
	[ "$(dev_field 0001:03:00.0 reason)" = "GPU 10de:2330 not selected by gpus= (cmdline): left on nvidia (mode vm-passthrough: only what gpus= selects goes to VMs)" ]
	# a bad value on the line: an error naming it, the config's selection stands
	gv --cmdline "gpuvm.gpus=0000:23:00.0,numa:99" plan --json
	assert_success
	[ "$(jqr .settings.gpus.source)" = /etc/gpuvm/gpuvm.conf:2 ]
	assert_regex "$stderr" "error: cmdline: gpus: invalid value '0000:23:00.0,numa:99' at 'numa:99: NUMA nodes are 0 to 63' \(expected PCI addresses DDDD:BB:DD.F or numa:N entries, comma-separated\); using the /etc/gpuvm/gpuvm.conf:2 value"
}

@test "two GPUs in one group, one selected: the group is not split, both stay with the host, a warning says why" {
	mkfx two-gpus
	conf mode=vm-passthrough gpus=0000:03:00.0
	gv apply --json
	assert_success
	[ "$(jqr .selected)" = 0 ]
	[ "$(jqr .failed)" = 0 ]
	[ "$(jqr '.pinned | length')" = 0 ]
	[ "$(override 0000:03:00.0)" = "(null)" ]
	[ "$(override 0000:04:00.0)" = "(null)" ]
	assert_regex "$(dev_field 0000:03:00.0 reason)" "selected by gpus= \(/etc/gpuvm/gpuvm.conf:2\), but IOMMU group 2 also holds 0000:04:00.0, which gpus= does not select: a group is not split, it stays with the host: left on nvidia"
	assert_regex "$stderr" "warning: /etc/gpuvm/gpuvm.conf:2: gpus: 0000:03:00.0: its IOMMU group 2 also holds a GPU gpus= does not select: a group is not split, it stays with the host"
	[ ! -e "$ROOT/run/gpuvm/pinned/0000:03:00.0" ]
	# both selected: the group goes whole
	conf mode=vm-passthrough gpus=0000:03:00.0,0000:04:00.0
	gv apply
	assert_success
	[ "$(override 0000:03:00.0)" = vfio-pci ]
	[ "$(override 0000:04:00.1)" = vfio-pci ]
	[ -e "$ROOT/run/gpuvm/pinned/0000:04:00.0" ]
}

@test "a selected address that is no GPU gpuvm takes, or is not there, a node with none: warnings naming the key, file:line and entry; the rest applies" {
	mkfx hgx8
	conf mode=vm-passthrough "gpus=0001:03:00.0,0001:6c:00.0,0000:99:00.0,numa:5,0001:23:00.0" exclude=0001:23:00.0
	gv apply
	assert_success
	[ "$(override 0001:03:00.0)" = vfio-pci ]
	assert_regex "$stderr" "warning: /etc/gpuvm/gpuvm.conf:2: gpus: 0001:6c:00.0 \(10de:22a3\) is not a GPU gpuvm takes \(NVSwitch stays on the host for Fabric Manager \(nvswitch=host\)\); ignored"
	assert_regex "$stderr" "warning: /etc/gpuvm/gpuvm.conf:2: gpus: 0000:99:00.0: no GPU at this address on this host; nothing taken for it"
	assert_regex "$stderr" "warning: /etc/gpuvm/gpuvm.conf:2: gpus: numa:5: no GPU gpuvm takes is on NUMA node 5; nothing taken for it"
	# exclude= wins over gpus=
	assert_regex "$stderr" "warning: /etc/gpuvm/gpuvm.conf:2: gpus: 0001:23:00.0 \(10de:2330\) is not a GPU gpuvm takes \(excluded by exclude= \(/etc/gpuvm/gpuvm.conf:3\)\); ignored"
	[ "$(override 0001:23:00.0)" = "(null)" ]
	[ "$(find "$ROOT/run/gpuvm/pinned" -type f | wc -l)" = 1 ]
}

@test "container mode: gpus= changes nothing, and says so" {
	mkfx hgx8
	gv --cmdline "gpuvm.mode=container" plan --json
	base=$(printf '%s' "$output" | jq -c '[.devices[] | [.address, .action, .reason]]')
	conf gpus=numa:1
	gv --cmdline "gpuvm.mode=container" plan --json
	assert_success
	[ "$(printf '%s' "$output" | jq -c '[.devices[] | [.address, .action, .reason]]')" = "$base" ]
	[ "$(jqr '.pinned | length')" = 0 ]
	[ -z "$stderr" ]
	gv --cmdline "gpuvm.mode=container" status
	assert_line "gpus: numa:1 (from /etc/gpuvm/gpuvm.conf:1): changes nothing in mode container"
	gv --cmdline "gpuvm.mode=vm-passthrough" check
	assert_output --partial "gpus: numa:1 (from /etc/gpuvm/gpuvm.conf:1)"
}

@test "at boot: --defer holds every GPU before the config is known; --resume with the root's gpus= releases the others" {
	mkfx hgx8
	for a in $N0 $N1; do nodriver "$a"; done
	mkdir -p "$ROOT/proc/sys/kernel/random"
	echo 6f1d9c1e-0b7a-4c55-9d8e-3a2b1c0d9e8f >"$ROOT/proc/sys/kernel/random/boot_id"
	SYSROOT="$BATS_TEST_TMPDIR/sysroot"
	mkdir -p "$SYSROOT/etc/gpuvm"
	gv --cmdline "quiet" apply --defer
	assert_success
	for a in $N0 $N1; do
		[ "$(override "$a")" = gpuvm-hold ]
	done
	[ ! -e "$ROOT/run/gpuvm/pinned" ]
	printf 'mode=vm-passthrough\ngpus=numa:1\n' >"$SYSROOT/etc/gpuvm/gpuvm.conf"
	gv --cmdline "quiet" apply --resume --sysroot "$SYSROOT"
	assert_success
	for a in $N1; do
		[ "$(override "$a")" = vfio-pci ]
		[ -e "$ROOT/run/gpuvm/pinned/$a" ]
	done
	for a in $N0; do
		[ "$(override "$a")" = "" ]
		[ ! -e "$ROOT/run/gpuvm/pinned/$a" ]
	done
	output=$(cat "$ROOT/run/gpuvm/boot.json")
	assert_regex "$(dev_field 0000:03:00.0 reason)" "not selected by gpus= \(/etc/gpuvm/gpuvm.conf:2\): held while gpuvm waited for its config; released to the host driver"
	[ "$(jqr '.pinned | join(" ")')" = "$N1" ]
	# gpuvm.gpus= on the line without a mode: the first call still holds every GPU
	mkfx hgx8
	for a in $N0 $N1; do nodriver "$a"; done
	gv --cmdline "gpuvm.gpus=0001:03:00.0" apply --defer
	assert_success
	for a in $N0 $N1; do
		[ "$(override "$a")" = gpuvm-hold ]
	done
	gv --cmdline "gpuvm.gpus=0001:03:00.0" apply --resume --sysroot "$SYSROOT"
	assert_success
	[ "$(override 0001:03:00.0)" = vfio-pci ]
	[ "$(override 0001:23:00.0)" = "" ]
}

@test "at boot: gpuvm.mode= and gpuvm.gpus= on the line act at the first call; gpus= in the root's file alone corrects it at the last" {
	mkfx hgx8
	for a in $N0 $N1; do nodriver "$a"; done
	gv --cmdline "gpuvm.mode=vm-passthrough gpuvm.gpus=0000:03:00.0,0001:03:00.0" apply --defer
	assert_success
	[ "$(override 0000:03:00.0)" = vfio-pci ]
	[ "$(override 0001:03:00.0)" = vfio-pci ]
	[ "$(override 0000:23:00.0)" = "(null)" ]
	[ "$(cat "$ROOT/run/gpuvm/pinned/0000:03:00.0")" = "$(printf 'mode=vm-passthrough\nmode_source=cmdline\nselection=gpus\nselection_source=cmdline\ndriver=vfio-pci')" ]
	# gpuvm.mode= on the line, gpus= in the root's file alone: the first call binds every GPU,
	# the last gives those the file leaves out back to the host driver
	mkfx hgx8
	for a in $N0 $N1; do nodriver "$a"; done
	SYSROOT="$BATS_TEST_TMPDIR/sysroot"
	mkdir -p "$SYSROOT/etc/gpuvm"
	printf 'gpus=numa:1\n' >"$SYSROOT/etc/gpuvm/gpuvm.conf"
	gv --cmdline "gpuvm.mode=vm-passthrough" apply --defer
	assert_success
	[ "$(override 0000:23:00.0)" = vfio-pci ]
	[ -e "$ROOT/run/gpuvm/pinned/0000:23:00.0" ]
	gv --cmdline "gpuvm.mode=vm-passthrough" apply --resume --sysroot "$SYSROOT"
	assert_success
	[ "$(override 0000:23:00.0)" = "" ]
	[ "$(override 0001:23:00.0)" = vfio-pci ]
	[ "$(find "$ROOT/run/gpuvm/pinned" -type f -printf '%f\n' | sort | tr '\n' ' ')" = "$N1 " ]
}

@test "config set gpus=: validated, written, get reads it back" {
	mkfx hgx8
	mkdir -p "$ROOT/etc/gpuvm"
	gv config set gpus=numa:1,0000:03:00.0
	assert_success
	assert_line "/etc/gpuvm/gpuvm.conf: gpus=numa:1,0000:03:00.0"
	assert_line "reboot: needed: takes effect at the next boot"
	gv config get gpus
	assert_success
	[ "$output" = numa:1,0000:03:00.0 ]
	gv config set gpus=numa:1,numa:1
	[ "$status" -eq 2 ]
	assert_regex "$stderr" "config set: gpus: invalid value 'numa:1,numa:1'"
	gv config set gpus=0000:03:00.9
	[ "$status" -eq 2 ]
	[ "$(cat "$ROOT/etc/gpuvm/gpuvm.conf")" = "gpus=numa:1,0000:03:00.0" ]
}

@test "apply --live: the records follow the switch; a GPU in use is left, and is not pinned until it is switched" {
	mkfx hgx8
	conf mode=vm-passthrough gpus=numa:1
	mkdir -p "$ROOT/sys/bus/pci/devices/0001:23:00.0/drm/card1" "$ROOT/proc/4242/fd"
	printf '226:1\n' >"$ROOT/sys/bus/pci/devices/0001:23:00.0/drm/card1/dev"
	printf 'Xorg\n' >"$ROOT/proc/4242/comm"
	ln -s /dev/dri/card1 "$ROOT/proc/4242/fd/5"
	gv apply --live
	[ "$status" -eq 7 ]
	[ "$(find "$ROOT/run/gpuvm/pinned" -type f -printf '%f\n' | sort | tr '\n' ' ')" = "0001:03:00.0 0001:43:00.0 0001:63:00.0 " ]
	[ "$(override 0001:23:00.0)" = "(null)" ]
	rm -r "$ROOT/proc/4242"
	gv apply --live
	assert_success
	[ -e "$ROOT/run/gpuvm/pinned/0001:23:00.0" ]
	conf mode=container
	gv apply --live
	assert_success
	[ -z "$(ls "$ROOT/run/gpuvm/pinned")" ]
}
