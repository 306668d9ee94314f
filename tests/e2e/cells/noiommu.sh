# shellcheck shell=sh
# No IOMMU, held or released, and their arm64 twins, one cell an architecture, an
# on_error and, for the kernel matrix, maybe a Debian release whose kernel boots
# (lib.sh's e2e_kernel) ($E2E_ARGS: x86_64|arm64 hold|release [RELEASE]; tests/e2e/matrix):
# no IOMMU at all (x86_64:
# q35 without intel-iommu; arm64: -machine virt without the SMMU), gpuvm.mode=vm-passthrough.
# gpuvm cannot bind (vfio-pci needs an IOMMU group) and says why, the same way on both: the
# kernel log, the state file (result failed, iommu.active false, the cause in errors), exit 3,
# which init reports as a warning; the boot goes on.
#  - on_error=hold (the default): the stand-in is held (driver_override vfio-pci, no driver);
#    bochs, loaded after gpuvm (/etc/modules-load), is kept away: a VM GPU never lands on a
#    host driver. On no driver it has no vfio node: vfio_group and vfio_cdev are null.
#  - on_error=release: the stand-in is left to the host (no driver_override), and bochs takes it.
# shellcheck disable=SC2086 # the cell's words
set -- $E2E_ARGS
arch=${1-} on_error=${2-} release=${3-}
args="gpuvm.mode=vm-passthrough gpuvm.ids=1234:1111"
[ "$on_error" = hold ] || args="$args gpuvm.on_error=$on_error"
case $arch:$on_error in
x86_64:hold | x86_64:release)
	e2e_need_gpuvm
	[ -z "$release" ] || e2e_kernel "$release"
	e2e_image --gpuvm "$E2E_GPUVM" --load "$E2E_BOCHS" \
		--add "$E2E_GUEST/gpuvm-check.sh:/init.d/50-gpuvm-check.sh"
	e2e_boot --iommu none --gpu vga --append "$args"
	;;
arm64:hold | arm64:release)
	# shellcheck source=tests/e2e/arm64-lib.sh
	. "$E2E_ROOT/tests/e2e/arm64-lib.sh"
	a64_need "$release"
	a64_image --load "$E2E_BOCHS" --add "$E2E_GUEST/gpuvm-check.sh:/init.d/50-gpuvm-check.sh"
	a64_boot --iommu none --gpu vga --append "$args"
	;;
*)
	e2e_fail "noiommu: no such cell '$E2E_ARGS' (tests/e2e/matrix)" || exit 1
	;;
esac
e2e_guest_done
if [ "$arch" = arm64 ]; then
	e2e_reject 'arm-smmu-v3' 'an SMMU although the machine has none'
	e2e_state_is .iommu.cpu_vendor arm
	e2e_state_is .iommu.groups_at_probe false
fi
e2e_fact_is iommus ''
e2e_expect '^gpuvm-init: warning: gpuvm apply failed \(exit status 3\); the boot goes on$' \
	"init did not report gpuvm's exit status 3"
e2e_state_is .result failed
e2e_state_is .mode vm-passthrough
e2e_state_is .iommu.active false
e2e_state_is .iommu_unusable true
e2e_state_is .settings.on_error.value "$on_error"
e2e_state_is .kernel "$E2E_KVER"
e2e_state_match '.errors[]' 'vm-passthrough needs an active IOMMU and none is active'
e2e_state_match '.errors[]' 'IOMMU is not active'
if [ "$on_error" = hold ]; then
	e2e_fact_is vga.group none
	e2e_fact_is vga.driver none
	e2e_fact_is vga.override vfio-pci
	e2e_fact_match modules "(^| )$E2E_BOCHS_MOD( |\$)"
	e2e_state_is "$E2E_JQ_VGA | .action" hold
	e2e_state_is "$E2E_JQ_VGA | .vfio_group" null
	e2e_state_is "$E2E_JQ_VGA | .vfio_cdev" null
	e2e_state_is "$E2E_JQ_VGA | .result" held
	e2e_state_is "$E2E_JQ_VGA | .driver_after" null
	e2e_state_match "$E2E_JQ_VGA | .reason" 'IOMMU is not active'
	e2e_expect '^@dmesg .*gpuvm: .*IOMMU is not active.*held' \
		'no gpuvm error about the IOMMU in the kernel log'
else
	e2e_fact_is vga.driver bochs-drm
	e2e_fact_is vga.override '(null)'
	e2e_state_is "$E2E_JQ_VGA | .result" released
	e2e_state_match "$E2E_JQ_VGA | .reason" 'IOMMU is not active.*on_error=release'
	e2e_expect '^@dmesg .*gpuvm: .*IOMMU is not active.*on_error=release' \
		'no gpuvm error about the IOMMU in the kernel log'
fi
