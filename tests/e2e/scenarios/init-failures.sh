# shellcheck shell=sh
# When init cannot go on it says why on the console (through the kernel log) and the kernel
# panics (panic=-1 ends the VM): a root device that never appears, an init= that is not there.
e2e_rootfs "$E2E_OUT/$E2E_NAME.rootfs"
e2e_disk "$E2E_OUT/$E2E_NAME.rootfs"
e2e_image --no-gpuvm --load "virtio_pci virtio_blk ext4"

e2e_boot --log no-root --iommu none --append "root=/dev/vdz rootdelay=2"
e2e_boot_end panic
e2e_expect '^gpuvm-init: waiting up to 2 s for root=/dev/vdz$'
e2e_expect '^\[ *[0-9.]+\] gpuvm-init: FATAL: root=/dev/vdz did not appear in 2 s \(modules loaded: .*virtio_blk'
e2e_expect 'Kernel panic - not syncing: Attempted to kill init'

e2e_boot --log bad-init --iommu none --disk "$E2E_DISK" --append "root=/dev/vda init=/sbin/nothing"
e2e_boot_end panic
e2e_expect '^\[ *[0-9.]+\] gpuvm-init: FATAL: init=/sbin/nothing is not an executable file in root=/dev/vda$'
e2e_reject '^@e2e root-init' 'the root init ran'
