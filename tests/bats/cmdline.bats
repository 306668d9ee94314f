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

@test "the mode defaults to the configured one" {
	mkfx workstation
	fx_config "$ROOT" "mode=vm-vgpu"
	gv --cmdline "" cmdline
	[ "$output" = "intel_iommu=on iommu=pt gpuvm.mode=vm-vgpu" ]
}

@test "the shipped kernel-cmdline fragments are what gpuvm cmdline prints" {
	sh "$TOP/kernel-cmdline/generate.sh" "$GPUVM" "$BATS_TEST_TMPDIR/frag"
	run diff -r -x generate.sh -x README.md "$TOP/kernel-cmdline" "$BATS_TEST_TMPDIR/frag"
	assert_success
	[ "$(cat "$TOP/kernel-cmdline/vm-passthrough-intel/cmdline")" = "intel_iommu=on iommu=pt gpuvm.mode=vm-passthrough" ]
	[ "$(cat "$TOP/kernel-cmdline/vm-passthrough-amd/cmdline")" = "iommu=pt gpuvm.mode=vm-passthrough" ]
}

@test "kernel-install.sh adds the parameters once" {
	f="$BATS_TEST_TMPDIR/cmdline"
	echo "root=/dev/sda1 ro quiet" >"$f"
	sh "$TOP/kernel-cmdline/vm-passthrough-intel/kernel-install.sh" "$f"
	sh "$TOP/kernel-cmdline/vm-passthrough-intel/kernel-install.sh" "$f"
	[ "$(cat "$f")" = "root=/dev/sda1 ro quiet intel_iommu=on iommu=pt gpuvm.mode=vm-passthrough" ]
}
