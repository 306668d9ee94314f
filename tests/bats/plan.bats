#!/usr/bin/env bats
# shellcheck disable=SC2154 # $stderr and $output are set by bats' run
# gpuvm plan on fixture trees laid out as the kernel does: the plans DESIGN.md describes.

load helpers

@test "workstation, vm-passthrough: the GPU and its audio, USB and UCSI functions bind as one group" {
	mkfx workstation
	gv --cmdline "gpuvm.mode=vm-passthrough" plan --json
	assert_success
	printf '%s' "$output" | jq -e . >/dev/null
	[ "$(jqr .mode)" = vm-passthrough ]
	[ "$(jqr .mode_source)" = cmdline ]
	[ "$(jqr .iommu.active)" = true ]
	[ "$(jqr .iommu.cpu_vendor)" = intel ]
	for f in 0 1 2 3; do
		[ "$(dev_field 0000:01:00.$f action)" = bind ]
		[ "$(dev_field 0000:01:00.$f target)" = vfio-pci ]
	done
	[ "$(dev_field 0000:01:00.0 role)" = gpu ]
	[ "$(dev_field 0000:01:00.3 role)" = companion ]
	[ "$(dev_field 0000:01:00.0 driver)" = nouveau ]
	[ "$(dev_field 0000:01:00.0 boot_vga)" = true ]
	[ "$(jqr '.groups | length')" = 1 ]
	[ "$(jqr '.groups[0].viable')" = true ]
	[ "$(jqr '.groups[0].type')" = DMA-FQ ]
	[ "$(jqr '.groups[0].members | length')" = 4 ]
	[ "$(jqr '.modules[0].name')" = vfio-pci ]
	[ "$(jqr '.errors | length')" = 0 ]
}

@test "workstation, text plan names the action and the reason" {
	mkfx workstation
	gv --cmdline "gpuvm.mode=vm-passthrough" plan
	assert_success
	assert_output --partial "mode: vm-passthrough (from cmdline)"
	assert_output --regexp "0000:01:00.1 +10de:10f8 0403 +snd_hda_intel +bind +-> vfio-pci +companion of 0000:01:00.0"
	assert_output --partial "viable: 0000:01:00.0 0000:01:00.1 0000:01:00.2 0000:01:00.3"
}

@test "workstation, default mode container: nothing to change" {
	mkfx workstation
	gv --cmdline "" plan --json
	assert_success
	[ "$(jqr .mode)" = container ]
	[ "$(jqr .mode_source)" = default ]
	[ "$(dev_field 0000:01:00.0 action)" = keep ]
}

@test "hgx8: 8 GPUs bound, 4 NVSwitches stay for Fabric Manager; nvswitch=vm takes them too" {
	mkfx hgx8
	gv --cmdline "gpuvm.mode=vm-passthrough" plan --json
	assert_success
	[ "$(jqr '[.devices[] | select(.action == "bind")] | length')" = 8 ]
	[ "$(jqr '[.devices[] | select(.role == "nvswitch" and .action == "skip")] | length')" = 4 ]
	[ "$(jqr .iommu.cpu_vendor)" = amd ]
	[ "$(jqr .selected)" = 8 ]
	gv --cmdline "gpuvm.mode=vm-passthrough gpuvm.nvswitch=vm" plan --json
	assert_success
	[ "$(jqr '[.devices[] | select(.action == "bind")] | length')" = 12 ]
	[ "$(jqr '[.devices[] | select(.role == "bridge" and .action != "skip")] | length')" = 0 ]
}

SHARED="they can only be assigned to one VM together"

@test "hgx8-pairs: a group of two GPUs is viable, counted and warned about; one GPU a group is not" {
	mkfx hgx8-pairs
	gv --cmdline "gpuvm.mode=vm-passthrough" plan --json
	assert_success
	[ "$(jqr '[.devices[] | select(.action == "bind")] | length')" = 8 ]
	[ "$(jqr '.groups | length')" = 4 ]
	[ "$(jqr '.groups[0].id')" = 8 ]
	[ "$(jqr '.groups[0].viable')" = true ]
	[ "$(jqr '.groups[0].gpus')" = 2 ]
	[ "$(jqr '[.groups[] | select(.gpus == 2)] | length')" = 4 ]
	[ "$(jqr '.warnings | length')" = 4 ]
	assert_regex "$(jqr '.warnings[0]')" "^IOMMU group 8 holds 2 GPUs: $SHARED \\(vfio gives a group to one VM whole"
	assert_regex "$stderr" "warning: IOMMU group 197 holds 2 GPUs: $SHARED"
	gv --cmdline "gpuvm.mode=vm-passthrough" plan
	assert_success
	assert_output --partial "  8 (DMA-FQ) viable, 2 GPUs for one VM together: 0000:03:00.0 0000:23:00.0"
	# one GPU a group (hgx8), and a PCIe workstation: no warning, gpus 1
	mkfx hgx8
	gv --cmdline "gpuvm.mode=vm-passthrough" plan --json
	assert_success
	[ "$(jqr '[.groups[] | select(.gpus == 1)] | length')" = 8 ]
	[ "$(jqr '.warnings | length')" = 0 ]
	mkfx workstation
	gv --cmdline "gpuvm.mode=vm-passthrough" plan --json
	assert_success
	[ "$(jqr '.groups[0].gpus')" = 1 ]
	[ "$(jqr '.warnings | length')" = 0 ]
	refute_regex "$stderr" "$SHARED"
}

@test "two-gpus: a PCIe switch without ACS puts both GPUs in one group: the same warning" {
	mkfx two-gpus
	gv --cmdline "gpuvm.mode=vm-passthrough" plan --json
	assert_success
	[ "$(jqr '.groups[0].gpus')" = 2 ]
	assert_regex "$(jqr '.warnings[0]')" "^IOMMU group 2 holds 2 GPUs: $SHARED"
	# excluding one leaves the group not viable: that is the error, no warning on top
	gv --cmdline "gpuvm.mode=vm-passthrough gpuvm.exclude=0000:04:00.0" plan --json
	assert_failure 1
	[ "$(jqr '.groups[0].gpus')" = 1 ]
	[ "$(jqr '.warnings | length')" = 0 ]
}

@test "hgx8: /proc/bus/pci/devices names every function; uevents and IOMMU groups read only where the plan looks" {
	need strace command -v strace
	mkfx hgx8
	t=$BATS_TEST_TMPDIR/trace
	# LeakSanitizer cannot run under ptrace (make sanitize runs this on an ASan build)
	ASAN_OPTIONS=detect_leaks=0 run --separate-stderr strace -f -e trace=open,openat,readlink,readlinkat \
		-o "$t" "$GPUVM" --root "$ROOT" --cmdline "gpuvm.mode=vm-passthrough" plan --json
	assert_success
	flat=$output
	n=$(find "$ROOT/sys/bus/pci/devices" -mindepth 1 -maxdepth 1 | wc -l)
	[ "$n" -eq 300 ]
	[ "$(grep -c 'proc/bus/pci/devices"' "$t")" -eq 1 ]
	# the 12 NVIDIA functions (8 GPUs, 4 NVSwitches), and the 4 whose bus and devfn two
	# domains share with other IDs (0000:6a/6b and 0001:6a/6b): /proc cannot tell them apart
	[ "$(grep -c '/uevent"' "$t")" -eq 16 ]
	grep -q '0000:6a:00.0/uevent"' "$t"
	# a link each, a listing a group
	[ "$(grep -c '/iommu_group"' "$t")" -eq 12 ]
	[ "$(grep -c 'iommu_groups/[0-9]*/devices"' "$t")" -eq 12 ]
	# and every device the plan lists still has its group
	[ "$(jqr '.devices | length')" -eq 12 ]
	[ "$(jqr '[.devices[] | select(.iommu_group == null)] | length')" -eq 0 ]

	# Without /proc/bus/pci/devices (a kernel without CONFIG_PROC_FS): one uevent a
	# function, the same plan.
	rm "$ROOT/proc/bus/pci/devices"
	ASAN_OPTIONS=detect_leaks=0 run --separate-stderr strace -f -e trace=open,openat \
		-o "$t" "$GPUVM" --root "$ROOT" --cmdline "gpuvm.mode=vm-passthrough" plan --json
	assert_success
	[ "$(grep -c '/uevent"' "$t")" -eq "$n" ]
	[ "$output" = "$flat" ]
}

@test "/proc/bus/pci alone where each bus number is one domain's; the listing where not, or where the two disagree" {
	need strace command -v strace
	mkfx workstation
	t=$BATS_TEST_TMPDIR/trace
	ASAN_OPTIONS=detect_leaks=0 run --separate-stderr strace -f -e trace=open,openat \
		-o "$t" "$GPUVM" --root "$ROOT" --cmdline "gpuvm.mode=vm-passthrough" plan --json
	assert_success
	want=$output
	# every function from /proc/bus/pci: the listing of /sys/bus/pci/devices is not read;
	# the GPU's slot (4 functions) is
	[ "$(grep -c 'proc/bus/pci"' "$t")" -eq 1 ]
	[ "$(grep -c 'sys/bus/pci/devices"' "$t")" -eq 0 ]
	[ "$(grep -c '/uevent"' "$t")" -eq 4 ]
	[ "$(jqr '[.devices[] | select(.action == "bind")] | length')" -eq 4 ]

	# a bus directory that names bus 01 in another domain than sysfs has it (a tree out of
	# step with itself): the GPU is not where the file puts it, so the listing decides
	mv "$ROOT/proc/bus/pci/01" "$ROOT/proc/bus/pci/0005:01"
	ASAN_OPTIONS=detect_leaks=0 run --separate-stderr strace -f -e trace=open,openat \
		-o "$t" "$GPUVM" --root "$ROOT" --cmdline "gpuvm.mode=vm-passthrough" plan --json
	assert_success
	grep -q '0005:01:00.0/uevent"' "$t"
	[ "$(grep -c 'sys/bus/pci/devices"' "$t")" -eq 1 ]
	[ "$output" = "$want" ]

	# bus 01 in two domains: the listing says which functions are on it, the same plan
	mkdir "$ROOT/proc/bus/pci/01"
	ASAN_OPTIONS=detect_leaks=0 run --separate-stderr strace -f -e trace=open,openat \
		-o "$t" "$GPUVM" --root "$ROOT" --cmdline "gpuvm.mode=vm-passthrough" plan --json
	assert_success
	[ "$(grep -c 'sys/bus/pci/devices"' "$t")" -eq 1 ]
	[ "$(grep -c '/uevent"' "$t")" -eq 4 ]
	[ "$output" = "$want" ]

	# no bus directories (a tree from before they were kept): the listing, the same plan
	find "$ROOT/proc/bus/pci" -mindepth 1 -type d -exec rm -r {} +
	gv --cmdline "gpuvm.mode=vm-passthrough" plan --json
	assert_success
	[ "$output" = "$want" ]
}

@test "/proc/bus/pci/devices: a line it cannot read, or IDs that disagree, and the uevents decide" {
	mkfx hgx8
	p=$ROOT/proc/bus/pci/devices
	gv --cmdline "gpuvm.mode=vm-passthrough" plan --json
	assert_success
	want=$output
	cp "$p" "$BATS_TEST_TMPDIR/devices"
	# fields without the kernel's padding: the lines are found by their newlines, the same
	sed 's/\t */\t/g' "$BATS_TEST_TMPDIR/devices" >"$p"
	run ! cmp -s "$p" "$BATS_TEST_TMPDIR/devices"
	gv --cmdline "gpuvm.mode=vm-passthrough" plan --json
	assert_success
	[ "$output" = "$want" ]
	cp "$BATS_TEST_TMPDIR/devices" "$p"
	# not its format (a line cut short): every uevent is read, the plan is the same
	printf '03\t10de\n' >>"$p"
	gv --cmdline "gpuvm.mode=vm-passthrough" plan --json
	assert_success
	[ "$output" = "$want" ]
	# a line too long for the buffer
	cp "$BATS_TEST_TMPDIR/devices" "$p"
	head -c 70000 /dev/zero | tr '\0' x >>"$p"
	gv --cmdline "gpuvm.mode=vm-passthrough" plan --json
	assert_success
	[ "$output" = "$want" ]
	# A line that says a NIC is an NVIDIA GPU: its uevent is read and says otherwise, so the
	# plan passes it over as before. (The kernel writes both from one struct pci_dev.)
	sed 's/^\([0-9a-f]\{4\}\t\)15b3/\110de/' "$BATS_TEST_TMPDIR/devices" >"$p"
	run ! cmp -s "$p" "$BATS_TEST_TMPDIR/devices"
	gv --cmdline "gpuvm.mode=vm-passthrough" plan --json
	assert_success
	[ "$output" = "$want" ]
}

# Two domains with the same bus and devfn: 01:00.0 a GPU in both, 02:00.0 a GPU in one and
# a NIC in the other, 03:00.0 a NIC in one only.
mkfx_two_domains() {
	ROOT="$BATS_TEST_TMPDIR/root"
	fx_init "$ROOT" --iommu intel --cmdline "gpuvm.mode=vm-passthrough"
	fx_pci "$ROOT" 0000:01:00.0 10de 2330 030200 --group 1 --driver nvidia
	fx_pci "$ROOT" 0001:01:00.0 10de 2330 030200 --group 2 --driver nvidia
	fx_pci "$ROOT" 0000:02:00.0 8086 1572 020000 --group 3 --driver i40e
	fx_pci "$ROOT" 0001:02:00.0 10de 2330 030200 --group 4 --driver nvidia
	fx_pci "$ROOT" 0000:03:00.0 8086 1572 020000 --group 5 --driver i40e
}

@test "two domains, one bus and devfn: the same IDs in both are trusted, different IDs read from uevents" {
	need strace command -v strace
	mkfx_two_domains
	t=$BATS_TEST_TMPDIR/trace
	ASAN_OPTIONS=detect_leaks=0 run --separate-stderr strace -f -e trace=open,openat \
		-o "$t" "$GPUVM" --root "$ROOT" plan --json
	assert_success
	# 01:00.0: the GPU in both domains; 02:00.0: a GPU in one, a NIC in the other
	[ "$(jqr '[.devices[] | select(.action == "bind") | .address] | join(" ")')" = \
		"0000:01:00.0 0001:01:00.0 0001:02:00.0" ]
	grep -q '0000:02:00.0/uevent"' "$t"
	run ! grep -q '0000:03:00.0/uevent"' "$t"
}

@test "the uevent descriptors close in runs; an inherited one is never closed; no close_range: close" {
	need strace command -v strace
	mkfx hgx8
	t=$BATS_TEST_TMPDIR/trace
	# one uevent a function: the scan without /proc/bus/pci/devices
	rm "$ROOT/proc/bus/pci/devices"
	# fd 9 open across the run, as a descriptor gpuvm did not open: the runs go around it
	ASAN_OPTIONS=detect_leaks=0 run --separate-stderr strace -f -e trace=close,close_range \
		-o "$t" "$GPUVM" --root "$ROOT" --cmdline "gpuvm.mode=vm-passthrough" plan --json 9</dev/null
	assert_success
	expected=$output
	ranges=$(grep -c '^[0-9]* *close_range(' "$t")
	# 300 uevents, at most 64 a batch
	[ "$ranges" -ge 5 ]
	[ "$ranges" -le 20 ]
	run ! grep -q '^[0-9]* *close(9)' "$t"
	awk '/close_range\(/ { sub(/.*close_range\(/, ""); split($0, a, /[,)]/)
		if (a[1] + 0 <= 9 && a[2] + 0 >= 9) bad = 1 } END { exit bad }' "$t"
	# a kernel before 5.9 has no close_range(2): each descriptor is closed, the plan is the same
	ASAN_OPTIONS=detect_leaks=0 run --separate-stderr strace -f -e trace=close,close_range \
		-e inject=close_range:error=ENOSYS -o "$t" "$GPUVM" --root "$ROOT" \
		--cmdline "gpuvm.mode=vm-passthrough" plan --json
	assert_success
	[ "$output" = "$expected" ]
	[ "$(grep -c '^[0-9]* *close(' "$t")" -ge 300 ]
}

@test "hgx8: the BMC's VGA is never selected" {
	mkfx hgx8
	gv --cmdline "gpuvm.mode=vm-passthrough gpuvm.ids=10de:*" plan --json
	assert_success
	[ "$(jqr '[.devices[] | select(.vendor == "1a03")] | length')" = 0 ]
}

@test "gpu-nic: the group is not viable, the NIC is named and never taken, the GPU is held" {
	mkfx gpu-nic
	gv --cmdline "gpuvm.mode=vm-passthrough" plan --json
	assert_failure 1
	[ "$(jqr '.groups[0].viable')" = false ]
	[ "$(jqr '.groups[0].blocked_by[0]')" = 0000:02:00.0 ]
	[ "$(dev_field 0000:02:00.0 action)" = skip ]
	[ "$(dev_field 0000:02:00.0 role)" = blocker ]
	[ "$(dev_field 0000:01:00.0 action)" = hold ]
	dev_field 0000:01:00.0 reason | grep -q "0000:02:00.0 (8086:1533, igb)"
	[ "$(jqr .failed)" = 1 ]
}

@test "gpu-nic with on_error=release from the host config: the GPU stays on its driver" {
	mkfx gpu-nic
	fx_config "$ROOT" "mode=vm-passthrough
on_error=release"
	gv --cmdline "" plan --json
	assert_failure 1
	[ "$(dev_field 0000:01:00.0 action)" = keep ]
	[ "$(jqr .settings.on_error.source)" = "/etc/gpuvm/gpuvm.conf:2" ]
}

@test "two-gpus: two GPUs in one group bind together; excluding one blocks the other" {
	mkfx two-gpus
	gv --cmdline "gpuvm.mode=vm-passthrough" plan --json
	assert_success
	[ "$(jqr '[.devices[] | select(.action == "bind")] | length')" = 4 ]
	[ "$(jqr '.groups | length')" = 1 ]
	gv --cmdline "gpuvm.mode=vm-passthrough gpuvm.exclude=0000:04:00.0" plan --json
	assert_failure 1
	[ "$(dev_field 0000:04:00.0 role)" = excluded ]
	[ "$(jqr '.groups[0].viable')" = false ]
	[ "$(dev_field 0000:03:00.0 action)" = hold ]
}

@test "sriov: VFs are skipped; vm-vgpu reports the SR-IOV method" {
	mkfx sriov
	gv --cmdline "gpuvm.mode=vm-vgpu" plan --json
	assert_success
	[ "$(dev_field 0000:41:00.0 action)" = reserve ]
	[ "$(dev_field 0000:41:00.0 target)" = nvidia ]
	[ "$(dev_field 0000:41:00.0 vgpu)" = sriov ]
	[ "$(dev_field 0000:41:00.0 sriov_totalvfs)" = 16 ]
	[ "$(dev_field 0000:41:00.4 role)" = vf ]
	[ "$(dev_field 0000:41:00.4 action)" = skip ]
}

# The method follows the architecture of the pci.ids name, not sriov_totalvfs alone.
@test "vm-vgpu: the method per architecture (Turing mdev, Ada SR-IOV), unknown without a name" {
	mkfx sriov
	mkdir -p "$ROOT/usr/share/misc"
	printf '%s\n' '10de  NVIDIA Corporation' '	26b9  AD102GL [L40S]' >"$ROOT/usr/share/misc/pci.ids"
	gv --cmdline "gpuvm.mode=vm-vgpu" plan --json
	assert_success
	[ "$(dev_field 0000:41:00.0 vgpu)" = sriov ]
	assert_regex "$(dev_field 0000:41:00.0 reason)" "mode vm-vgpu: Ada, SR-IOV, 16 VFs"
	# A Turing T4 in its place: mediated devices, whatever sriov_totalvfs says.
	printf '%s\n' '10de  NVIDIA Corporation' '	26b9  TU104GL [Tesla T4]' >"$ROOT/usr/share/misc/pci.ids"
	gv --cmdline "gpuvm.mode=vm-vgpu" plan --json
	[ "$(dev_field 0000:41:00.0 vgpu)" = mdev ]
	assert_regex "$(dev_field 0000:41:00.0 reason)" "mode vm-vgpu: Turing, mediated devices"
	rm "$ROOT/usr/share/misc/pci.ids"
	gv --cmdline "gpuvm.mode=vm-vgpu" plan --json
	[ "$(dev_field 0000:41:00.0 vgpu)" = sriov ]
	assert_regex "$(dev_field 0000:41:00.0 reason)" "SR-IOV, 16 VFs; architecture unknown"
}

@test "domain2: a 5-digit PCI domain is read and planned" {
	mkfx domain2
	gv --cmdline "gpuvm.mode=vm-passthrough gpuvm.exclude=0000:01:00.0" plan --json
	assert_success
	[ "$(dev_field 10000:01:00.0 action)" = bind ]
	[ "$(dev_field 10000:01:00.1 action)" = bind ]
	[ "$(dev_field 0000:01:00.0 action)" = skip ]
}

# A domain has up to 8 hex digits ("ffffffff:ff:1f.7" is 16 bytes): such a GPU is found and
# planned, not passed over as a name that does not fit.
mkfx_domain8() {
	ROOT="$BATS_TEST_TMPDIR/root"
	(
		# shellcheck source=tests/fixture/lib.sh
		. "$TOP/tests/fixture/lib.sh"
		fx_init "$ROOT" --cpu intel --iommu intel --kver 6.1.0-99-amd64 --cmdline intel_iommu=on
		fx_pci "$ROOT" 1000000a:00:06.0 8086 464d 060400 --group 7 --driver pcieport
		fx_pci "$ROOT" 1000000a:01:00.0 10de 2684 030000 --parent 1000000a:00:06.0 --group 8 --driver nouveau --multi
		fx_pci "$ROOT" 1000000a:01:00.1 10de 22ba 040300 --parent 1000000a:00:06.0 --group 8 --driver snd_hda_intel
	) >/dev/null
}

@test "an 8-digit PCI domain is read and planned" {
	mkfx_domain8
	gv --cmdline "gpuvm.mode=vm-passthrough" plan --json
	assert_success
	[ "$(dev_field 1000000a:01:00.0 action)" = bind ]
	[ "$(dev_field 1000000a:01:00.1 action)" = bind ]
}

@test "noiommu: vm-passthrough exits 3 and holds the GPU; container does not care" {
	mkfx noiommu
	gv --cmdline "gpuvm.mode=vm-passthrough" plan --json
	assert_failure 3
	[ "$(jqr .iommu.active)" = false ]
	[ "$(jqr .iommu_unusable)" = true ]
	[ "$(dev_field 0000:01:00.0 action)" = hold ]
	gv --cmdline "gpuvm.mode=container" plan
	assert_success
}

@test "vfio-stale: container mode undoes a stale vfio bind" {
	mkfx vfio-stale
	gv --cmdline "gpuvm.mode=container" plan --json
	assert_success
	[ "$(dev_field 0000:01:00.0 action)" = unbind ]
	[ "$(dev_field 0000:01:00.0 driver_override)" = vfio-pci ]
	gv --cmdline "gpuvm.mode=vm-passthrough" plan --json
	[ "$(dev_field 0000:01:00.0 action)" = keep ]
}

# Installed but not configured (the packages' all-comments config, nothing on the boot line):
# container by default, and a vfio bind someone else made (vfio-pci.ids= with a built-in
# vfio-pci, as Ubuntu's kernels have it) is left alone; a mode that a source sets undoes it.
@test "vfio-stale: with no mode set anywhere, a vfio bind is left as it is" {
	mkfx vfio-stale
	mkdir -p "$ROOT/etc/gpuvm"
	cp "$TOP/doc/gpuvm.conf.example" "$ROOT/etc/gpuvm/gpuvm.conf"
	gv --cmdline "" plan --json
	assert_success
	[ "$(jqr .mode)" = container ]
	[ "$(jqr .mode_source)" = default ]
	[ "$(dev_field 0000:01:00.0 action)" = keep ]
	[ "$(dev_field 0000:01:00.1 action)" = keep ]
	gv --cmdline "" plan
	assert_output --partial "left on vfio-pci: no mode is set (no host config, no gpuvm.mode=)"
	printf 'mode=container\n' >"$ROOT/etc/gpuvm/gpuvm.conf"
	gv --cmdline "" plan --json
	[ "$(dev_field 0000:01:00.0 action)" = unbind ]
}

@test "ids= replaces the default match" {
	mkfx workstation
	gv --cmdline "gpuvm.mode=vm-passthrough gpuvm.ids=8086:4680" plan --json
	assert_success
	[ "$(jqr '[.devices[] | select(.role == "gpu")] | length')" = 1 ]
	[ "$(dev_field 0000:00:02.0 action)" = bind ]
	[ "$(dev_field 0000:00:02.0 driver)" = i915 ]
	[ "$(dev_field 0000:01:00.0 action)" = skip ]
}

@test "apply --dry-run prints exactly what plan prints" {
	mkfx hgx8
	gv --cmdline "gpuvm.mode=vm-passthrough" plan --json
	local a="$output"
	gv --cmdline "gpuvm.mode=vm-passthrough" apply --dry-run --json
	assert_success
	[ "$a" = "$output" ]
	[ ! -e "$ROOT/run/gpuvm/state.json" ]
}

@test "status lists the devices and the last state file" {
	mkfx workstation
	gv status --json
	assert_success
	[ "$(jqr .command)" = status ]
	[ "$(jqr .last_apply)" = null ]
	gv --cmdline "gpuvm.mode=vm-passthrough" apply
	gv status --json
	[ "$(jqr .last_apply.result)" = ok ]
	[ "$(jqr .last_apply.mode)" = vm-passthrough ]
	gv status
	assert_output --partial "last apply: /run/gpuvm/state.json"
}

@test "the IOMMU parameters are explained, amd_iommu=on called out" {
	mkfx hgx8
	gv --cmdline "amd_iommu=on iommu=pt intel_iommu=on gpuvm.mode=vm-passthrough" plan --json
	assert_success
	assert_regex "$(jqr '.iommu.params | join("|")')" "amd_iommu=on: not a value the kernel knows"
	assert_regex "$(jqr '.iommu.params | join("|")')" "iommu=pt: host devices use identity mappings"
	assert_regex "$(jqr '.iommu.params | join("|")')" "intel_iommu= is ignored on an AMD CPU"
	# intel_iommu=on: whose default it is, said for the kernels it is true of, not for every host
	mkfx workstation
	gv --cmdline "intel_iommu=on gpuvm.mode=vm-passthrough" plan --json
	assert_regex "$(jqr '.iommu.params[0]')" "^intel_iommu=on: Intel VT-d translation on \\(the default only of a kernel built with CONFIG_INTEL_IOMMU_DEFAULT_ON, or with Debian's CONFIG_INTEL_IOMMU_DEFAULT_ON_INTGPU_OFF, on but for the integrated GPU, as Debian's own kernels since Debian 11 are\\)$"
	refute_regex "$(jqr '.iommu.params | join("|")')" "Debian's kernel has it on by default"
}
