# shellcheck shell=sh
# The config on a vfat partition of a GPT disk, named by its PARTUUID with a path of
# its own (gpuvm.config=PARTUUID=…:/gpuvm.conf on the kernel command line; the image has no
# config). gpuvm finds the partition through the disk's partition table (libblkid), mounts it
# as vfat (loading vfat; the kernel asks for its code pages) and binds the stand-in.
# shellcheck source=tests/e2e/confdisk-lib.sh
. "$E2E_ROOT/tests/e2e/confdisk-lib.sh"
e2e_need_gpuvm
uuid=6a1c1b5e-0f4e-4d38-9a55-2d9b3c1e7f10
confdisk_conf 'mode=vm-passthrough\r\nids=1234:1111\r\n'
confdisk_gpt_vfat "$E2E_OUT/$E2E_NAME.conf.disk" "$uuid" "$CONFDISK_CONF"
confdisk_args "$E2E_OUT/$E2E_NAME.conf.disk"
e2e_image --gpuvm "$E2E_GPUVM" --load "virtio_pci virtio_blk bochs" \
	--modules "vfat nls_cp437 nls_ascii nls_utf8" \
	--add "$E2E_GUEST/gpuvm-check.sh:/init.d/50-gpuvm-check.sh"
# shellcheck disable=SC2086 # QEMU arguments
e2e_boot --iommu intel --gpu vga \
	--append "gpuvm.config=PARTUUID=$(echo "$uuid" | tr a-f A-F):/gpuvm.conf gpuvm.ids=1234:1111" \
	-- $CONFDISK_ARGS
e2e_guest_done
e2e_fact_is vga.driver vfio-pci
e2e_fact_match modules '(^| )vfat( |$)'
e2e_fact_is gpuvm_mounts ''
e2e_state_is .mode vm-passthrough
e2e_state_is .mode_source "PARTUUID=$(echo "$uuid" | tr a-f A-F):/gpuvm.conf:1"
e2e_state_is .config_disk.status disk
e2e_state_is .config_disk.device /dev/vda1
e2e_state_is .config_disk.fstype vfat
e2e_state_is "$E2E_JQ_VGA | .driver_override" gpuvm-hold
e2e_state_is "$E2E_JQ_VGA | .driver_before" null
e2e_fact_match modules '(^| )bochs( |$)'
e2e_state_is '.errors | length' 0
