# shellcheck shell=sh
# arm64: Debian's arm64 kernel on QEMU's virt machine with its SMMUv3 (described by
# the device tree), the aarch64 gpuvm (build/arm64/gpuvm) in a busybox:arm64 image, the VGA
# stand-in (1234:1111, selected by ID), gpuvm.mode=vm-passthrough. Before gpuvm runs no PCI
# function has an IOMMU group (that SMMU gives one at a driver's first probe): gpuvm finds
# the IOMMU active by its unit (smmu3.*), binds the stand-in to vfio-pci, and reads back the
# group the probe gave it; bochs, loaded after gpuvm (/etc/modules-load), does not take it.
# shellcheck source=tests/e2e/arm64-lib.sh
. "$E2E_ROOT/tests/e2e/arm64-lib.sh"
a64_need
a64_image --load bochs --add "$E2E_GUEST/gpuvm-check.sh:/init.d/50-gpuvm-check.sh"
a64_boot --iommu smmuv3 --gpu vga --append "gpuvm.mode=vm-passthrough gpuvm.ids=1234:1111"
e2e_guest_done
e2e_expect 'Machine model: linux,dummy-virt' 'not the arm64 virt machine'
e2e_expect 'arm-smmu-v3 .*smmuv3: ias' 'no SMMUv3 in the kernel log'
e2e_fact_match iommus '^smmu3\.'
e2e_fact_is vga.driver vfio-pci
e2e_fact_is vga.override vfio-pci
e2e_fact_is vga.vfio_node yes
e2e_fact_match modules '(^| )bochs( |$)'
e2e_fact_is type1 yes
e2e_state_is .result ok
e2e_state_is .iommu.active true
e2e_state_is .iommu.cpu_vendor arm
e2e_state_is .iommu.groups 0
e2e_state_is .iommu.groups_at_probe true
e2e_state_is "$E2E_JQ_VGA | .action" bind
e2e_state_match "$E2E_JQ_VGA | .reason" 'IOMMU group assigned when vfio-pci probes it'
e2e_state_is "$E2E_JQ_VGA | .driver_after" vfio-pci
e2e_state_is "$E2E_JQ_VGA | .verified" true
e2e_state_is "$E2E_JQ_VGA | .result" ok
e2e_state_is "$E2E_JQ_VGA | .iommu_group | tostring" "$(e2e_fact vga.group)"
e2e_state_is '.groups[0].pending' true
e2e_state_is '.errors | length' 0
e2e_expect '^@dmesg .*gpuvm: vm-passthrough: 1 GPU and 0 companion functions on vfio-pci, 0 failed' \
	"no gpuvm summary line in the kernel log"
e2e_reject '^gpuvm-init: warning' 'init warned'
