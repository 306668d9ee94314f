# shellcheck shell=sh
# Issue 4, scenario 11: switch_root into a real root disk (ext4 on virtio-blk, root=/dev/vda;
# the initramfs loads virtio_pci, virtio_blk and ext4 after gpuvm), Intel IOMMU,
# vm-passthrough. gpuvm binds the stand-in in the initramfs; after switch_root the root's own
# init (guest/root-init.sh, PID 1) runs /etc/e2e-check.sh (guest/gpuvm-check.sh), which loads
# bochs from the root disk's modules (the initramfs has no bochs) and reads the driver link:
# still vfio-pci. /run (moved into the root) still holds gpuvm's state file.
# $E2E_ARGS (tests/e2e/matrix): nothing, or a Debian release whose kernel boots (the kernel
# matrix of issue 19: switch_root on the oldest and the newest kernel; lib.sh's e2e_kernel).
e2e_need_gpuvm
[ -z "$E2E_ARGS" ] || e2e_kernel "$E2E_ARGS"
e2e_rootfs "$E2E_OUT/$E2E_NAME.rootfs" --modules "$E2E_BOCHS" \
	--add "$E2E_GUEST/gpuvm-check.sh:/etc/e2e-check.sh"
e2e_disk "$E2E_OUT/$E2E_NAME.rootfs" e2e-root
e2e_image --gpuvm "$E2E_GPUVM" --load "virtio_pci virtio_blk ext4"
e2e_boot --iommu intel --gpu vga --disk "$E2E_DISK" \
	--append "root=/dev/vda gpuvm.mode=vm-passthrough gpuvm.ids=1234:1111 e2e.load=$E2E_BOCHS"
e2e_guest_done
e2e_expect '^gpuvm-init: switching to root=/dev/vda \(/dev/vda\), init /sbin/init$'
e2e_fact_is pid 1
e2e_fact_is root '/dev/vda ext4 ro'
e2e_fact_is run tmpfs
e2e_fact_is vga.driver vfio-pci
e2e_fact_is vga.override vfio-pci
e2e_fact_is vga.vfio_node yes
e2e_reject '^@e2e load_failed=' 'bochs did not load from the root disk'
e2e_fact_match modules "(^| )$E2E_BOCHS_MOD( |\$)"
e2e_fact_is vga.driver_after_load vfio-pci
e2e_fact_is vga.override_after_load vfio-pci
e2e_fact_is state yes
e2e_state_is .result ok
e2e_state_is "$E2E_JQ_VGA | .driver_after" vfio-pci
e2e_state_is "$E2E_JQ_VGA | .verified" true
e2e_expect '^@dmesg .*gpuvm: vm-passthrough: 1 GPU and 0 companion functions on vfio-pci, 0 failed'
