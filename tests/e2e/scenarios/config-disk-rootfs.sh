# shellcheck shell=sh
# The config on the root file system itself, named by its label
# (gpuvm.config=LABEL=e2e-root: /etc/gpuvm/gpuvm.conf of the root disk says vm-passthrough),
# then switch_root into that same file system. gpuvm holds the stand-in, init loads the disk's
# driver, gpuvm mounts the root read-only, reads, unmounts and binds; init then mounts the root
# itself and switches to it; its init (PID 1) loads bochs from the root's modules: the
# stand-in stays on vfio-pci.
e2e_need_gpuvm
e2e_rootfs "$E2E_OUT/$E2E_NAME.rootfs" --modules bochs \
	--add "$E2E_GUEST/gpuvm-check.sh:/etc/e2e-check.sh"
mkdir -p "$E2E_OUT/$E2E_NAME.rootfs/etc/gpuvm"
printf 'nvidia.com/gpu.workload.config=vm-passthrough\n' >"$E2E_OUT/$E2E_NAME.rootfs/etc/gpuvm/gpuvm.conf"
e2e_disk "$E2E_OUT/$E2E_NAME.rootfs" e2e-root
e2e_image --gpuvm "$E2E_GPUVM" --load "virtio_pci virtio_blk ext4"
e2e_boot --iommu intel --gpu vga --disk "$E2E_DISK" \
	--append "root=/dev/vda gpuvm.config=LABEL=e2e-root gpuvm.ids=1234:1111 e2e.load=bochs"
e2e_guest_done
e2e_expect '^gpuvm-init: switching to root=/dev/vda \(/dev/vda\), init /sbin/init$'
e2e_fact_is pid 1
e2e_fact_is root '/dev/vda ext4 ro'
e2e_fact_is vga.driver vfio-pci
e2e_fact_is vga.driver_after_load vfio-pci
e2e_fact_is run_gpuvm 'boot.json metrics pinned state.json '
e2e_fact_is gpuvm_mounts ''
e2e_state_is .mode vm-passthrough
e2e_state_is .mode_source LABEL=e2e-root:/etc/gpuvm/gpuvm.conf:1
e2e_state_is .config_disk.status disk
e2e_state_is .config_disk.device /dev/vda
e2e_state_is "$E2E_JQ_VGA | .driver_override" gpuvm-hold
e2e_state_is '.errors | length' 0
