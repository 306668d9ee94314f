# shellcheck shell=sh
# Issue 9: arm64-passthrough on a virt machine without the SMMU (-machine virt): no unit in
# /sys/class/iommu, no group. gpuvm still names the problem: the IOMMU is not active; it holds
# the stand-in (driver_override vfio-pci, no driver; on_error=hold, the default) and exits 3,
# which init reports; bochs, loaded after gpuvm, is kept away. The boot goes on.
# shellcheck source=tests/e2e/arm64-lib.sh
. "$E2E_ROOT/tests/e2e/arm64-lib.sh"
a64_need
a64_image --load bochs --add "$E2E_GUEST/gpuvm-check.sh:/init.d/50-gpuvm-check.sh"
a64_boot --iommu none --gpu vga --append "gpuvm.mode=vm-passthrough gpuvm.ids=1234:1111"
e2e_guest_done
e2e_reject 'arm-smmu-v3' 'an SMMU although the machine has none'
e2e_fact_is iommus ''
e2e_fact_is vga.group none
e2e_fact_is vga.driver none
e2e_fact_is vga.override vfio-pci
e2e_fact_match modules '(^| )bochs( |$)'
e2e_expect '^gpuvm-init: warning: gpuvm apply failed \(exit status 3\); the boot goes on$' \
	"init did not report gpuvm's exit status 3"
e2e_state_is .result failed
e2e_state_is .iommu.active false
e2e_state_is .iommu.cpu_vendor arm
e2e_state_is .iommu.groups_at_probe false
e2e_state_is .iommu_unusable true
e2e_state_is "$E2E_JQ_VGA | .action" hold
e2e_state_is "$E2E_JQ_VGA | .result" held
e2e_state_is "$E2E_JQ_VGA | .driver_after" null
e2e_state_match "$E2E_JQ_VGA | .reason" 'IOMMU is not active'
e2e_state_match '.errors[]' 'IOMMU is not active'
e2e_expect '^@dmesg .*gpuvm: .*IOMMU is not active.*held' \
	'no gpuvm error about the IOMMU in the kernel log'
