# shellcheck shell=sh
# Issue 9: arm64-noiommu-hold with gpuvm.on_error=release: gpuvm leaves the stand-in to the
# host (no driver_override), reports the failure the same way (exit 3, kernel log, state
# file), and bochs, loaded after gpuvm, takes it.
# shellcheck source=tests/e2e/arm64-lib.sh
. "$E2E_ROOT/tests/e2e/arm64-lib.sh"
a64_need
a64_image --load bochs --add "$E2E_GUEST/gpuvm-check.sh:/init.d/50-gpuvm-check.sh"
a64_boot --iommu none --gpu vga \
	--append "gpuvm.mode=vm-passthrough gpuvm.ids=1234:1111 gpuvm.on_error=release"
e2e_guest_done
e2e_fact_is iommus ''
e2e_fact_is vga.driver bochs-drm
e2e_fact_is vga.override '(null)'
e2e_expect '^gpuvm-init: warning: gpuvm apply failed \(exit status 3\); the boot goes on$' \
	"init did not report gpuvm's exit status 3"
e2e_state_is .result failed
e2e_state_is .iommu.active false
e2e_state_is .settings.on_error.value release
e2e_state_is "$E2E_JQ_VGA | .result" released
e2e_state_match "$E2E_JQ_VGA | .reason" 'IOMMU is not active.*on_error=release'
e2e_state_match '.errors[]' 'IOMMU is not active'
e2e_expect '^@dmesg .*gpuvm: .*IOMMU is not active.*on_error=release' \
	'no gpuvm error about the IOMMU in the kernel log'
