#!/usr/bin/env bats
# shellcheck disable=SC2154 # $stderr and $output are set by bats' run
# The fixture builder (tests/fixture/lib.sh, tests/fixture/mkfixture) lays out
# trees the way the kernel does. Run: bats tests/bats/fixture.bats

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

FX="$BATS_TEST_DIRNAME/../fixture"

# Build every scenario once for the whole file (read only in the tests).
setup_file() {
	export FXS="$BATS_FILE_TMPDIR/sc"
	mkdir -p "$FXS"
	local s
	for s in workstation noiommu gpu-nic two-gpus sriov domain2 vfio-stale hgx8 hgx8-sriov hgx8-pairs; do
		"$BATS_TEST_DIRNAME/../fixture/mkfixture" "$FXS/$s" "$s"
	done
	"$BATS_TEST_DIRNAME/../fixture/mkfixture" "$FXS/synthetic" synthetic 120
}

setup() {
	# shellcheck source=../fixture/lib.sh
	. "$FX/lib.sh"
	R="$BATS_TEST_TMPDIR/root"
}

nfuncs() { find "$1/sys/bus/pci/devices" -mindepth 1 -maxdepth 1 | wc -l; }
ngroups() { find "$1/sys/kernel/iommu_groups" -mindepth 1 -maxdepth 1 | wc -l; }
# physical path of a directory (BATS_TEST_TMPDIR may sit under a symlink)
phys() { (cd -P "$1" && pwd -P); }

# --- mkfixture ----------------------------------------------------------------

@test "mkfixture list names every scenario" {
	run "$FX/mkfixture" list
	assert_success
	for s in workstation hgx8 gpu-nic two-gpus sriov domain2 noiommu vfio-stale synthetic hgx8-sriov hgx8-pairs; do
		assert_line "$s"
	done
}

@test "mkfixture refuses a non-empty directory, an unknown scenario, no arguments" {
	mkdir -p "$R" && touch "$R/x"
	run "$FX/mkfixture" "$R" workstation
	assert_failure
	assert_output --partial "not empty"
	run "$FX/mkfixture" "$BATS_TEST_TMPDIR/new" nosuch
	assert_failure
	assert_output --partial "unknown scenario"
	run "$FX/mkfixture"
	assert_failure
	run "$FX/mkfixture" "$BATS_TEST_TMPDIR/s" synthetic
	assert_failure
}

@test "mkfixture builds into an existing empty directory and leaves no queue file" {
	mkdir -p "$R"
	run "$FX/mkfixture" "$R" gpu-nic
	assert_success
	assert [ ! -e "$R/.fx-queue.cpio" ]
	assert [ -d "$R/sys/bus/pci/devices/0000:01:00.0" ]
}

@test "every scenario has its number of functions and groups" {
	local s want
	for s in workstation:40:29 noiommu:40:0 gpu-nic:12:5 two-gpus:15:6 sriov:15:12 \
		domain2:14:9 vfio-stale:11:7 hgx8:300:275 hgx8-sriov:428:403 hgx8-pairs:300:271 synthetic:120:105; do
		want="${s#*:}"
		run nfuncs "$FXS/${s%%:*}"
		assert_output "${want%%:*}"
		run ngroups "$FXS/${s%%:*}"
		assert_output "${want#*:}"
	done
}

@test "synthetic N has exactly N valid addresses, one GPU slot per 40 functions" {
	local n
	for n in 1 39 41 1002; do
		"$FX/mkfixture" "$BATS_TEST_TMPDIR/s$n" synthetic $n
		run nfuncs "$BATS_TEST_TMPDIR/s$n"
		assert_output "$n"
	done
	# domain 0000 holds 1001 functions (25 GPU slots), the next starts domain 0001
	local d="$BATS_TEST_TMPDIR/s1002/sys/bus/pci/devices"
	run bash -c "ls '$d' | grep -c '^0000:'"
	assert_output 1001
	run ls "$BATS_TEST_TMPDIR/s1002/sys/devices/pci0001:00"
	assert_output "0001:00:00.0"
	run bash -c "ls '$d' | grep -Evc '^[0-9a-f]{4}:[0-9a-f]{2}:[01][0-9a-f]\.[0-7]$'"
	assert_output 0
	run bash -c "grep -l '^0x030000$' '$d'/0000:*/class | wc -l"
	assert_output 25
	run bash -c "grep -l '^0x040300$' '$d'/0000:*/class | wc -l"
	assert_output 25
}

# --- links, as the kernel lays them out -------------------------------------------

@test "bus/pci/devices links are relative and resolve under sys/devices" {
	local s a t n
	for s in workstation hgx8 domain2 sriov; do
		n=0
		while read -r a t; do
			n=$((n + 1))
			[[ $t == ../../../devices/pci*/"$a" ]] || fail "$a -> $t"
			[ -d "$FXS/$s/sys/bus/pci/devices/$a" ] || fail "$a does not resolve"
			[ "$FXS/$s/sys/bus/pci/devices/$a" -ef "$FXS/$s/sys/${t#../../../}" ] || fail "$a"
		done < <(find "$FXS/$s/sys/bus/pci/devices" -mindepth 1 -printf '%f %l\n')
		[ "$n" -eq "$(nfuncs "$FXS/$s")" ]
	done
}

@test "a function behind a bridge nests under the bridge's directory" {
	local root
	root=$(phys "$FXS/workstation")
	assert [ -d "$root/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0" ]
	run readlink "$FXS/workstation/sys/bus/pci/devices/0000:01:00.0"
	assert_output "../../../devices/pci0000:00/0000:00:01.0/0000:01:00.0"
	run readlink "$FXS/workstation/sys/bus/pci/devices/0000:00:1f.3"
	assert_output "../../../devices/pci0000:00/0000:00:1f.3"
	run readlink "$FXS/workstation/sys/bus/pci/devices/0000:01:00.0/subsystem"
	assert_output "../../../../bus/pci"
	# three levels: root port, switch upstream, downstream, GPU
	run readlink "$FXS/two-gpus/sys/bus/pci/devices/0000:04:00.0"
	assert_output "../../../devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:10.0/0000:04:00.0"
}

@test "iommu_group links resolve both ways, with the right number of ../" {
	local root
	root=$(phys "$FXS/workstation")
	run readlink "$FXS/workstation/sys/bus/pci/devices/0000:01:00.0/iommu_group"
	assert_output "../../../../kernel/iommu_groups/2"
	run readlink "$FXS/workstation/sys/bus/pci/devices/0000:00:01.0/iommu_group"
	assert_output "../../../kernel/iommu_groups/1"
	run readlink -f "$FXS/workstation/sys/bus/pci/devices/0000:01:00.0/iommu_group"
	assert_output "$root/sys/kernel/iommu_groups/2"
	run ls "$FXS/workstation/sys/kernel/iommu_groups/2/devices"
	assert_output "$(printf '0000:01:00.%s\n' 0 1 2 3)"
	run readlink -f "$FXS/workstation/sys/kernel/iommu_groups/2/devices/0000:01:00.3"
	assert_output "$root/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.3"
	run cat "$FXS/workstation/sys/kernel/iommu_groups/2/type"
	assert_output "DMA-FQ"
	# every group member points back at its group
	local g d n=0
	for g in "$FXS"/hgx8/sys/kernel/iommu_groups/*; do
		for d in "$g"/devices/*; do
			[ "$d/iommu_group" -ef "$g" ] || fail "$d"
			n=$((n + 1))
		done
	done
	# ... and every function with a group is listed in it (292 of hgx8's 300 functions have one)
	assert_equal "$n" "$(find "$FXS"/hgx8/sys/devices -name iommu_group | wc -l)"
	[ "$n" -eq 292 ]
}

@test "the IOMMU unit is in /sys/class/iommu and linked from each device" {
	local root
	root=$(phys "$FXS/workstation")
	run readlink "$FXS/workstation/sys/class/iommu/dmar0"
	assert_output "../../devices/virtual/iommu/dmar0"
	assert [ -d "$FXS/workstation/sys/class/iommu/dmar0/intel-iommu" ]
	run readlink -f "$FXS/workstation/sys/bus/pci/devices/0000:01:00.0/iommu"
	assert_output "$root/sys/devices/virtual/iommu/dmar0"
	run readlink -f "$FXS/workstation/sys/class/iommu/dmar0/devices/0000:01:00.0"
	assert_output "$root/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0"
	root=$(phys "$FXS/hgx8")
	run readlink "$FXS/hgx8/sys/class/iommu/ivhd0"
	assert_output "../../devices/pci0000:00/0000:00:00.2/iommu/ivhd0"
	run readlink -f "$FXS/hgx8/sys/class/iommu/ivhd0"
	assert_output "$root/sys/devices/pci0000:00/0000:00:00.2/iommu/ivhd0"
	# the AMD IOMMU's own PCI function exists and has no group
	assert [ -e "$FXS/hgx8/sys/bus/pci/devices/0000:00:00.2/vendor" ]
	assert [ ! -e "$FXS/hgx8/sys/bus/pci/devices/0000:00:00.2/iommu_group" ]
}

@test "driver links resolve both ways; driver directories have bind, unbind, new_id, remove_id" {
	local root f
	root=$(phys "$FXS/workstation")
	run readlink "$FXS/workstation/sys/bus/pci/devices/0000:01:00.0/driver"
	assert_output "../../../../bus/pci/drivers/nouveau"
	run readlink -f "$FXS/workstation/sys/bus/pci/devices/0000:01:00.0/driver"
	assert_output "$root/sys/bus/pci/drivers/nouveau"
	run readlink "$FXS/workstation/sys/bus/pci/drivers/nouveau/0000:01:00.0"
	assert_output "../../../../devices/pci0000:00/0000:00:01.0/0000:01:00.0"
	run readlink -f "$FXS/workstation/sys/bus/pci/devices/0000:01:00.3/driver"
	assert_output "$root/sys/bus/pci/drivers/nvidia-gpu"
	for f in bind unbind new_id remove_id; do
		assert [ -f "$FXS/workstation/sys/bus/pci/drivers/snd_hda_intel/$f" ]
		assert [ ! -L "$FXS/workstation/sys/bus/pci/drivers/snd_hda_intel/$f" ]
	done
	run readlink -f "$FXS/workstation/sys/bus/pci/drivers/nvidia-gpu/module"
	assert_output "$root/sys/module/i2c_nvidia_gpu"
	run grep -c '^i2c_nvidia_gpu ' "$FXS/workstation/proc/modules"
	assert_output 1
	# built in: no module link
	assert [ ! -e "$FXS/workstation/sys/bus/pci/drivers/pcieport/module" ]
	# an unbound function has no driver link and enable 0
	assert [ ! -e "$FXS/workstation/sys/bus/pci/devices/0000:00:08.0/driver" ]
	run cat "$FXS/workstation/sys/bus/pci/devices/0000:00:08.0/enable"
	assert_output 0
}

# --- attribute formats ----------------------------------------------------------

@test "attributes are formatted as pci-sysfs.c does" {
	local d="$FXS/workstation/sys/bus/pci/devices/0000:01:00.0"
	run cat "$d/vendor"
	assert_output "0x10de"
	run cat "$d/device"
	assert_output "0x1e87"
	run cat "$d/class"
	assert_output "0x030000"
	run cat "$d/revision"
	assert_output "0xa1"
	run cat "$d/subsystem_vendor"
	assert_output "0x1458"
	run cat "$d/subsystem_device"
	assert_output "0x37a8"
	run cat "$d/modalias"
	assert_output "pci:v000010DEd00001E87sv00001458sd000037A8bc03sc00i00"
	run cat "$d/driver_override"
	assert_output "(null)"
	run cat "$d/boot_vga"
	assert_output 1
	run cat "$d/numa_node"
	assert_output -1
	run cat "$d/current_link_speed"
	assert_output "16.0 GT/s PCIe"
	run cat "$d/uevent"
	assert_output "$(printf '%s\n' DRIVER=nouveau PCI_CLASS=30000 PCI_ID=10DE:1E87 \
		PCI_SUBSYS_ID=1458:37A8 PCI_SLOT_NAME=0000:01:00.0 \
		MODALIAS=pci:v000010DEd00001E87sv00001458sd000037A8bc03sc00i00)"
	# every attribute ends in a newline
	run tail -c1 "$d/vendor"
	assert_output ""
	[ "$(tail -c1 "$d/vendor" | od -An -c | tr -d ' ')" = '\n' ]
	# modalias format over a whole tree
	run bash -c "cat '$FXS'/hgx8/sys/bus/pci/devices/*/modalias | grep -Evc '^pci:v[0-9A-F]{8}d[0-9A-F]{8}sv[0-9A-F]{8}sd[0-9A-F]{8}bc[0-9A-F]{2}sc[0-9A-F]{2}i[0-9A-F]{2}$'"
	assert_output 0
	# class without leading zeros, upper case, in uevent
	run grep '^PCI_CLASS=' "$FXS/workstation/sys/bus/pci/devices/0000:01:00.2/uevent"
	assert_output "PCI_CLASS=C0330"
	run grep -c DRIVER= "$FXS/workstation/sys/bus/pci/devices/0000:00:08.0/uevent"
	assert_output 0
}

@test "boot_vga exists only on VGA-class functions" {
	assert [ -e "$FXS/workstation/sys/bus/pci/devices/0000:00:02.0/boot_vga" ]
	run cat "$FXS/workstation/sys/bus/pci/devices/0000:00:02.0/boot_vga"
	assert_output 0
	assert [ ! -e "$FXS/workstation/sys/bus/pci/devices/0000:01:00.1/boot_vga" ]
	assert [ ! -e "$FXS/hgx8/sys/bus/pci/devices/0000:03:00.0/boot_vga" ] # 3D controller
	run bash -c "grep -l '^1$' '$FXS'/hgx8/sys/bus/pci/devices/*/boot_vga"
	assert_output "$FXS/hgx8/sys/bus/pci/devices/0000:6b:00.0/boot_vga"
}

@test "resource has 13 lines for an endpoint and 17 for a bridge, kernel format" {
	local d="$FXS/workstation/sys/bus/pci/devices"
	run wc -l <"$d/0000:01:00.0/resource"
	assert_output 13
	run wc -l <"$d/0000:00:01.0/resource"
	assert_output 17
	run grep -Evc '^0x[0-9a-f]{16} 0x[0-9a-f]{16} 0x[0-9a-f]{16}$' "$d/0000:01:00.0/resource"
	assert_output 0
	# GPU: 16M BAR0, 256M prefetchable 64-bit BAR1, 32M BAR3, I/O BAR5, ROM
	local s e f
	read -r s e f < <(sed -n 1p "$d/0000:01:00.0/resource")
	assert_equal $((e - s + 1)) $((16 << 20))
	assert_equal "$f" 0x0000000000040200
	read -r s e f < <(sed -n 2p "$d/0000:01:00.0/resource")
	assert_equal $((e - s + 1)) $((256 << 20))
	assert_equal "$f" 0x000000000014220c
	read -r s e f < <(sed -n 4p "$d/0000:01:00.0/resource")
	assert_equal $((e - s + 1)) $((32 << 20))
	read -r s e f < <(sed -n 6p "$d/0000:01:00.0/resource")
	assert_equal $((f & 0x100)) 256
}

@test "config space: 256 bytes, ids, class, header type, BARs" {
	local c="$FXS/workstation/sys/bus/pci/devices/0000:01:00.0/config"
	run stat -c %s "$c"
	assert_output 256
	run od -An -tx1 -N16 "$c"
	assert_output " de 10 87 1e 06 04 10 00 a1 00 00 03 10 00 80 00"
	# subsystem ids at 0x2c
	run od -An -tx1 -j44 -N4 "$c"
	assert_output " 58 14 a8 37"
	# BAR0 at 0x10 holds the address from resource
	local s e f
	read -r s e f <"$FXS/workstation/sys/bus/pci/devices/0000:01:00.0/resource"
	run od -An -tx4 --endian=little -j16 -N4 "$c"
	assert_output " $(printf '%08x' $((s & 0xffffffff)))"
	# bridge: header type 1
	run od -An -tx1 -j14 -N1 "$FXS/workstation/sys/bus/pci/devices/0000:00:01.0/config"
	assert_output " 01"
	# a function without siblings: header type 0
	run od -An -tx1 -j14 -N1 "$FXS/workstation/sys/bus/pci/devices/0000:02:00.0/config"
	assert_output " 00"
	# PCIe capability at 0x40: endpoint (type 0), root port (type 4)
	run od -An -tx1 -j64 -N4 "$c"
	assert_output " 10 00 02 00"
	run od -An -tx1 -j64 -N4 "$FXS/workstation/sys/bus/pci/devices/0000:00:01.0/config"
	assert_output " 10 00 42 00"
}

# --- scenarios ----------------------------------------------------------------

@test "workstation: RTX 2080 slot with audio, USB, UCSI in one group, on their drivers" {
	local d="$FXS/workstation/sys/bus/pci/devices" f drv
	for f in 0:nouveau 1:snd_hda_intel 2:xhci_hcd 3:nvidia-gpu; do
		drv=$(readlink "$d/0000:01:00.${f%%:*}/driver")
		assert_equal "${drv##*/}" "${f#*:}"
		assert_equal "$(readlink "$d/0000:01:00.${f%%:*}/iommu_group")" "../../../../kernel/iommu_groups/2"
	done
	run cat "$d/0000:01:00.2/class" "$d/0000:01:00.3/class"
	assert_output "$(printf '0x0c0330\n0x0c8000')"
	run cat "$FXS/workstation/proc/cmdline"
	assert_output --partial "intel_iommu=on"
	run grep -c 'vendor_id.*GenuineIntel' "$FXS/workstation/proc/cpuinfo"
	assert_output 4
	run grep -c ' vmx ' "$FXS/workstation/proc/cpuinfo"
	assert_output 4
}

@test "noiommu: no IOMMU unit, no groups, no iommu_group links" {
	run ls -A "$FXS/noiommu/sys/class/iommu"
	assert_output ""
	run ls -A "$FXS/noiommu/sys/kernel/iommu_groups"
	assert_output ""
	run bash -c "ls -d '$FXS'/noiommu/sys/bus/pci/devices/*/iommu_group 2>/dev/null | wc -l"
	assert_output 0
	run bash -c "ls -d '$FXS'/noiommu/sys/bus/pci/devices/*/iommu 2>/dev/null | wc -l"
	assert_output 0
	run cat "$FXS/noiommu/proc/cmdline"
	assert_success
	refute_output --partial "iommu"
	assert [ -d "$FXS/noiommu/sys/bus/pci/devices/0000:01:00.0" ]
}

@test "gpu-nic: GPU, audio, NIC and both bridges in group 1" {
	run ls "$FXS/gpu-nic/sys/kernel/iommu_groups/1/devices"
	assert_output "$(printf '%s\n' 0000:00:1c.0 0000:00:1c.4 0000:01:00.0 0000:01:00.1 0000:02:00.0)"
	run cat "$FXS/gpu-nic/sys/bus/pci/devices/0000:02:00.0/class"
	assert_output 0x020000
	run readlink "$FXS/gpu-nic/sys/bus/pci/devices/0000:02:00.0/driver"
	assert_output "../../../../bus/pci/drivers/igb"
}

@test "two-gpus: two GPUs, their audio and the switch ports in group 2" {
	run ls "$FXS/two-gpus/sys/kernel/iommu_groups/2/devices"
	assert_output "$(printf '%s\n' 0000:01:00.0 0000:02:08.0 0000:02:10.0 0000:03:00.0 0000:03:00.1 0000:04:00.0 0000:04:00.1)"
	run ls "$FXS/two-gpus/sys/kernel/iommu_groups/1/devices"
	assert_output 0000:00:01.0
}

@test "sriov: PF with 16 total VFs, 4 VFs with physfn links, own groups, no driver" {
	local root pf="$FXS/sriov/sys/bus/pci/devices/0000:41:00.0" i vf
	root=$(phys "$FXS/sriov")
	run cat "$pf/sriov_totalvfs" "$pf/sriov_numvfs" "$pf/sriov_vf_device"
	assert_output "$(printf '16\n4\n26b9')"
	for i in 0 1 2 3; do
		vf="$FXS/sriov/sys/bus/pci/devices/0000:41:00.$((i + 4))"
		run readlink "$vf/physfn"
		assert_output "../0000:41:00.0"
		run readlink -f "$vf/physfn"
		assert_output "$root/sys/devices/pci0000:40/0000:40:01.1/0000:41:00.0"
		run readlink -f "$pf/virtfn$i"
		assert_output "$root/sys/devices/pci0000:40/0000:40:01.1/0000:41:00.$((i + 4))"
		assert [ ! -e "$vf/driver" ]
		assert_equal "$(readlink "$vf/iommu_group")" "../../../../kernel/iommu_groups/$((i + 6))"
		run ls "$FXS/sriov/sys/kernel/iommu_groups/$((i + 6))/devices"
		assert_output "0000:41:00.$((i + 4))"
		# a VF reads ffff in config space; sysfs still says 0x10de
		run od -An -tx1 -N4 "$vf/config"
		assert_output " ff ff ff ff"
		run cat "$vf/vendor"
		assert_output 0x10de
	done
	assert [ ! -e "$pf/physfn" ]
}

@test "domain2: 5-digit domain 10000 with its own root bus" {
	local root
	root=$(phys "$FXS/domain2")
	run readlink "$FXS/domain2/sys/bus/pci/devices/10000:01:00.0"
	assert_output "../../../devices/pci10000:00/10000:00:06.0/10000:01:00.0"
	run readlink -f "$FXS/domain2/sys/bus/pci/devices/10000:01:00.1/iommu_group"
	assert_output "$root/sys/kernel/iommu_groups/8"
	run grep PCI_SLOT_NAME "$FXS/domain2/sys/bus/pci/devices/10000:01:00.0/uevent"
	assert_output "PCI_SLOT_NAME=10000:01:00.0"
	run cat "$FXS/domain2/sys/bus/pci/devices/0000:01:00.0/device"
	assert_output 0x2204
}

@test "vfio-stale: GPU and audio on vfio-pci with driver_override vfio-pci" {
	local d="$FXS/vfio-stale/sys/bus/pci/devices" f
	for f in 0000:01:00.0 0000:01:00.1; do
		run cat "$d/$f/driver_override"
		assert_output vfio-pci
		run readlink "$d/$f/driver"
		assert_output "../../../../bus/pci/drivers/vfio-pci"
		run grep -c DRIVER=vfio-pci "$d/$f/uevent"
		assert_output 1
	done
	assert [ -d "$FXS/vfio-stale/sys/module/vfio_pci" ]
	run cat "$d/0000:01:00.0/boot_vga" "$d/0000:00:02.0/boot_vga"
	assert_output "$(printf '0\n1')"
}

@test "hgx8: 8 H100 on nvidia in groups of their own, 4 NVSwitches, two segments" {
	local d="$FXS/hgx8/sys/bus/pci/devices" n=0 f v i c g
	for f in "$d"/*; do
		read -r v <"$f/vendor"
		read -r i <"$f/device"
		[ "$v:$i" = "0x10de:0x2330" ] || continue
		n=$((n + 1))
		read -r c <"$f/class"
		assert_equal "$c" 0x030200
		[ "$f/driver" -ef "$FXS/hgx8/sys/bus/pci/drivers/nvidia" ] || fail "$f: driver"
		g=("$f"/iommu_group/devices/*)
		assert_equal "${g[*]##*/}" "${f##*/}"
	done
	assert_equal $n 8
	run bash -c "grep -l '^0x068000$' '$d'/*/class | wc -l"
	assert_output 4
	run bash -c "ls '$d' | grep -c '^0001:'"
	assert [ "$output" -gt 100 ]
	run cat "$d/0001:63:00.0/device" "$d/0001:6f:00.0/device"
	assert_output "$(printf '0x2330\n0x22a3')"
	run bash -c "grep -l AuthenticAMD '$FXS/hgx8/proc/cpuinfo'"
	assert_success
	run grep -c ' svm ' "$FXS/hgx8/proc/cpuinfo"
	assert_output 4
}

@test "hgx8-pairs: the GPUs two a group, each pair alone in it; the rest as hgx8" {
	local g
	for g in 8:0000:03:00.0:0000:23:00.0 71:0000:43:00.0:0000:63:00.0 \
		134:0001:03:00.0:0001:23:00.0 197:0001:43:00.0:0001:63:00.0; do
		run ls "$FXS/hgx8-pairs/sys/kernel/iommu_groups/${g%%:*}/devices"
		assert_output "$(printf '%s\n%s' "$(echo "$g" | cut -d: -f2-4)" "$(echo "$g" | cut -d: -f5-7)")"
	done
	run diff <(fx_ls "$FXS/hgx8" | grep -v ' 10de:2330 ' | cut -d' ' -f1,2,3,5) \
		<(fx_ls "$FXS/hgx8-pairs" | grep -v ' 10de:2330 ' | cut -d' ' -f1,2,3,5)
	assert_success
}

@test "hgx8-sriov: 16 VFs on each of the 8 GPUs" {
	local d="$FXS/hgx8-sriov/sys/bus/pci/devices"
	run bash -c "ls -d '$d'/*/physfn | wc -l"
	assert_output $((8 * 16 + 8 * 8)) # GPU VFs + ConnectX VFs
	run cat "$d/0000:03:00.0/sriov_numvfs"
	assert_output 16
	run readlink "$d/0000:03:02.3/physfn"
	assert_output "../0000:03:00.0"
	run readlink "$d/0000:03:00.0/virtfn15"
	assert_output "../0000:03:02.3"
}

# --- lib.sh functions -----------------------------------------------------------------

@test "fx_init: skeleton, defaults and options" {
	fx_init "$R"
	local f
	for f in sys/devices sys/bus/pci/devices sys/bus/pci/drivers sys/kernel/iommu_groups sys/class/iommu sys/module etc run dev; do
		assert [ -d "$R/$f" ]
	done
	assert [ -f "$R/sys/bus/pci/drivers_probe" ]
	assert [ ! -s "$R/sys/bus/pci/drivers_probe" ]
	run cat "$R/proc/cmdline"
	assert_output "BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro quiet"
	run cat "$R/proc/sys/kernel/osrelease"
	assert_output "6.1.0-99-amd64"
	run ls -A "$R/sys/class/iommu"
	assert_output ""
	run grep -c "^processor" "$R/proc/cpuinfo"
	assert_output 4
	run grep -c ' : 0000:' "$R/proc/iomem"
	assert_output 0
	assert [ -f "$R/lib/modules/6.1.0-99-amd64/modules.alias" ]

	rm -rf "$R"
	fx_init "$R" --cpu arm --iommu smmu --kver 6.8.0-1-arm64 --cmdline "console=ttyAMA0" --vfio builtin
	run grep -c "CPU implementer.*: 0x41" "$R/proc/cpuinfo"
	assert_output 4
	run grep -c vendor_id "$R/proc/cpuinfo"
	assert_output 0
	run cat "$R/proc/cmdline"
	assert_output console=ttyAMA0
	run ls "$R/sys/class/iommu"
	assert_output smmu3.0x0000000012000000
	run grep -c vfio-pci.ko "$R/lib/modules/6.8.0-1-arm64/modules.builtin"
	assert_output 1

	rm -rf "$R"
	fx_init "$R" --cpu amd --iommu amd
	run grep -c AuthenticAMD "$R/proc/cpuinfo"
	assert_output 4
	assert [ -d "$R/sys/class/iommu/ivhd0/" ]

	run fx_init "$R" --iommu bogus
	assert_failure
}

@test "fx_pci: defaults, root bus placement, options" {
	fx_init "$R" --iommu intel
	fx_pci "$R" 0000:00:02.0 8086 4680 030000
	assert [ -d "$R/sys/devices/pci0000:00/0000:00:02.0" ]
	run cat "$R/sys/devices/pci0000:00/0000:00:02.0/boot_vga" "$R/sys/devices/pci0000:00/0000:00:02.0/driver_override"
	assert_output "$(printf '0\n(null)')"
	assert [ ! -e "$R/sys/devices/pci0000:00/0000:00:02.0/iommu_group" ]
	# upper-case input, 0x prefixes, a bus other than 00 without --parent
	fx_pci "$R" 0000:3A:00.0 0x10DE 0x2330 0x030200 --group 7 --group-type identity --override vfio-pci --revision A1 --subsys 10de:16C1 --numa 1
	local d="$R/sys/devices/pci0000:3a/0000:3a:00.0"
	assert [ -d "$d" ]
	run cat "$d/vendor" "$d/device" "$d/class" "$d/revision" "$d/subsystem_device" "$d/driver_override" "$d/numa_node" "$R/sys/kernel/iommu_groups/7/type"
	assert_output "$(printf '%s\n' 0x10de 0x2330 0x030200 0xa1 0x16c1 vfio-pci 1 identity)"
	# --driver creates the driver directory once; a second device joins it
	fx_pci "$R" 0000:3b:00.0 10de 2330 030200 --driver nvidia --group 8
	fx_pci "$R" 0000:3c:00.0 10de 2330 030200 --driver nvidia --group 9
	run ls "$R/sys/bus/pci/drivers/nvidia"
	assert_output "$(printf '%s\n' 0000:3b:00.0 0000:3c:00.0 bind module new_id remove_id uevent unbind)"
	run grep -c '^nvidia ' "$R/proc/modules"
	assert_output 1
	# --bar overrides a resource line
	fx_pci "$R" 0000:3d:00.0 10de 2330 030200 --bar 1:0x38000000000:0x2000000000
	run sed -n 2p "$R/sys/bus/pci/devices/0000:3d:00.0/resource"
	assert_output "0x0000038000000000 0x0000039fffffffff 0x000000000014220c"
	# --multi sets the multi-function bit on function 0
	fx_pci "$R" 0000:3e:00.0 10de 2204 030000 --multi
	run od -An -tx1 -j14 -N1 "$R/sys/bus/pci/devices/0000:3e:00.0/config"
	assert_output " 80"
}

@test "fx_pci: bad input is refused with a message" {
	fx_init "$R"
	run fx_pci "$R" 0000:01:00 10de 2204 030000
	assert_failure
	assert_output --partial "bad PCI address"
	run fx_pci "$R" 0000:01:20.0 10de 2204 030000
	assert_failure
	run fx_pci "$R" 0000:01:00.8 10de 2204 030000
	assert_failure
	run fx_pci "$R" 0000:01:00.0 10de 22040 030000
	assert_failure
	assert_output --partial "device"
	run fx_pci "$R" 0000:01:00.0 10de 2204 0300
	assert_failure
	run fx_pci "$R" 0000:01:00.0 10de 2204 030000 --parent 0000:00:01.0
	assert_failure
	assert_output --partial "no PCI function 0000:00:01.0"
	run fx_pci "$R" 0000:01:00.0 10de 2204 030000 --bogus x
	assert_failure
	run fx_pci "$BATS_TEST_TMPDIR/nothing" 0000:01:00.0 10de 2204 030000
	assert_failure
}

@test "fx_pci: a parent or PF built by another shell (mkfixture) is found from the tree" {
	"$FX/mkfixture" "$R" workstation
	fx_pci "$R" 0000:08:00.0 10de 2204 030000 --parent 0000:00:1d.0 --group 40 --driver nouveau
	run readlink "$R/sys/bus/pci/devices/0000:08:00.0"
	assert_output "../../../devices/pci0000:00/0000:00:1d.0/0000:08:00.0"
	run readlink "$R/sys/bus/pci/devices/0000:08:00.0/iommu"
	assert_output "../../../virtual/iommu/dmar0"
	"$FX/mkfixture" "$BATS_TEST_TMPDIR/s" sriov
	fx_pci "$BATS_TEST_TMPDIR/s" 0000:41:01.0 10de 26b9 030200 --physfn 0000:41:00.0 --group 30
	run readlink "$BATS_TEST_TMPDIR/s/sys/bus/pci/devices/0000:41:00.0/virtfn4"
	assert_output "../0000:41:01.0"
	run cat "$BATS_TEST_TMPDIR/s/sys/bus/pci/devices/0000:41:00.0/sriov_numvfs"
	assert_output 5
}

@test "fx_begin/fx_commit batch the writes" {
	fx_init "$R"
	fx_begin "$R"
	fx_pci "$R" 0000:00:01.0 8086 460d 060400 --driver pcieport
	fx_pci "$R" 0000:01:00.0 10de 2204 030000 --parent 0000:00:01.0
	assert [ ! -e "$R/sys/bus/pci/devices/0000:01:00.0" ]
	assert [ -s "$R/.fx-queue.cpio" ]
	fx_commit "$R"
	assert [ ! -e "$R/.fx-queue.cpio" ]
	run readlink "$R/sys/bus/pci/devices/0000:01:00.0"
	assert_output "../../../devices/pci0000:00/0000:00:01.0/0000:01:00.0"
}

@test "fx_config, fx_alias, fx_iomem, fx_iomem_bars, fx_driver, fx_module, fx_ls" {
	fx_init "$R" --kver 6.8.0-40-generic
	fx_config "$R" "mode=vm-passthrough"
	run cat "$R/etc/gpuvm/gpuvm.conf"
	assert_output "mode=vm-passthrough"
	fx_config "$R" "$(printf '# label mirror\nnvidia.com/gpu.workload.config=vm-vgpu\n')"
	run cat "$R/etc/gpuvm/gpuvm.conf"
	assert_line --index 1 "nvidia.com/gpu.workload.config=vm-vgpu"

	fx_alias "$R" 'alias vfio_pci:v000010DEd00002342sv*sd*bc*sc*i* nvgrace_gpu_vfio_pci' 'alias x y'
	run tail -n2 "$R/lib/modules/6.8.0-40-generic/modules.alias"
	assert_output "$(printf '%s\n' 'alias vfio_pci:v000010DEd00002342sv*sd*bc*sc*i* nvgrace_gpu_vfio_pci' 'alias x y')"

	fx_iomem "$R" "  80000000-8fffffff : 0000:01:00.0"
	run tail -n1 "$R/proc/iomem"
	assert_output "  80000000-8fffffff : 0000:01:00.0"

	fx_pci "$R" 0000:01:00.0 10de 2204 030000 --bar 0:0xfb000000:0x1000000:0x40200 --bar 1:0xe0000000:0x10000000 --bar 3:0:0
	fx_iomem_bars "$R" 0000:01:00.0 BOOTFB
	run tail -n3 "$R/proc/iomem"
	assert_output "$(printf '%s\n' '  fb000000-fbffffff : 0000:01:00.0' '  e0000000-efffffff : 0000:01:00.0' '    e0000000-e07e8fff : BOOTFB')"

	fx_driver "$R" vfio-pci
	assert [ -f "$R/sys/bus/pci/drivers/vfio-pci/bind" ]
	run readlink "$R/sys/bus/pci/drivers/vfio-pci/module"
	assert_output "../../../../module/vfio_pci"
	fx_module "$R" kvm_amd
	run cat "$R/sys/module/kvm_amd/initstate"
	assert_output live

	fx_pci "$R" 0000:00:01.0 8086 460d 060400 --group 3 --driver pcieport
	run fx_ls "$R"
	assert_line "0000:00:01.0 8086:460d 060400 3 pcieport"
	assert_line "0000:01:00.0 10de:2204 030000 - -"
}

@test "library and script are shellcheck-clean POSIX sh" {
	command -v shellcheck >/dev/null || skip "no shellcheck"
	run shellcheck -s sh "$FX/lib.sh" "$FX/mkfixture"
	assert_success
}

@test "the library works in dash as well as bash" {
	command -v dash >/dev/null || skip "no dash"
	run dash -c ". '$FX/lib.sh' && fx_init '$R' --iommu amd && fx_pci '$R' 0000:00:01.1 1022 1483 060400 --group 1 && fx_pci '$R' 0000:01:00.0 10de 2204 030000 --parent 0000:00:01.1 --group 2 --driver nvidia"
	assert_success
	run readlink "$R/sys/bus/pci/devices/0000:01:00.0/iommu_group"
	assert_output "../../../../kernel/iommu_groups/2"
}
