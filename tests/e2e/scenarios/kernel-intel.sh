# shellcheck shell=sh
# The kernel path gpuvm drives, by hand, without gpuvm: Intel IOMMU (on by default in Debian's
# kernel: CONFIG_INTEL_IOMMU_DEFAULT_ON_INTGPU_OFF), the VGA stand-in (1234:1111) bound to
# vfio-pci through driver_override + drivers_probe; /dev/vfio/GROUP appears; bochs loaded
# afterwards does not take it.
e2e_image --no-gpuvm --modules bochs --add "$E2E_GUEST/vfio-by-hand.sh:/init.d/50-vfio-by-hand.sh"
e2e_boot --iommu intel --gpu vga
e2e_guest_done
e2e_fact_match iommus '^dmar0 $'
e2e_fact_is driver_before none
e2e_fact_is probe_write 0
e2e_fact_is driver vfio-pci
e2e_fact_is group_node yes
e2e_fact_is driver_after_own vfio-pci
e2e_fact_match modules '(^| )bochs( |$)'
