# shellcheck shell=sh
# Issue 4, scenario 1: the standalone image with build/gpuvm, an Intel IOMMU (dmar0) and the VGA
# stand-in (1234:1111, selected by ID), gpuvm.mode=vm-passthrough. gpuvm, the first thing init
# runs, loads vfio-pci (libkmod) and binds the stand-in; bochs, its own driver, is in the image
# and loaded after gpuvm (/etc/modules-load) and does not take it. The state file says ok,
# driver_after vfio-pci, verified; /dev/vfio/GROUP exists; the kernel log has gpuvm's summary.
e2e_need_gpuvm
e2e_image --gpuvm "$E2E_GPUVM" --load bochs \
	--add "$E2E_GUEST/gpuvm-check.sh:/init.d/50-gpuvm-check.sh"
e2e_boot --iommu intel --gpu vga --append "gpuvm.mode=vm-passthrough gpuvm.ids=1234:1111"
e2e_guest_done
e2e_fact_match iommus '^dmar0 $'
e2e_fact_is vga.driver vfio-pci
e2e_fact_is vga.override vfio-pci
e2e_fact_is vga.vfio_node yes
e2e_fact_match modules '(^| )bochs( |$)'
e2e_fact_is type1 yes
e2e_state_is .result ok
e2e_state_is .mode vm-passthrough
e2e_state_is .mode_source cmdline
e2e_state_is .iommu.active true
e2e_state_is "$E2E_JQ_VGA | .action" bind
e2e_state_is "$E2E_JQ_VGA | .driver_before" null
e2e_state_is "$E2E_JQ_VGA | .driver_after" vfio-pci
e2e_state_is "$E2E_JQ_VGA | .verified" true
e2e_state_is "$E2E_JQ_VGA | .result" ok
e2e_state_is "$E2E_JQ_VGA | .iommu_group | tostring" "$(e2e_fact vga.group)"
e2e_state_is '.errors | length' 0
e2e_expect '^@dmesg .*gpuvm: vm-passthrough: 1 GPU and 0 companion functions on vfio-pci, 0 failed' \
	"no gpuvm summary line in the kernel log"
e2e_reject '^gpuvm-init: warning' 'init warned'
