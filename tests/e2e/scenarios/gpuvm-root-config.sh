# shellcheck shell=sh
# The host config on the root when it is not there or cannot be read (gpuvm's busybox image,
# switch_root into an ext4 root on virtio-blk; no mode on the boot line, gpuvm.ids=1234:1111:
# the stand-in is not an NVIDIA GPU; e2e.load=bochs: the root's init loads the stand-in's own
# driver after switch_root, guest/gpuvm-check.sh reports before and after):
#   missing     the root has no /etc/gpuvm/gpuvm.conf: no mode anywhere, so the host stays as it
#               would be without gpuvm: the hold is released (container, mode_source default),
#               bochs takes the stand-in; boot.json says host_config missing, no warning.
#   unreadable  the root's gpuvm.conf is a symlink (to a file that says vm-passthrough): not
#               followed; a warning naming the file; on_error=hold (the default): the stand-in
#               stays held (gpuvm-hold, no driver, bochs kept away); host_config unreadable and
#               boot.why names the file.
# shellcheck source=tests/e2e/confdisk-lib.sh
. "$E2E_ROOT/tests/e2e/confdisk-lib.sh"
e2e_need_gpuvm
e2e_image --gpuvm "$E2E_GPUVM" --load "virtio_pci virtio_blk ext4"
tree=$E2E_OUT/$E2E_NAME.rootfs
e2e_rootfs "$tree" --modules bochs --add "$E2E_GUEST/gpuvm-check.sh:/etc/e2e-check.sh"
e2e_disk "$tree" e2e-root
append="root=/dev/vda gpuvm.ids=1234:1111 e2e.load=bochs"

e2e_boot --log missing --iommu intel --gpu vga --disk "$E2E_DISK" --append "$append"
e2e_guest_done
e2e_fact_is pid 1
e2e_fact_is vga.driver none
e2e_fact_is vga.override '(null)'
e2e_fact_is vga.driver_after_load bochs-drm
e2e_bootjson_is .mode container
e2e_bootjson_is .mode_source default
e2e_bootjson_is .boot.stage root
e2e_bootjson_is .boot.decided true
e2e_bootjson_is .boot.host_config missing
e2e_bootjson_is .boot.sysroot /newroot
e2e_bootjson_is '.errors | length' 0
e2e_bootjson_is '.warnings | length' 0
e2e_expect '^@dmesg .*gpuvm: config: no /etc/gpuvm/gpuvm.conf on the root at /newroot: no mode is set'

mkdir -p "$tree/etc/gpuvm"
printf 'mode=vm-passthrough\n' >"$tree/etc/gpuvm/real.conf"
ln -s real.conf "$tree/etc/gpuvm/gpuvm.conf"
e2e_disk "$tree" e2e-root
e2e_boot --log unreadable --iommu intel --gpu vga --disk "$E2E_DISK" --append "$append"
e2e_guest_done
e2e_fact_is pid 1
e2e_fact_is vga.driver none
e2e_fact_is vga.override gpuvm-hold
e2e_fact_is vga.driver_after_load none
e2e_fact_is vga.override_after_load gpuvm-hold
e2e_bootjson_is .boot.stage root
e2e_bootjson_is .boot.host_config unreadable
e2e_bootjson_is .boot.sysroot /newroot
v=$(e2e_bootjson .boot.why)
case $v in
*/etc/gpuvm/gpuvm.conf*) ;;
*) e2e_fail "boot.why does not name the file: '$v'" ;;
esac
e2e_expect '^@dmesg .*gpuvm: config: /newroot/etc/gpuvm/gpuvm.conf: .*; the GPUs stay held \(on_error=hold\)'
