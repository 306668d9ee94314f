# shellcheck shell=sh
# Issue 9: container mode on arm64 under the SMMUv3 (gpuvm-container's three boots):
#   plain     gpuvm leaves both stand-ins alone; their own drivers, loaded after it, take
#             them (the control for arm64-race)
#   override  a hook binds the VGA stand-in to vfio-pci with driver_override (the VFIO
#             manager's way) after gpuvm's boot-time run and runs `gpuvm apply` again: gpuvm
#             takes it off vfio-pci and clears the override; bochs takes it
#   ids       vfio_pci.ids=1234:1111 on the command line: vfio-pci claims the stand-in by
#             that dynamic ID when the hook loads it; the second `gpuvm apply` removes the ID
#             and unbinds; bochs takes it
# shellcheck source=tests/e2e/arm64-lib.sh
. "$E2E_ROOT/tests/e2e/arm64-lib.sh"
a64_need
a64_image --load bochs --modules "virtio_pci virtio_gpu" \
	--add "$E2E_GUEST/gpuvm-check.sh:/init.d/50-gpuvm-check.sh"
a64_boot --log plain --iommu smmuv3 --gpu vga --gpu virtio \
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
e2e_state_is '[.devices[] | .action] | join(",")' keep,keep
e2e_state_is '.modules | length' 0
e2e_expect '^@dmesg .*gpuvm: container: 2 GPUs in place for the host driver, 0 failed' \
	"no gpuvm summary line in the kernel log"
e2e_reject '^gpuvm-init: warning' 'init warned'

e2e_image --as stale --busybox "$A64_BUSYBOX" --gpuvm "$A64_GPUVM" --modules bochs \
	--add "$E2E_GUEST/gpuvm-stale-vfio.sh:/init.d/40-gpuvm-stale-vfio.sh" \
	--add "$E2E_GUEST/gpuvm-check.sh:/init.d/50-gpuvm-check.sh"
a64_boot --log override --iommu smmuv3 --gpu vga \
	--append "gpuvm.mode=container gpuvm.ids=1234:1111 e2e.stale=override e2e.load=bochs"
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
e2e_state_is "$E2E_JQ_VGA | .verified" true

a64_boot --log ids --iommu smmuv3 --gpu vga \
	--append "vfio_pci.ids=1234:1111 gpuvm.mode=container gpuvm.ids=1234:1111 e2e.stale=ids e2e.load=bochs"
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
