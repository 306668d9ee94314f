# shellcheck shell=sh
# kernel-intel with the other stand-in: virtio-gpu-pci (1af4:1050), whose own driver is
# virtio-pci (module virtio_pci; the DRM driver virtio_gpu binds the virtio device after it).
e2e_image --no-gpuvm --modules "virtio_pci virtio_gpu" \
	--add "$E2E_GUEST/vfio-by-hand.sh:/init.d/50-vfio-by-hand.sh"
e2e_boot --iommu intel --gpu virtio --append "e2e.id=1af4:1050 e2e.driver=virtio_pci"
e2e_guest_done
e2e_fact_match iommus '^dmar0 $'
e2e_fact_is driver_before none
e2e_fact_is driver vfio-pci
e2e_fact_is group_node yes
e2e_fact_is driver_after_own vfio-pci
e2e_fact_match modules '(^| )virtio_pci( |$)'
