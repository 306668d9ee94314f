# shellcheck shell=sh
# init finds root=/dev/vda on virtio-blk (its modules loaded after gpuvm), mounts it, moves
# /run into it and switch_roots to its /sbin/init (guest/root-init.sh) as PID 1.
e2e_rootfs "$E2E_OUT/$E2E_NAME.rootfs"
e2e_disk "$E2E_OUT/$E2E_NAME.rootfs" e2e-root
e2e_image --no-gpuvm --load "virtio_pci virtio_blk ext4" \
	--add "$E2E_GUEST/mark-run.sh:/init.d/50-mark-run.sh"
e2e_boot --iommu intel --gpu vga --disk "$E2E_DISK" --append "root=/dev/vda"
e2e_guest_done
e2e_fact_is pid 1
e2e_fact_is root '/dev/vda ext4 ro'
e2e_fact_is run tmpfs
e2e_fact_is run_marker 'initramfs was here'
e2e_fact_match mounts '^/ /dev /proc /run /sys $'
