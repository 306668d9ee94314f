#!/usr/bin/env bats
# shellcheck disable=SC2154 # $stderr and $output are set by bats' run
# arm64: an ARM SMMUv3 gives a PCI function its IOMMU group only when a driver first
# probes it (fixture arm64-smmu: the GH200 at 0009:01:00.0 has no group yet); the vfio variant
# driver nvgrace_gpu_vfio_pci from modules.alias. `make test-arm64` runs this suite (and all
# the others) on the aarch64 binary under qemu-user too.

load helpers

GH=0009:01:00.0
PT="gpuvm.mode=vm-passthrough"

# The vfio modules with real indexes; vfio_pci with its real catch-all alias.
with_vfio() {
	fx_kmod "$ROOT" vfio_pci "alias=vfio_pci:v*d*sv*sd*bc*sc*i*"
	fx_kmod "$ROOT" vfio "softdep=post: vfio_iommu_type1"
	fx_kmod "$ROOT" vfio_iommu_type1
	# The alias lines of the kernel's nvgrace-gpu driver (see tests/unit/test-kmod.c).
	[ -z "${1-}" ] || fx_kmod "$ROOT" nvgrace_gpu_vfio_pci \
		"alias=vfio_pci:v000010DEd00002342sv*sd*bc*sc*i*" \
		"alias=vfio_pci:v000010DEd00002345sv*sd*bc*sc*i*" \
		"alias=vfio_pci:v000010DEd00002348sv*sd*bc*sc*i*" \
		"alias=vfio_pci:v000010DEd00002941sv*sd*bc*sc*i*" \
		"alias=vfio_pci:v000010DEd000031C2sv*sd*bc*sc*i*"
	fx_depmod "$ROOT"
}

@test "SMMU, no group before the first probe: the IOMMU is active and the GH200 is bound" {
	mkfx arm64-smmu
	with_vfio
	# Groups exist (7, for the other functions), none of them holds the GH200, nor has it a link.
	[ "$(find "$ROOT/sys/kernel/iommu_groups" -mindepth 1 -maxdepth 1 | wc -l)" -eq 7 ]
	[ -z "$(find "$ROOT/sys/kernel/iommu_groups" -name "$GH")" ]
	[ -d "$ROOT/sys/bus/pci/devices/$GH" ]
	[ ! -e "$ROOT/sys/bus/pci/devices/$GH/iommu_group" ]
	gv --cmdline "$PT" plan --json
	assert_success
	[ "$(jqr .iommu.active)" = true ]
	[ "$(jqr .iommu.cpu_vendor)" = arm ]
	[ "$(jqr .iommu.unit)" = smmu3.0x0000000012000000 ]
	[ "$(jqr .iommu.groups_at_probe)" = true ]
	[ "$(dev_field $GH action)" = bind ]
	[ "$(dev_field $GH target)" = vfio-pci ]
	[ "$(dev_field $GH iommu_group)" = null ]
	dev_field $GH reason | grep -q 'IOMMU group assigned when vfio-pci probes it (smmu3.'
	[ "$(jqr '.groups | length')" = 1 ]
	[ "$(jqr '.groups[0].pending')" = true ]
	[ "$(jqr '.groups[0].id')" = null ]
	[ "$(jqr '.groups[0].members | join(",")')" = "$GH" ]
	[ "$(jqr '[.devices[] | select(.action != "skip")] | length')" = 1 ]
	[ "$(jqr '.iommu_unusable')" = false ]
}

@test "SMMU: the text plan says the group is pending; check finds the host ready" {
	mkfx arm64-smmu
	with_vfio
	gv --cmdline "$PT" plan
	assert_success
	assert_output --partial "IOMMU: active (cpu arm, 1 unit smmu3.0x0000000012000000, 7 groups, assigned when a driver first probes a device)"
	assert_output --partial "pending (the IOMMU assigns it at probe): $GH"
	gv --cmdline "$PT" check
	assert_success
	assert_output --partial "gpuvm check: vm-passthrough (from cmdline) on arm"
	assert_output --partial "ready for vm-passthrough (0 warnings)"
	refute_output --partial "IOMMU is not active"
	refute_output --partial "iommu=pt"
}

@test "SMMU: apply --root binds the GH200 (not verified: no kernel) and exits 0" {
	mkfx arm64-smmu
	with_vfio
	gv --cmdline "$PT" apply --json
	assert_success
	[ "$(dev_field $GH result)" = unverified ]
	[ "$(cat "$ROOT/sys/bus/pci/devices/$GH/driver_override")" = vfio-pci ]
	[ "$(jqr '.result')" = ok ]
	[ "$(cat "$ROOT/sys/bus/pci/devices/0008:01:00.0/driver_override")" = "(null)" ]
}

@test "SMMU: a GPU on a driver without a group is outside the IOMMU: held, named" {
	mkfx arm64-smmu
	fx_pci "$ROOT" 000a:01:00.0 10de 2342 030200 --driver nvidia
	with_vfio
	gv --cmdline "$PT" plan --json
	assert_failure 4
	[ "$(dev_field 000a:01:00.0 action)" = hold ]
	dev_field 000a:01:00.0 reason | grep -q 'no IOMMU group although the IOMMU is active'
	[ "$(dev_field $GH action)" = bind ]
}

# An arm64 host without any IOMMU: a root port and the GH200.
arm_noiommu() {
	ROOT="$BATS_TEST_TMPDIR/root"
	fx_init "$ROOT" --cpu arm --iommu none --kver 6.1.0-99-arm64
	fx_pci "$ROOT" 0009:00:00.0 10de 22b8 060400 --driver pcieport
	fx_pci "$ROOT" $GH 10de 2342 030200 --parent 0009:00:00.0
}

@test "arm64 without an IOMMU: not active, the GH200 held, exit 3, the problem named" {
	arm_noiommu
	with_vfio
	gv --cmdline "$PT" plan --json
	assert_failure 3
	[ "$(jqr .iommu.active)" = false ]
	[ "$(jqr .iommu.groups_at_probe)" = false ]
	[ "$(jqr .iommu_unusable)" = true ]
	[ "$(dev_field $GH action)" = hold ]
	dev_field $GH reason | grep -q 'IOMMU is not active'
	gv --cmdline "$PT" check
	assert_failure 1
	assert_output --partial "the IOMMU is not active"
}

@test "Intel DMAR groups at boot: a device without a group there is still not bound" {
	mkfx workstation
	fx_pci "$ROOT" 0000:05:00.0 10de 2342 030200
	with_vfio
	gv --cmdline "$PT" plan --json
	[ "$(jqr .iommu.groups_at_probe)" = false ]
	[ "$(dev_field 0000:05:00.0 action)" = hold ]
	dev_field 0000:05:00.0 reason | grep -q 'no IOMMU group'
}

@test "nvgrace_gpu_vfio_pci from modules.alias is the GH200's target, not vfio_pci's catch-all" {
	mkfx arm64-smmu
	with_vfio nvgrace
	grep -qxF 'alias vfio_pci:v000010DEd00002342sv*sd*bc*sc*i* nvgrace_gpu_vfio_pci' \
		"$ROOT/lib/modules/6.1.0-99-arm64/modules.alias"
	grep -qxF 'alias vfio_pci:v*d*sv*sd*bc*sc*i* vfio_pci' \
		"$ROOT/lib/modules/6.1.0-99-arm64/modules.alias"
	gv --cmdline "$PT" plan --json
	assert_success
	[ "$(dev_field $GH target)" = nvgrace_gpu_vfio_pci ]
	[ "$(jqr '.modules | map(.name) | join(",")')" = nvgrace_gpu_vfio_pci ]
	gv --cmdline "$PT" apply --json
	assert_success
	[ "$(cat "$ROOT/sys/bus/pci/devices/$GH/driver_override")" = nvgrace_gpu_vfio_pci ]
}

@test "without the variant module the GH200 goes to vfio-pci" {
	mkfx arm64-smmu
	with_vfio
	gv --cmdline "$PT" plan --json
	[ "$(dev_field $GH target)" = vfio-pci ]
}
