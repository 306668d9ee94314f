# shellcheck shell=sh
# switch_root into a real root disk (ext4 on virtio-blk, root=/dev/vda;
# the initramfs loads virtio_pci, virtio_blk and ext4 after gpuvm), Intel IOMMU; the root's own
# init (guest/root-init.sh, PID 1) runs /etc/e2e-check.sh (guest/gpuvm-check.sh), which loads
# bochs from the root disk's modules (the initramfs has no bochs) and reads the driver link
# again. /run (moved into the root) still holds gpuvm's state file and boot.json. One image
# (with guest/gpuvm-first.sh as an /init.d hook: what the first call alone did), one disk:
#   pin       gpuvm.mode=vm-passthrough on the boot line and no config on the root: the first
#             call binds at once (no hold; the hook sees vfio-pci and a boot.json decided at
#             stage first from the command line), init's last call finds no config on the
#             root, which changes nothing: the records stay the first call's (result ok,
#             stage first); bochs loaded by the root's init does not take it: still vfio-pci.
#   1-container, 2-vm-passthrough, 3-container
#             no mode on the boot line (gpuvm.ids=1234:1111: the stand-in is not an NVIDIA
#             GPU); the root's /etc/gpuvm/gpuvm.conf says the mode and is edited on the disk
#             between the boots (confdisk-lib.sh's rootconf_cycle: the image's sha256 is
#             checked unchanged): the stand-in held at the first call, then decided by init
#             before switch_root (gpuvm apply --resume --sysroot /newroot): bochs takes it
#             once the root loads it / vfio-pci, bochs does not take it / bochs again.
# $E2E_ARGS (tests/e2e/matrix): nothing, or a Debian release whose kernel boots (the kernel
# kernel matrix: switch_root on the oldest and the newest kernel; lib.sh's e2e_kernel).
# shellcheck source=tests/e2e/confdisk-lib.sh
. "$E2E_ROOT/tests/e2e/confdisk-lib.sh"
e2e_need_gpuvm
[ -z "$E2E_ARGS" ] || e2e_kernel "$E2E_ARGS"
e2e_rootfs "$E2E_OUT/$E2E_NAME.rootfs" --modules "$E2E_BOCHS" \
	--add "$E2E_GUEST/gpuvm-check.sh:/etc/e2e-check.sh"
mkdir -p "$E2E_OUT/$E2E_NAME.rootfs/etc/gpuvm"
e2e_disk "$E2E_OUT/$E2E_NAME.rootfs" e2e-root
e2e_image --gpuvm "$E2E_GPUVM" --load "virtio_pci virtio_blk ext4" \
	--add "$E2E_GUEST/gpuvm-first.sh:/init.d/40-gpuvm-first.sh"
e2e_boot --log pin --iommu intel --gpu vga --disk "$E2E_DISK" \
	--append "root=/dev/vda gpuvm.mode=vm-passthrough gpuvm.ids=1234:1111 e2e.load=$E2E_BOCHS"
e2e_guest_done
e2e_expect '^gpuvm-init: switching to root=/dev/vda \(/dev/vda\), init /sbin/init$'
e2e_fact_is pid 1
e2e_fact_is root '/dev/vda ext4 ro'
e2e_fact_is run tmpfs
e2e_fact_is first.vga.driver vfio-pci
e2e_fact_is first.vga.override vfio-pci
e2e_firstjson_is .result ok
e2e_firstjson_is .mode_source cmdline
e2e_firstjson_is .boot.stage first
e2e_firstjson_is .boot.decided true
e2e_firstjson_is "$E2E_JQ_VGA | .driver_override" null
e2e_firstjson_is "$E2E_JQ_VGA | .verified" true
e2e_reject 'GPUs? held until' 'the pin held the GPUs'
e2e_fact_is vga.driver vfio-pci
e2e_fact_is vga.override vfio-pci
e2e_fact_is vga.vfio_node yes
e2e_reject '^@e2e load_failed=' 'bochs did not load from the root disk'
e2e_fact_match modules "(^| )$E2E_BOCHS_MOD( |\$)"
e2e_fact_is vga.driver_after_load vfio-pci
e2e_fact_is vga.override_after_load vfio-pci
e2e_fact_is state yes
e2e_state_is .result ok
e2e_state_is .mode_source cmdline
e2e_state_is "$E2E_JQ_VGA | .driver_after" vfio-pci
e2e_bootjson_is .boot.stage first
e2e_bootjson_is .boot.decided true
e2e_expect '^@dmesg .*gpuvm: vm-passthrough: 1 GPU and 0 companion functions on vfio-pci, 0 failed'
e2e_expect '^@dmesg .*gpuvm: config: no /etc/gpuvm/gpuvm.conf on the root at /newroot: the kernel command line decides'
e2e_expect "^@dmesg .*gpuvm: config: the root's config changes nothing over the kernel command line"

# rootconf_cycle's boot: no mode on the line; the check reports after bochs loaded.
cycle_boot() {
	e2e_boot --log "$1" --iommu intel --gpu vga --disk "$E2E_DISK" \
		--append "root=/dev/vda gpuvm.ids=1234:1111 e2e.load=$E2E_BOCHS"
	e2e_fact_is first.vga.driver none
	e2e_fact_is first.vga.override gpuvm-hold
	e2e_firstjson_is .boot.decided false
	e2e_firstjson_is .boot.stage first
	e2e_bootjson_is .boot.sysroot /newroot
	e2e_fact_is pid 1
}
rootconf_cycle cycle_boot vga.driver_after_load vga.override_after_load
