# shellcheck shell=sh
# init runs /sbin/gpuvm apply --defer first (nothing loaded yet, /proc /sys /dev /run
# mounted), then, with root= mounted on /newroot, apply --resume --sysroot /newroot; it
# reports each failure and boots on; the state file left in /run is still there after
# switch_root. The gpuvm here is guest/fake-gpuvm.sh: this tests init, not gpuvm.
e2e_rootfs "$E2E_OUT/$E2E_NAME.rootfs"
e2e_disk "$E2E_OUT/$E2E_NAME.rootfs"
e2e_image --gpuvm "$E2E_GUEST/fake-gpuvm.sh" --load "virtio_pci virtio_blk ext4"
e2e_boot --iommu intel --gpu vga --disk "$E2E_DISK" --append "root=/dev/vda"
e2e_guest_done
# The first call's lines come first: nothing loaded, only the pseudo file systems.
first=$(grep -m 3 '^@e2e gpuvm_' "$E2E_LOG" | tr -d '\r')
[ "$first" = "$(printf '%s\n' '@e2e gpuvm_args=apply --defer' '@e2e gpuvm_modules=' \
	'@e2e gpuvm_mounts=/ /dev /proc /run /sys ')" ] || e2e_fail "the first gpuvm call saw: $first"
e2e_fact_is gpuvm_args "apply --resume --sysroot /newroot"
e2e_fact_match gpuvm_mounts ' /newroot '
e2e_expect '^gpuvm-init: warning: gpuvm apply failed \(exit status 3\); the boot goes on$'
e2e_expect '^gpuvm-init: warning: gpuvm apply --resume --sysroot /newroot failed \(exit status 3\); the boot goes on$'
e2e_fact_is pid 1
e2e_fact_is gpuvm_state '{"fake":true}'
