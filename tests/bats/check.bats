#!/usr/bin/env bats
# shellcheck disable=SC2154 # $stderr and $output are set by bats' run
# gpuvm check: every finding with its fix, exit 0 ready / 1 not ready / 2 usage.

load helpers

# The vfio modules as real module files with real indexes, so libkmod finds them.
with_vfio() {
	fx_kmod "$ROOT" vfio_pci "alias=pci:v*d*sv*sd*bc*sc*i*"
	fx_kmod "$ROOT" vfio "softdep=post: vfio_iommu_type1"
	fx_kmod "$ROOT" vfio_iommu_type1
	fx_depmod "$ROOT"
}

@test "a ready host: exit 0, only advice" {
	mkfx hgx8
	with_vfio
	gv --cmdline "iommu=pt gpuvm.mode=vm-passthrough" check
	assert_success
	assert_output --partial "gpuvm check: vm-passthrough (from cmdline) on amd"
	assert_output --partial "ready for vm-passthrough"
	refute_output --partial ERROR
}

@test "no IOMMU on Intel: the parameter and the firmware switch" {
	mkfx noiommu
	with_vfio
	gv --cmdline "gpuvm.mode=vm-passthrough" check --json
	assert_failure 1
	[ "$(jqr .ready)" = false ]
	[ "$(jqr '.findings[0].severity')" = error ]
	assert_regex "$(jqr '.findings[0].what')" "IOMMU is not active"
	assert_regex "$(jqr '.findings[0].fix')" "intel_iommu=on .* VT-d in the firmware"
}

@test "IOMMU turned off on the command line: remove it" {
	mkfx noiommu
	with_vfio
	gv --cmdline "intel_iommu=off" check --mode vm-passthrough --json
	assert_failure 1
	assert_regex "$(jqr '.findings[0].fix')" "remove intel_iommu=off"
	[ "$(jqr .mode_source)" = --mode ]
}

# pci.ids lines for the fixtures' GPUs, as Debian 12's pci.ids names them (26b9, the L40S, is
# newer than it: named here as later pci.ids do).
vgpu_ids() {
	mkdir -p "$ROOT/usr/share/misc"
	printf '%s\n' '10de  NVIDIA Corporation' '	1e87  TU104 [GeForce RTX 2080 Rev. A]' \
		'	1eb8  TU104GL [Tesla T4]' '	2204  GA102 [GeForce RTX 3090]' \
		'	26b9  AD102GL [L40S]' >"$ROOT/usr/share/misc/pci.ids"
}

# The vGPU Manager's module as a real module file (it may come from the operator instead).
with_vgpu_mgr() {
	fx_kmod "$ROOT" nvidia_vgpu_vfio
	fx_depmod "$ROOT"
}

@test "vm-vgpu without IOMMU, mediated devices: a warning that says why" {
	mkfx noiommu
	with_vfio
	gv --cmdline "" check --mode vm-vgpu --json
	assert_success
	[ "$(jqr '.findings[0].severity')" = warning ]
	assert_regex "$(jqr '.findings[0].what')" "IOMMU is not active.*mediated devices \(vGPU before Ampere\) work without it"
}

@test "vm-vgpu without IOMMU on an SR-IOV GPU (Ada): an error" {
	mkfx sriov
	vgpu_ids
	with_vgpu_mgr
	gv --cmdline "" check --mode vm-vgpu --json
	assert_success
	# The fixture's IOMMU is active; an AMD host with it off in the firmware:
	rm -rf "$ROOT"/sys/class/iommu/* "$ROOT"/sys/kernel/iommu_groups/*
	for d in "$ROOT"/sys/bus/pci/devices/*; do rm -f "$d/iommu_group"; done
	gv --cmdline "" check --mode vm-vgpu --json
	assert_failure 1
	[ "$(jqr '.findings[0].severity')" = error ]
	assert_regex "$(jqr '.findings[0].what')" "IOMMU is not active.*SR-IOV VFs to VMs through VFIO"
}

@test "vm-vgpu: a GeForce no vGPU release supports is an error" {
	mkfx gpu-nic
	vgpu_ids
	with_vgpu_mgr
	gv --cmdline "intel_iommu=on iommu=pt" check --mode vm-vgpu
	assert_failure 1
	assert_output --partial "ERROR    no vGPU release supports 0000:01:00.0 (10de:2204, GA102 [GeForce RTX 3090], Ampere): a GeForce, TITAN or CMP part"
	gv --cmdline "gpuvm.mode=vm-vgpu" plan --json
	assert_regex "$(dev_field 0000:01:00.0 reason)" "no vGPU release supports it \(Ampere"
	[ "$(dev_field 0000:01:00.0 vgpu)" = null ]
}

@test "vm-vgpu: one finding an ID, however many GPUs have it" {
	mkfx two-gpus
	mkdir -p "$ROOT/usr/share/misc"
	printf '10de  NVIDIA Corporation\n\t2684  AD102 [GeForce RTX 4090]\n' >"$ROOT/usr/share/misc/pci.ids"
	gv --cmdline "intel_iommu=on iommu=pt" check --mode vm-vgpu --json
	assert_failure 1
	[ "$(jqr '.errors')" = 1 ]
	assert_regex "$(jqr '.findings[] | select(.severity == "error") | .what')" "^no vGPU release supports 0000:03:00.0 and 1 more \(10de:2684, AD102 \[GeForce RTX 4090\], Ada\)"
}

@test "vm-vgpu: a GPU pci.ids does not name is a warning, never a silent ready" {
	mkfx gpu-nic
	with_vgpu_mgr
	gv --cmdline "intel_iommu=on iommu=pt" check --mode vm-vgpu --json
	assert_success
	assert_regex "$(jqr '[.findings[] | select(.severity == "warning") | .what] | join("|")')" "cannot tell whether a vGPU release supports 0000:01:00.0 \(10de:2204\): no pci.ids"
	mkdir -p "$ROOT/usr/share/misc"
	printf '10de  NVIDIA Corporation\n\t2330  GH100 [H100 SXM5 80GB]\n' >"$ROOT/usr/share/misc/pci.ids"
	gv --cmdline "intel_iommu=on iommu=pt" check --mode vm-vgpu --json
	assert_regex "$(jqr '[.findings[].what] | join("|")')" "0000:01:00.0 \(10de:2204\): /usr/share/misc/pci.ids does not name it"
}

@test "vm-vgpu: a supported data-center GPU on a ready host; the vGPU Manager's module missing is a warning" {
	mkfx sriov
	vgpu_ids
	with_vgpu_mgr
	gv --cmdline "iommu=pt" check --mode vm-vgpu --json
	assert_success
	[ "$(jqr '.errors')" = 0 ]
	[ "$(jqr '.warnings')" = 0 ]
	mkfx sriov
	vgpu_ids
	gv --cmdline "iommu=pt" check --mode vm-vgpu --json
	assert_success
	[ "$(jqr '.warnings')" = 1 ]
	assert_regex "$(jqr '.findings[0].what')" "module nvidia_vgpu_vfio is neither loaded nor installed for kernel 6.1.0-99-amd64"
	assert_regex "$(jqr '.findings[0].fix')" "vGPU Manager DaemonSet"
}

@test "vm-vgpu: Ampere and later without SR-IOV capability is said so, not mediated devices" {
	mkfx sriov
	vgpu_ids
	with_vgpu_mgr
	rm "$ROOT/sys/bus/pci/devices/0000:41:00.0/sriov_totalvfs"
	gv --cmdline "iommu=pt" check --mode vm-vgpu
	assert_failure 1
	assert_output --partial "SR-IOV expected but the device shows no SR-IOV capability: 0000:41:00.0 (10de:26b9, AD102GL [L40S], Ada) has no sriov_totalvfs"
	gv --cmdline "gpuvm.mode=vm-vgpu" plan --json
	[ "$(dev_field 0000:41:00.0 vgpu)" = sriov ]
	assert_regex "$(dev_field 0000:41:00.0 reason)" "Ada, SR-IOV expected but the device shows no SR-IOV capability"
}

@test "vfio-pci missing for the kernel" {
	mkfx workstation
	gv --cmdline "iommu=pt" check --mode vm-passthrough
	assert_failure 1
	assert_output --partial "ERROR    vfio-pci is not available for kernel 6.1.0-99-amd64"
}

@test "a firmware framebuffer in the GPU's BAR, and the boot VGA" {
	mkfx workstation
	with_vfio
	fx_iomem_bars "$ROOT" 0000:01:00.0 efifb
	gv --cmdline "iommu=pt" check --mode vm-passthrough --json
	assert_failure 1
	assert_regex "$(jqr '.findings | map(.what) | join("|")')" "firmware framebuffer \(efifb, [0-9a-f]+-[0-9a-f]+\) sits in BAR1 of 0000:01:00.0"
	assert_regex "$(jqr '.findings | map(.fix) | join("|")')" "video=efifb:off"
	assert_regex "$(jqr '.findings | map(.what) | join("|")')" "0000:01:00.0 is the boot VGA device"
}

@test "a framebuffer elsewhere is no finding" {
	mkfx workstation
	with_vfio
	# 0000:01:00.0's BARs: 80000000-80ffffff, 4000000000-400fffffff, 4010000000-4011ffffff.
	fx_iomem "$ROOT" "  90000000-902fffff : BOOTFB"
	gv --cmdline "iommu=pt" check --mode vm-passthrough --json
	assert_success
	[ "$(jqr .ready)" = true ]
	# The one finding is the boot VGA warning: the check ran on the GPU, and found no framebuffer.
	[ "$(jqr '[.findings[].what] | join("|")')" = "0000:01:00.0 is the boot VGA device: the firmware console runs on it" ]
	# The same BOOTFB line in the GPU's first prefetchable BAR is a finding: the line is read.
	fx_iomem "$ROOT" "  4000000000-40002fffff : BOOTFB"
	gv --cmdline "iommu=pt" check --mode vm-passthrough --json
	assert_failure 1
	assert_regex "$(jqr '[.findings[].what] | join("|")')" "firmware framebuffer \(BOOTFB, 4000000000-40002fffff\) sits in BAR1 of 0000:01:00.0"
}

@test "a group that is not viable names the foreign device" {
	mkfx gpu-nic
	with_vfio
	gv --cmdline "iommu=pt" check --mode vm-passthrough
	assert_failure 1
	assert_output --partial "IOMMU group 1 is not viable: 0000:02:00.0 (8086:1533, igb) shares it"
}

@test "an excluded GPU sharing a group with a selected one" {
	mkfx two-gpus
	with_vfio
	gv --cmdline "iommu=pt gpuvm.exclude=0000:04:00.0" check --mode vm-passthrough
	assert_failure 1
	assert_output --partial "0000:04:00.0 is excluded but shares IOMMU group 2 with a selected GPU"
}

@test "container with a stale vfio-pci.ids=, and amd_iommu=on" {
	mkfx workstation
	gv --cmdline "vfio-pci.ids=10de:1e87 amd_iommu=on" check --mode container --json
	assert_success
	assert_regex "$(jqr '.findings | map(.what) | join("|")')" "vfio-pci.ids= hands devices to vfio-pci"
	assert_regex "$(jqr '.findings | map(.what) | join("|")')" "amd_iommu=on is not a value the kernel knows"
}

@test "check usage errors exit 2" {
	mkfx workstation
	gv check --mode bogus
	assert_failure 2
	gv check --cpu intel
	assert_failure 2
}

@test "a vfio variant driver from modules.alias is the target (Grace Hopper)" {
	mkfx workstation
	fx_pci "$ROOT" 0009:01:00.0 10de 2342 030200 --group 90 --driver nvidia
	with_vfio
	# The alias line nvgrace_gpu_vfio_pci carries in the kernel.
	fx_kmod "$ROOT" nvgrace_gpu_vfio_pci "alias=vfio_pci:v000010DEd00002342sv*sd*bc*sc*i*"
	fx_depmod "$ROOT"
	gv --cmdline "gpuvm.mode=vm-passthrough" plan --json
	[ "$(dev_field 0009:01:00.0 target)" = nvgrace_gpu_vfio_pci ]
	[ "$(dev_field 0000:01:00.0 target)" = vfio-pci ]
	[ "$(jqr '[.modules[].name] | join(",")')" = "vfio-pci,nvgrace_gpu_vfio_pci" ]
}
