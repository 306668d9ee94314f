# shellcheck shell=sh
# kernel-intel with an AMD IOMMU (ivhd0). It takes 00:01.0: the stand-in is found by its ID.
e2e_image --no-gpuvm --modules bochs --add "$E2E_GUEST/vfio-by-hand.sh:/init.d/50-vfio-by-hand.sh"
e2e_boot --iommu amd --gpu vga
e2e_guest_done
e2e_fact_match iommus '^ivhd0 $'
e2e_fact_is driver_before none
e2e_fact_is probe_write 0
e2e_fact_is driver vfio-pci
e2e_fact_is group_node yes
e2e_fact_is driver_after_own vfio-pci
