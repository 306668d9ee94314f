#!/usr/bin/env bats
# shellcheck disable=SC2154 # $stderr and $output are set by bats' run
# gpuvm cmdline: the kernel parameters per mode and CPU vendor, and what the running line lacks.

load helpers

@test "intel vm-passthrough" {
	mkfx workstation
	gv --cmdline "ro quiet" cmdline --mode vm-passthrough --cpu intel
	assert_success
	[ "$output" = "intel_iommu=on iommu=pt gpuvm.mode=vm-passthrough" ]
	assert_regex "$stderr" "lacks: intel_iommu=on iommu=pt gpuvm.mode=vm-passthrough"
}

@test "amd never gets amd_iommu=on" {
	mkfx hgx8
	gv cmdline --mode vm-passthrough
	assert_success
	[ "$output" = "iommu=pt gpuvm.mode=vm-passthrough" ]
	gv --cmdline "amd_iommu=on" cmdline --mode vm-vgpu --cpu amd
	[ "$output" = "iommu=pt gpuvm.mode=vm-vgpu" ]
	assert_regex "$stderr" "amd_iommu=on is not a value the kernel knows"
}

@test "container needs nothing but the mode; a stale vfio-pci.ids= is a conflict" {
	mkfx workstation
	gv --cmdline "ro vfio-pci.ids=10de:1e87 gpuvm.mode=container" cmdline --mode container --json
	assert_success
	[ "$(jqr .params)" = "gpuvm.mode=container" ]
	[ "$(jqr .missing)" = "" ]
	assert_regex "$(jqr '.conflicts[0]')" "vfio-pci.ids="
}

@test "nothing missing when the running line has it all (rd.gpuvm counts)" {
	mkfx workstation
	gv --cmdline "root=/dev/sda1 intel_iommu=on iommu=pt rd.gpuvm.mode=vm-passthrough" cmdline --mode vm-passthrough
	assert_success
	[ -z "$stderr" ]
}

@test "intel_iommu=off and a vfio blacklist contradict a VM mode" {
	mkfx workstation
	gv --cmdline "intel_iommu=off module_blacklist=vfio_pci" cmdline --mode vm-passthrough --json
	[ "$(jqr '.conflicts | length')" = 2 ]
	[ "$(jqr .cpu_vendor)" = intel ]
}

# Without --mode the host config (the label mirror) decides the mode: the IOMMU parameters
# alone, whatever the config says, since the label may change it; gpuvm.mode= on the running
# line is named as what keeps the label from taking effect.
@test "without --mode: the IOMMU parameters alone, for a host the label drives" {
	mkfx workstation
	fx_config "$ROOT" "mode=vm-vgpu"
	gv --cmdline "" cmdline
	assert_success
	[ "$output" = "intel_iommu=on iommu=pt" ]
	fx_config "$ROOT" "mode=container"
	gv --cmdline "" cmdline --cpu amd --json
	[ "$(jqr .params)" = "iommu=pt" ]
	[ "$(jqr .mode)" = null ]
	[ "$(jqr '.conflicts | length')" = 0 ]
	gv --cmdline "ro intel_iommu=on iommu=pt gpuvm.mode=vm-passthrough" cmdline
	assert_success
	[ "$output" = "intel_iommu=on iommu=pt" ]
	assert_regex "$stderr" "conflicts: gpuvm.mode= overrides the host config: the label cannot take effect until it is removed"
	refute_regex "$stderr" "lacks"
	# pinned: the mode's parameters and gpuvm.mode=, and no word about the label
	gv --cmdline "ro intel_iommu=on iommu=pt gpuvm.mode=vm-passthrough" cmdline --mode vm-passthrough
	[ "$output" = "intel_iommu=on iommu=pt gpuvm.mode=vm-passthrough" ]
	[ -z "$stderr" ]
}

@test "arm needs no IOMMU parameter: said on stderr, never an empty line on stdout" {
	mkfx arm64-smmu
	gv --cmdline "" cmdline
	assert_success
	assert_regex "$stderr" "^gpuvm: no kernel parameter is needed on arm: its SMMU has no switch such as intel_iommu=$"
	# Not a byte on stdout: a script's $(gpuvm cmdline) is empty, as the line it splices.
	[ "$("$GPUVM" --root "$ROOT" --cmdline "" cmdline 2>/dev/null | wc -c)" = 0 ]
	mkfx workstation
	[ "$("$GPUVM" --root "$ROOT" --cmdline "" cmdline --cpu arm 2>/dev/null | wc -c)" = 0 ]
	gv --cmdline "" cmdline --cpu arm --json
	assert_success
	[ "$(jqr .params)" = "" ]
	[ "$(jqr .cpu_vendor)" = arm ]
	# Pinned: the mode alone, no IOMMU parameter before it.
	gv --cmdline "" cmdline --cpu arm --mode vm-passthrough
	[ "$output" = "gpuvm.mode=vm-passthrough" ]
	assert_regex "$stderr" "lacks: gpuvm.mode=vm-passthrough$"
	# A vendor gpuvm cannot tell: said, no empty line either.
	rm "$ROOT/proc/cpuinfo"
	gv --cmdline "" cmdline
	assert_success
	assert_regex "$stderr" "^gpuvm: the CPU vendor is unknown: give --cpu intel, amd or arm$"
	[ "$("$GPUVM" --root "$ROOT" --cmdline "" cmdline 2>/dev/null | wc -c)" = 0 ]
}

@test "the shipped kernel-cmdline fragments are what gpuvm cmdline prints" {
	sh "$TOP/kernel-cmdline/generate.sh" "$GPUVM" "$BATS_TEST_TMPDIR/frag"
	run diff -r -x generate.sh -x README.md "$TOP/kernel-cmdline" "$BATS_TEST_TMPDIR/frag"
	assert_success
	[ "$(cat "$TOP/kernel-cmdline/vm-passthrough-intel/cmdline")" = "intel_iommu=on iommu=pt gpuvm.mode=vm-passthrough" ]
	[ "$(cat "$TOP/kernel-cmdline/vm-passthrough-amd/cmdline")" = "iommu=pt gpuvm.mode=vm-passthrough" ]
	[ "$(cat "$TOP/kernel-cmdline/label-intel/cmdline")" = "intel_iommu=on iommu=pt" ]
	[ "$(cat "$TOP/kernel-cmdline/label-amd/cmdline")" = "iommu=pt" ]
	[ ! -e "$TOP/kernel-cmdline/label-intel/dracut.conf" ]
	# dracut.conf: what it bakes, and only the IOMMU's parameters left for the boot loader
	grep -q '^kernel_cmdline+=" rd.gpuvm.mode=container "$' "$TOP/kernel-cmdline/container-intel/dracut.conf"
	grep -q "^# container needs no IOMMU parameter on the kernel's command line.$" "$TOP/kernel-cmdline/container-intel/dracut.conf"
	grep -q "^# The IOMMU's parameters (intel_iommu=on iommu=pt) are the kernel's: only the boot loader$" "$TOP/kernel-cmdline/vm-passthrough-intel/dracut.conf"
	grep -q "^# The IOMMU's parameters (iommu=pt) are the kernel's" "$TOP/kernel-cmdline/vm-vgpu-amd/dracut.conf"
	run grep -l "IOMMU parameters.*gpuvm.mode=" "$TOP"/kernel-cmdline/*/dracut.conf
	assert_failure
	# grub.d is Debian's: the fragment sends RHEL and Fedora to grubby
	grep -q "Not for RHEL or Fedora: their grub2-mkconfig reads only" "$TOP/kernel-cmdline/label-amd/grub.cfg"
}

@test "kernel-install.sh adds the parameters once" {
	f="$BATS_TEST_TMPDIR/cmdline"
	echo "root=/dev/sda1 ro quiet" >"$f"
	sh "$TOP/kernel-cmdline/vm-passthrough-intel/kernel-install.sh" "$f"
	sh "$TOP/kernel-cmdline/vm-passthrough-intel/kernel-install.sh" "$f"
	[ "$(cat "$f")" = "root=/dev/sda1 ro quiet intel_iommu=on iommu=pt gpuvm.mode=vm-passthrough" ]
}
