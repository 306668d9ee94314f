# shellcheck shell=sh
# No IOMMU: vfio-pci's probe fails with -22 (no IOMMU group), the drivers_probe write still
# reports success, the device ends on no driver, and its driver_override keeps bochs away.
e2e_image --no-gpuvm --modules bochs --add "$E2E_GUEST/vfio-by-hand.sh:/init.d/50-vfio-by-hand.sh"
e2e_boot --iommu none --gpu vga
e2e_guest_done
e2e_fact_is iommus ''
e2e_fact_is group none
e2e_fact_is probe_write 0
e2e_fact_is driver none
e2e_fact_is driver_after_own none
e2e_expect '^@dmesg .*vfio-pci: probe of [0-9a-f:.]+ failed with error -22' \
	'no "vfio-pci: probe of … failed with error -22" in the kernel log'
