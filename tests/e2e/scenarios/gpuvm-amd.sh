# shellcheck shell=sh
# Issue 4, scenario 2: gpuvm-intel under an AMD IOMMU (-device amd-iommu, unit ivhd0). The AMD
# IOMMU is the PCI function 00:01.0 and moves the stand-in to 00:02.0: gpuvm.ids= finds it by ID.
e2e_need_gpuvm
e2e_image --gpuvm "$E2E_GPUVM" --load bochs \
	--add "$E2E_GUEST/gpuvm-check.sh:/init.d/50-gpuvm-check.sh"
e2e_boot --iommu amd --gpu vga --append "gpuvm.mode=vm-passthrough gpuvm.ids=1234:1111"
e2e_guest_done
e2e_fact_match iommus '^ivhd0 $'
e2e_fact_is vga.device 0000:00:02.0
e2e_fact_is vga.driver vfio-pci
e2e_fact_is vga.override vfio-pci
e2e_fact_is vga.vfio_node yes
e2e_fact_match modules '(^| )bochs( |$)'
e2e_fact_is type1 yes
e2e_state_is .result ok
e2e_state_is .mode vm-passthrough
e2e_state_is .iommu.active true
e2e_state_is .iommu.unit ivhd0
e2e_state_is "$E2E_JQ_VGA | .address" 0000:00:02.0
e2e_state_is "$E2E_JQ_VGA | .action" bind
e2e_state_is "$E2E_JQ_VGA | .driver_after" vfio-pci
e2e_state_is "$E2E_JQ_VGA | .verified" true
e2e_state_is "$E2E_JQ_VGA | .result" ok
e2e_state_is "$E2E_JQ_VGA | .iommu_group | tostring" "$(e2e_fact vga.group)"
e2e_state_is '.errors | length' 0
e2e_expect '^@dmesg .*gpuvm: vm-passthrough: 1 GPU and 0 companion functions on vfio-pci, 0 failed' \
	"no gpuvm summary line in the kernel log"
e2e_reject '^gpuvm-init: warning' 'init warned'
