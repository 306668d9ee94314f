# shellcheck shell=sh
# Issue 4, scenario 3: no IOMMU at all, gpuvm.mode=vm-passthrough, on_error=hold (the default).
# gpuvm cannot bind (vfio-pci needs an IOMMU group): it holds the stand-in (driver_override
# vfio-pci, no driver), says why in the kernel log and the state file (result failed,
# iommu.active false) and exits 3, which init reports as a warning; the boot goes on. The
# stand-in's own driver, bochs, loaded after gpuvm (/etc/modules-load), is kept away by the
# override: the stand-in ends on no driver, so a VM GPU never lands on a host driver.
e2e_need_gpuvm
e2e_image --gpuvm "$E2E_GPUVM" --load bochs \
	--add "$E2E_GUEST/gpuvm-check.sh:/init.d/50-gpuvm-check.sh"
e2e_boot --iommu none --gpu vga --append "gpuvm.mode=vm-passthrough gpuvm.ids=1234:1111"
e2e_guest_done
e2e_fact_is iommus ''
e2e_fact_is vga.group none
e2e_fact_is vga.driver none
e2e_fact_is vga.override vfio-pci
e2e_fact_match modules '(^| )bochs( |$)'
e2e_expect '^gpuvm-init: warning: gpuvm apply failed \(exit status 3\); the boot goes on$' \
	"init did not report gpuvm's exit status 3"
e2e_state_is .result failed
e2e_state_is .mode vm-passthrough
e2e_state_is .iommu.active false
e2e_state_is .iommu_unusable true
e2e_state_is "$E2E_JQ_VGA | .action" hold
e2e_state_is "$E2E_JQ_VGA | .result" held
e2e_state_is "$E2E_JQ_VGA | .driver_after" null
e2e_state_match "$E2E_JQ_VGA | .reason" 'IOMMU is not active'
e2e_state_match '.errors[]' 'IOMMU is not active'
e2e_expect '^@dmesg .*gpuvm: .*IOMMU is not active.*held' \
	'no gpuvm error about the IOMMU in the kernel log'
