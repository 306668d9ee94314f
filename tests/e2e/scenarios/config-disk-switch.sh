# shellcheck shell=sh
# The label-mirror story. One image (no config; the boot line says
# gpuvm.config=LABEL=gpuvm-conf gpuvm.ids=1234:1111), one config disk; between the two boots only the file on the disk changes
# (debugfs -w replaces /etc/gpuvm/gpuvm.conf in place; the image is not rebuilt):
#   passthrough  the disk says the label line nvidia.com/gpu.workload.config=vm-passthrough:
#                the stand-in ends on vfio-pci
#   container    the disk says container: bochs takes the stand-in
# shellcheck source=tests/e2e/confdisk-lib.sh
. "$E2E_ROOT/tests/e2e/confdisk-lib.sh"
e2e_need_gpuvm
e2e_image --gpuvm "$E2E_GPUVM" --load "virtio_pci virtio_blk bochs" \
	--modules ext4 --add "$E2E_GUEST/gpuvm-check.sh:/init.d/50-gpuvm-check.sh"
img_sum=$(md5sum <"$E2E_IMG")
line='gpuvm.config=LABEL=gpuvm-conf gpuvm.ids=1234:1111'
cdisk=$E2E_OUT/$E2E_NAME.conf.disk
confdisk_conf '# written by the label mirror\nnvidia.com/gpu.workload.config=vm-passthrough\nids=1234:1111\n'
confdisk_ext4 "$cdisk" gpuvm-conf "$CONFDISK_CONF"
confdisk_args "$cdisk"

# shellcheck disable=SC2086 # QEMU arguments
e2e_boot --log passthrough --iommu intel --gpu vga --append "$line" -- $CONFDISK_ARGS
e2e_guest_done
e2e_fact_is vga.driver vfio-pci
e2e_state_is .mode vm-passthrough
e2e_state_is .mode_source LABEL=gpuvm-conf:/etc/gpuvm/gpuvm.conf:2
e2e_state_is .config_disk.status disk
e2e_state_is "$E2E_JQ_VGA | .driver_before" null
e2e_state_is '.errors | length' 0

confdisk_conf '# written by the label mirror\nnvidia.com/gpu.workload.config=container\nids=1234:1111\n'
confdisk_edit "$cdisk" "$CONFDISK_CONF"
[ "$(md5sum <"$E2E_IMG")" = "$img_sum" ] || e2e_fail "the image changed between the boots"
# shellcheck disable=SC2086 # QEMU arguments
e2e_boot --log container --iommu intel --gpu vga --append "$line" -- $CONFDISK_ARGS
e2e_guest_done
e2e_fact_is vga.driver bochs-drm
e2e_fact_is vga.override '(null)'
e2e_state_is .mode container
e2e_state_is .mode_source LABEL=gpuvm-conf:/etc/gpuvm/gpuvm.conf:2
e2e_state_is .config_disk.status disk
e2e_state_is "$E2E_JQ_VGA | .driver_override" gpuvm-hold
e2e_state_is "$E2E_JQ_VGA | .driver_before" null
e2e_state_is "$E2E_JQ_VGA | .driver_after" bochs-drm
e2e_state_is '.errors | length' 0
