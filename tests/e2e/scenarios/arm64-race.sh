# shellcheck shell=sh
# Issue 9: the race on arm64 under the SMMUv3. Both stand-ins (VGA 1234:1111, virtio-gpu
# 1af4:1050), selected by ID, vm-passthrough; neither has an IOMMU group before gpuvm binds
# them (two pending groups). Their own drivers arrive after gpuvm: bochs through
# /etc/modules-load, virtio_pci and virtio_gpu by modprobe in a hook (e2e.load=). Both stay on
# vfio-pci, each with the group its vfio-pci probe gave it.
# shellcheck source=tests/e2e/arm64-lib.sh
. "$E2E_ROOT/tests/e2e/arm64-lib.sh"
a64_need
a64_image --load bochs --modules "virtio_pci virtio_gpu" \
	--add "$E2E_GUEST/gpuvm-check.sh:/init.d/50-gpuvm-check.sh"
a64_boot --iommu smmuv3 --gpu vga --gpu virtio \
	--append "gpuvm.mode=vm-passthrough gpuvm.ids=1234:1111,1af4:1050 e2e.load=virtio_pci,virtio_gpu"
e2e_guest_done
e2e_fact_is vga.driver vfio-pci
e2e_fact_is virtio.driver vfio-pci
e2e_fact_is vga.vfio_node yes
e2e_fact_is virtio.vfio_node yes
e2e_reject '^@e2e load_failed=' 'a module of e2e.load= did not load'
e2e_fact_match modules '(^| )bochs( |.*)virtio_gpu( |.*)virtio_pci( |$)'
e2e_fact_is vga.driver_after_load vfio-pci
e2e_fact_is virtio.driver_after_load vfio-pci
e2e_fact_is virtio.override_after_load vfio-pci
e2e_state_is .result ok
e2e_state_is .iommu.groups 0
e2e_state_is '[.groups[] | select(.pending)] | length' 2
e2e_state_is "$E2E_JQ_VGA | .driver_after" vfio-pci
e2e_state_is "$E2E_JQ_VIRTIO | .driver_after" vfio-pci
e2e_state_is "$E2E_JQ_VGA | .iommu_group | tostring" "$(e2e_fact vga.group)"
e2e_state_is "$E2E_JQ_VIRTIO | .iommu_group | tostring" "$(e2e_fact virtio.group)"
e2e_state_is "[.devices[] | select(.verified)] | length" 2
e2e_expect '^@dmesg .*gpuvm: vm-passthrough: 2 GPUs and 0 companion functions on vfio-pci, 0 failed' \
	"no gpuvm summary line for 2 GPUs in the kernel log"
