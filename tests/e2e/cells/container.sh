# shellcheck shell=sh
# The container scenario, its arm64 twin (under the SMMUv3) and, for the kernel matrix, on
# a Debian release's kernel ($E2E_ARGS: x86_64|arm64 [RELEASE];
# tests/e2e/matrix: gpuvm-container is "x86_64", arm64-container "arm64"): container mode
# (gpuvm.mode=container, the default), the Intel IOMMU or the SMMUv3, the stand-ins selected
# by ID. Three boots (with RELEASE, whose kernel boots (lib.sh's e2e_kernel), the last two:
# the stale binds):
#   plain     both stand-ins; gpuvm (the first thing init runs) leaves them alone (keep, no
#             override, result noop) and their own drivers, loaded after it (bochs by
#             /etc/modules-load, virtio_pci by a hook), take them. This is also the control
#             for gpuvm-race: without gpuvm's override these drivers do claim the stand-ins.
#   override  after gpuvm's boot-time run a hook binds the VGA stand-in to vfio-pci with
#             driver_override=vfio-pci (the GPU Operator's VFIO manager's way) and runs
#             `gpuvm apply` again: gpuvm unbinds it, clears the override and reprobes; bochs,
#             loaded afterwards, takes it.
#   ids       the "stale vfio-pci.ids= from the cmdline": vfio_pci.ids=1234:1111 on
#             the kernel command line, a hook loads vfio-pci (busybox modprobe passes the
#             cmdline's options, so vfio-pci claims the stand-in by that dynamic ID, as a
#             built-in or early-loaded vfio-pci would at boot) and runs `gpuvm apply` again:
#             gpuvm must take the stand-in off vfio-pci for good, so bochs, loaded afterwards,
#             takes it.
# What this proves and what not: the second `gpuvm apply` sees what a boot-time run would see
# on a host where vfio-pci got the GPU first; it does not prove that init runs gpuvm at the
# right moment (gpuvm-race does). The ids boot fails as long as gpuvm only unbinds and
# reprobes: vfio-pci's dynamic ID claims the device again at the reprobe (the dynamic ID has to
# go first: remove_id). The key is written vfio_pci.ids: busybox modprobe, unlike kmod and the
# kernel, matches only the underscore spelling. After the second apply the stand-in is on no
# driver: the state file names no vfio node.
# shellcheck disable=SC2086 # the cell's words
set -- $E2E_ARGS
arch=${1-} release=${2-}
case $arch in
x86_64)
	e2e_need_gpuvm
	[ -z "$release" ] || e2e_kernel "$release"
	image() { e2e_image "$@" --gpuvm "$E2E_GPUVM"; } # [--as NAME] first, as e2e_image wants
	boot() { e2e_boot --iommu intel "$@"; }
	;;
arm64)
	# shellcheck source=tests/e2e/arm64-lib.sh
	. "$E2E_ROOT/tests/e2e/arm64-lib.sh"
	a64_need "$release"
	image() { e2e_image "$@" --busybox "$A64_BUSYBOX" --gpuvm "$A64_GPUVM"; }
	boot() { a64_boot --iommu smmuv3 "$@"; }
	;;
*) e2e_fail "container: no such architecture '$arch' (tests/e2e/matrix)" || exit 1 ;;
esac

# plain: the default kernel only (the control for gpuvm-race)
if [ -z "$release" ]; then
	image --load "$E2E_BOCHS" --modules "virtio_pci virtio_gpu" \
		--add "$E2E_GUEST/gpuvm-check.sh:/init.d/50-gpuvm-check.sh"
	boot --log plain --gpu vga --gpu virtio \
		--append "gpuvm.mode=container gpuvm.ids=1234:1111,1af4:1050 e2e.load=virtio_pci"
	e2e_guest_done
	e2e_fact_is vga.driver bochs-drm
	e2e_fact_is vga.override '(null)'
	e2e_fact_is virtio.driver none
	e2e_fact_is virtio.driver_after_load virtio-pci
	e2e_fact_is virtio.override_after_load '(null)'
	e2e_fact_is dev_vfio ''
	e2e_state_is .result noop
	e2e_state_is .mode container
	e2e_state_is .mode_source cmdline
	e2e_state_is '[.devices[] | .action] | join(",")' keep,keep
	e2e_state_is '.modules | length' 0
	e2e_expect '^@dmesg .*gpuvm: container: 2 GPUs in place for the host driver, 0 failed' \
		"no gpuvm summary line in the kernel log"
	e2e_reject '^gpuvm-init: warning' 'init warned'
fi

image --as stale --modules "$E2E_BOCHS" \
	--add "$E2E_GUEST/gpuvm-stale-vfio.sh:/init.d/40-gpuvm-stale-vfio.sh" \
	--add "$E2E_GUEST/gpuvm-check.sh:/init.d/50-gpuvm-check.sh"
boot --log override --gpu vga \
	--append "gpuvm.mode=container gpuvm.ids=1234:1111 e2e.stale=override e2e.load=$E2E_BOCHS"
e2e_guest_done
e2e_fact_is stale.driver vfio-pci # the precondition
e2e_fact_is stale.override vfio-pci
e2e_fact_is rerun_rc 0
e2e_fact_is rerun.override '(null)'
e2e_fact_is rerun.driver none
e2e_fact_is vga.driver_after_load bochs-drm
e2e_state_is .result ok
e2e_state_is "$E2E_JQ_VGA | .action" unbind
e2e_state_is "$E2E_JQ_VGA | .driver_before" vfio-pci
e2e_state_is "$E2E_JQ_VGA | .driver_after" null
e2e_state_is "$E2E_JQ_VGA | .verified" true
e2e_state_is "$E2E_JQ_VGA | .result" ok
e2e_state_is "$E2E_JQ_VGA | .vfio_group" null
e2e_state_is "$E2E_JQ_VGA | .vfio_cdev" null
e2e_state_is .kernel "$E2E_KVER"

boot --log ids --gpu vga \
	--append "vfio_pci.ids=1234:1111 gpuvm.mode=container gpuvm.ids=1234:1111 e2e.stale=ids e2e.load=$E2E_BOCHS"
e2e_guest_done
e2e_fact_is stale.driver vfio-pci # the precondition: the stale ids took it
e2e_fact_is stale.override '(null)'
e2e_fact_is rerun_rc 0
e2e_fact_is rerun.driver none
e2e_fact_is vga.driver_after_load bochs-drm
e2e_state_is .result ok
e2e_state_is "$E2E_JQ_VGA | .action" unbind
e2e_state_is "$E2E_JQ_VGA | .driver_before" vfio-pci
e2e_state_is "$E2E_JQ_VGA | .result" ok
e2e_state_is "$E2E_JQ_VGA | .vfio_group" null
