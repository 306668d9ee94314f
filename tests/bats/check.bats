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

# A host with no NVIDIA function and no IOMMU: an Intel iGPU alone.
igpu_noiommu() {
	ROOT="$BATS_TEST_TMPDIR/root"
	fx_init "$ROOT" --cpu intel --iommu none
	fx_pci "$ROOT" 0000:00:02.0 8086 4680 030000 --driver i915
}

@test "a VM mode with no GPU selected is not ready, IOMMU or not; container only warns" {
	igpu_noiommu
	gv --cmdline "" check --mode vm-vgpu
	assert_failure 1
	assert_output --partial "ERROR    no device is selected (NVIDIA display or 3D controllers, or ids=): the VM mode has no GPU to give"
	assert_line "not ready for vm-vgpu: 1 error, 2 warnings"
	gv --cmdline "" check --mode vm-passthrough --json
	assert_failure 1
	[ "$(jqr .ready)" = false ]
	[ "$(jqr '[.findings[] | select(.severity == "error") | .what] | map(select(startswith("no device is selected"))) | length')" = 1 ]
	gv --cmdline "" check --mode container
	assert_success
	assert_output --partial "WARNING  no device is selected (NVIDIA display or 3D controllers, or ids=)"
	assert_line "ready for container (1 warning)"
}

@test "a GPU the boot's hold left without a driver: not ready for container, nor for a VM mode" {
	mkfx workstation
	with_vfio
	nodriver 0000:01:00.0
	gv --cmdline "quiet" apply --defer
	assert_success
	[ "$(cat "$ROOT/sys/bus/pci/devices/0000:01:00.0/driver_override")" = gpuvm-hold ]
	gv --cmdline "" check --mode container
	assert_failure 1
	assert_output --partial "ERROR    0000:01:00.0 is held (driver_override gpuvm-hold): no driver can take it"
	assert_output --partial "fix: gpuvm apply --live releases it"
	assert_line --partial "not ready for container: 1 error"
	gv --cmdline "iommu=pt" check --mode vm-passthrough
	assert_failure 1
	assert_output --partial "0000:01:00.0 is held (driver_override gpuvm-hold)"
	# Released, it is no finding.
	gv --cmdline "gpuvm.mode=container" apply
	gv --cmdline "" check --mode container
	assert_success
	refute_output --partial "is held"
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

# kernel_68: the fixture's kernel is 6.8.0-31-generic (its module directory moved along).
kernel_68() {
	mv "$ROOT/lib/modules/6.1.0-99-amd64" "$ROOT/lib/modules/6.8.0-31-generic"
	printf '6.8.0-31-generic\n' >"$ROOT/proc/sys/kernel/osrelease"
}

# nvidia_version VERSION: the loaded nvidia module's version, as the vGPU Manager's shows it.
nvidia_version() {
	mkdir -p "$ROOT/sys/module/nvidia"
	printf '%s\n' "$1" >"$ROOT/sys/module/nvidia/version"
}

# The matrix's findings in $output (JSON): what|what|...
method_whats() {
	jqr '[.findings[] | select(.what | startswith("vGPU method")) | "\(.severity): \(.what)"] | join("|")'
}

@test "vm-vgpu: Ada on kernel 6.1 takes mediated devices on its VFs, whatever the release" {
	mkfx sriov
	vgpu_ids
	with_vgpu_mgr
	gv --cmdline "iommu=pt" check --mode vm-vgpu --json --vgpu-release 17
	assert_success
	[ "$(jqr '.warnings')" = 0 ]
	assert_regex "$(method_whats)" "^info: vGPU method of 0000:41:00.0 \(AD102GL \[L40S\], Ada\): mdev-vf, mediated devices on its SR-IOV VFs \(vGPU 17 \(--vgpu-release\), kernel 6.1.0-99-amd64\)$"
}

@test "vm-vgpu: Ada on kernel 6.8 with vGPU 17 is vendor-specific VFIO, which the operator cannot make yet" {
	mkfx sriov
	vgpu_ids
	with_vgpu_mgr
	kernel_68
	gv --cmdline "iommu=pt" check --mode vm-vgpu --json --vgpu-release 17
	assert_success
	[ "$(jqr '.warnings')" = 1 ]
	assert_regex "$(method_whats)" "^warning: vGPU method of 0000:41:00.0 .*: vendor-vfio, NVIDIA's vendor-specific VFIO on its SR-IOV VFs, no mdev \(vGPU 17 \(--vgpu-release\), kernel 6.8.0-31-generic\): the GPU Operator's vGPU stack .* does not yet create these, so no vGPU resource will appear$"
	assert_regex "$(jqr '.findings[] | select(.what | startswith("vGPU method")) | .fix')" "--kubevirt-plugin --kubevirt-version 1.9"
	# The release from the loaded driver: R550 is 17, R535 is 16 (mediated devices on VFs).
	nvidia_version 550.54.10
	gv --cmdline "iommu=pt" check --mode vm-vgpu --json
	assert_regex "$(method_whats)" "^warning: .*vendor-vfio.*\(vGPU 17 \(driver 550.54.10\), kernel 6.8.0-31-generic\)"
	nvidia_version 535.183.04
	gv --cmdline "iommu=pt" check --mode vm-vgpu --json
	[ "$(jqr '.warnings')" = 0 ]
	assert_regex "$(method_whats)" "^info: .*: mdev-vf, .*\(vGPU 16 \(driver 535.183.04\), kernel 6.8.0-31-generic\)$"
	# --vgpu-release wins over the driver.
	gv --cmdline "iommu=pt" check --mode vm-vgpu --json --vgpu-release 17.4
	assert_regex "$(method_whats)" "^warning: .*vendor-vfio.*\(vGPU 17 \(--vgpu-release\)"
}

@test "vm-vgpu: Ada on kernel 6.8, release unknown: said so, with how to tell it" {
	mkfx sriov
	vgpu_ids
	with_vgpu_mgr
	kernel_68
	gv --cmdline "iommu=pt" check --mode vm-vgpu --json
	assert_success
	assert_regex "$(method_whats)" "^info: vGPU method of 0000:41:00.0 .* cannot be told \(vGPU release unknown, kernel 6.8.0-31-generic\): vendor-vfio with vGPU 17 or later on kernel 6.8 or later, else mediated devices on its SR-IOV VFs$"
	assert_regex "$(jqr '.findings[] | select(.what | startswith("vGPU method")) | .fix')" "--vgpu-release N"
}

@test "vm-vgpu: Turing takes mediated devices on the GPU" {
	mkfx workstation
	mkdir -p "$ROOT/usr/share/misc"
	printf '10de  NVIDIA Corporation\n\t1e87  TU104GL [Tesla T4]\n' >"$ROOT/usr/share/misc/pci.ids"
	kernel_68
	gv --cmdline "intel_iommu=on iommu=pt" check --mode vm-vgpu --json --vgpu-release 17
	assert_regex "$(method_whats)" "^info: vGPU method of .*Tesla T4\], Turing\): mdev, mediated devices on the GPU \("
}

@test "check --vgpu-release: not a release is a usage error; other commands refuse it" {
	mkfx sriov
	gv check --mode vm-vgpu --vgpu-release v17
	assert_failure 2
	assert_regex "$stderr" "--vgpu-release: 'v17' is not a vGPU release"
	gv plan --vgpu-release 17
	assert_failure 2
}

@test "--vgpu-release is checked in every mode, check's and kubevirt's alike: the value and what it takes" {
	mkfx sriov
	for args in "check" "check --mode container" "check --mode vm-passthrough" "kubevirt" \
		"--cmdline gpuvm.mode=vm-passthrough kubevirt --kubevirt-plugin"; do
		# shellcheck disable=SC2086 # the words split on purpose
		gv $args --vgpu-release 17.x
		assert_failure 2
		[ -z "$output" ]
		[ "$stderr" = "gpuvm: --vgpu-release: '17.x' is not a vGPU release (a number: 17, or 17.4)
Try 'gpuvm --help'." ]
	done
	gv --cmdline "" check --vgpu-release "0"
	assert_failure 2
	assert_regex "$stderr" "'0' is not a vGPU release"
	# A release, in a mode that does not use it: taken, nothing said of it.
	gv --cmdline "" check --mode container --vgpu-release 17.4
	[ "$status" -ne 2 ]
	gv --cmdline "" kubevirt --vgpu-release 17
	assert_success
}

# secure_boot VALUE: the SecureBoot EFI variable (4 bytes of attributes, then VALUE).
secure_boot() {
	mkdir -p "$ROOT/sys/firmware/efi/efivars"
	# shellcheck disable=SC2059 # the value's byte, as an octal escape in the format
	printf "\\006\\000\\000\\000\\$(printf %03o "$1")" >"$ROOT/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"
}

@test "vm-vgpu under Secure Boot: a warning (the operator's vGPU Manager modules are unsigned)" {
	mkfx sriov
	vgpu_ids
	with_vgpu_mgr
	secure_boot 1
	gv --cmdline "iommu=pt" check --mode vm-vgpu --json
	assert_success
	[ "$(jqr '.warnings')" = 1 ]
	assert_regex "$(jqr '.findings[] | select(.severity == "warning") | .what')" "^Secure Boot is on \(the SecureBoot EFI variable\): the GPU Operator's vGPU Manager builds its kernel modules on the node, unsigned"
	# Passthrough needs no module of its own: no warning there.
	gv --cmdline "iommu=pt" check --mode vm-passthrough --json
	refute_output --partial "Secure Boot"
	assert_regex "$(jqr '.mode')" "^vm-passthrough$"
}

@test "vm-vgpu with Secure Boot off, or no EFI: no Secure Boot warning" {
	mkfx sriov
	vgpu_ids
	with_vgpu_mgr
	secure_boot 0
	gv --cmdline "iommu=pt" check --mode vm-vgpu --json
	assert_success
	[ "$(jqr '.warnings')" = 0 ]
	[ "$(jqr '[.findings[] | select(.what | test("Secure Boot"))] | length')" = 0 ]
	rm -rf "$ROOT/sys/firmware/efi"
	gv --cmdline "iommu=pt" check --mode vm-vgpu --json
	assert_success
	[ "$(jqr '.warnings')" = 0 ]
	[ "$(jqr '.mode')" = vm-vgpu ]
}

@test "vfio-pci missing for the kernel" {
	mkfx workstation
	gv --cmdline "iommu=pt" check --mode vm-passthrough
	assert_failure 1
	assert_output --partial "ERROR    vfio-pci is not available for kernel 6.1.0-99-amd64: neither a module of it nor a modules.builtin that names it"
	# built in (Ubuntu's generic kernels): the fix says it may be, and how gpuvm tells
	assert_output --partial "fix: install the kernel's modules package: it ships vfio-pci's module, or modules.builtin where the kernel has it built in (CONFIG_VFIO_PCI=y, as Ubuntu's generic kernels do)"
	refute_output --partial "linux-modules-extra"
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

@test "hgx8-pairs: an IOMMU group of two GPUs is a warning, ready all the same; none on PCIe" {
	mkfx hgx8-pairs
	with_vfio
	gv --cmdline "iommu=pt gpuvm.mode=vm-passthrough" check --json
	assert_success
	[ "$(jqr .ready)" = true ]
	[ "$(jqr '[.findings[] | select(.what | test("^IOMMU group [0-9]+ holds 2 GPUs: they can only be assigned to one VM together"))] | length')" = 4 ]
	assert_regex "$(jqr '[.findings[] | select(.what | test("^IOMMU group 8 "))][0].severity')" "^warning$"
	assert_regex "$(jqr '[.findings[] | select(.what | test("^IOMMU group 8 "))][0].fix')" "one VM that requests every GPU of the group"
	gv --cmdline "iommu=pt gpuvm.mode=vm-passthrough" check
	assert_success
	assert_output --partial "WARNING  IOMMU group 71 holds 2 GPUs: they can only be assigned to one VM together"
	mkfx workstation
	with_vfio
	gv --cmdline "iommu=pt gpuvm.mode=vm-passthrough" check --json
	[ "$(jqr '[.findings[] | select(.what | test("holds [0-9]+ GPUs"))] | length')" = 0 ]
	[ "$(jqr '.findings | length')" -gt 0 ]
}

# The one finding about NVIDIA's virtualization models on an NVSwitch board, as JSON.
hgx_finding() {
	jqr '[.findings[] | select(.what | startswith("HGX: "))] | if length == 1 then .[0] else error("not one HGX finding") end'
}

fm_cfg() {
	mkdir -p "$ROOT/usr/share/nvidia/nvswitch"
	printf '%s\n' "# Fabric Manager" "$@" >"$ROOT/usr/share/nvidia/nvswitch/fabricmanager.cfg"
}

@test "hgx8, nvswitch=host, vm-passthrough: single-GPU VMs only unless Fabric Manager runs on the host" {
	mkfx hgx8
	with_vfio
	gv --cmdline "iommu=pt gpuvm.mode=vm-passthrough" check --json
	assert_success
	output=$(hgx_finding)
	[ "$(jqr .severity)" = warning ]
	assert_regex "$(jqr .what)" "^HGX: nvswitch=host, vm-passthrough: single-GPU VMs only unless Fabric Manager runs on the host; the 4 NVSwitches stay on the host, .* fails CUDA init \\(error 802\\) or runs without NVLink$"
	assert_regex "$(jqr .fix)" "FABRIC_MODE=1 and activate each VM's partition .* set nvswitch=vm and give one VM every GPU and NVSwitch"
	# a host config saying nvswitch=host explicitly is the same
	fx_config "$ROOT" "mode=vm-passthrough" "nvswitch=host"
	gv --cmdline "iommu=pt" check
	assert_success
	assert_output --partial "WARNING  HGX: nvswitch=host, vm-passthrough: single-GPU VMs only unless Fabric Manager runs on the host"
	# Fabric Manager's config in shared NVSwitch mode (the last FABRIC_MODE= line wins): info
	fm_cfg "FABRIC_MODE=0" "FABRIC_MODE=1  # shared NVSwitch"
	gv --cmdline "iommu=pt" check --json
	output=$(hgx_finding)
	[ "$(jqr .severity)" = info ]
	assert_regex "$(jqr .what)" "^HGX: nvswitch=host, vm-passthrough: shared NVSwitch multitenancy, the 4 NVSwitches stay on the host for Fabric Manager; /usr/share/nvidia/nvswitch/fabricmanager.cfg says FABRIC_MODE=1$"
	assert_regex "$(jqr .fix)" "activate each VM's partition .*gpuvm does neither"
	# FABRIC_MODE=0 (bare metal, the package's default) is still the warning, and says it
	fm_cfg "FABRIC_MODE=0"
	gv --cmdline "iommu=pt" check --json
	output=$(hgx_finding)
	[ "$(jqr .severity)" = warning ]
	assert_regex "$(jqr .what)" "single-GPU VMs only .*fabricmanager.cfg says FABRIC_MODE=0$"
}

@test "hgx8, nvswitch=vm: full passthrough, Fabric Manager in the guest; container and vm-vgpu name theirs" {
	mkfx hgx8
	with_vfio
	gv --cmdline "iommu=pt gpuvm.mode=vm-passthrough gpuvm.nvswitch=vm" check --json
	assert_success
	output=$(hgx_finding)
	[ "$(jqr .severity)" = info ]
	assert_regex "$(jqr .what)" "^HGX: nvswitch=vm, vm-passthrough: full passthrough, the GPUs and 4 NVSwitches on vfio-pci; .*Fabric Manager in that guest$"
	assert_regex "$(jqr .fix)" "give one VM every GPU and NVSwitch and run nvidia-fabricmanager \\(FABRIC_MODE=0\\) in it"
	gv --cmdline "iommu=pt gpuvm.mode=container" check --json
	output=$(hgx_finding)
	assert_regex "$(jqr .what)" "^HGX: 4 NVSwitches, container: bare metal"
	gv --cmdline "iommu=pt gpuvm.mode=vm-vgpu gpuvm.nvswitch=vm" check --json
	output=$(hgx_finding)
	assert_regex "$(jqr .what)" "^HGX: 4 NVSwitches, vm-vgpu: the NVSwitches stay on the host \\(nvswitch= is not used\\); .*FABRIC_MODE=2\\)$"
}

@test "no NVSwitch: no word of Fabric Manager" {
	mkfx two-gpus
	with_vfio
	gv --cmdline "iommu=pt gpuvm.mode=vm-passthrough" check --json
	assert_success
	[ "$(jqr '.findings | length')" -gt 0 ]
	[ "$(jqr '[.findings[] | select(.what | test("HGX|Fabric Manager"))] | length')" = 0 ]
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

# NVIDIA's DRA driver on the node (its kubelet plugins' registration sockets): with passthrough
# support on it rebinds GPUs, and would undo vm-passthrough's pins. Nothing in container mode
# (gpuvm pins nothing) nor without the sockets.
@test "NVIDIA's DRA driver registered beside vm-passthrough's pins: a warning, its passthrough support off, gpuvm-dra" {
	local reg
	mkfx hgx8
	with_vfio
	gv --cmdline "iommu=pt" check --mode vm-passthrough --json
	assert_success
	[ "$(jqr '[.findings[] | select(.what | test("DRA"))] | length')" = 0 ]
	reg=$ROOT/var/lib/kubelet/plugins_registry
	mkdir -p "$reg"
	: >"$reg/gpu.nvidia.com-reg.sock"
	gv --cmdline "iommu=pt" check --mode vm-passthrough --json
	assert_success
	[ "$(jqr '[.findings[] | select(.what | test("DRA"))] | .[0].severity')" = warning ]
	assert_regex "$(jqr '.findings[] | select(.what | test("DRA")) | .what')" \
		"^NVIDIA's DRA driver is registered with the kubelet \(gpu\.nvidia\.com\): with its passthrough support on it rebinds GPUs between nvidia and vfio-pci .* would undo gpuvm's pins of [0-9]+ devices$"
	assert_regex "$(jqr '.findings[] | select(.what | test("DRA")) | .fix')" \
		"PassthroughSupport feature gate.*gpuvm-dra \(driver vfio\.gpuvm\.dev; doc/dra\.md\)"
	: >"$reg/compute-domain.nvidia.com-reg.sock"
	gv --cmdline "iommu=pt" check --mode vm-passthrough
	assert_output --partial "(gpu.nvidia.com, compute-domain.nvidia.com)"
	rm "$reg/gpu.nvidia.com-reg.sock"
	gv --cmdline "iommu=pt" check --mode vm-passthrough
	assert_output --partial "(compute-domain.nvidia.com)"
	# container: the GPUs stay with the host driver, NVIDIA's DRA driver's own
	gv --cmdline "iommu=pt" check --mode container --json
	[ "$(jqr '[.findings[] | select(.what | test("DRA"))] | length')" = 0 ]
}
