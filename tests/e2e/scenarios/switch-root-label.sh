# shellcheck shell=sh
# switch-root with root=LABEL=… (busybox findfs), rw, and an argument for the root's init.
e2e_rootfs "$E2E_OUT/$E2E_NAME.rootfs"
e2e_disk "$E2E_OUT/$E2E_NAME.rootfs" e2e-label
e2e_image --no-gpuvm --load "virtio_pci virtio_blk ext4"
e2e_boot --iommu none --disk "$E2E_DISK" --append "root=LABEL=e2e-label rootfstype=ext4 rw single"
e2e_guest_done
e2e_fact_is pid 1
e2e_fact_is root '/dev/vda ext4 rw'
e2e_fact_is args single
e2e_expect '^gpuvm-init: switching to root=LABEL=e2e-label \(/dev/vda\), init /sbin/init$'
