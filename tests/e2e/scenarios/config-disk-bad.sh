# shellcheck shell=sh
# A config disk that is there but cannot be used. The fallback is the kernel command
# line and the defaults (the image's config, mode=vm-passthrough here, is never read at boot):
# gpuvm.ids=1234:1111 and no mode. Each boot names the disk on the kernel command line; bochs
# loads while gpuvm holds the stand-in; gpuvm decides at once (no waiting out the timeout: the
# disk is there), logs why, and applies the fallback, container: the stand-in, which had no
# driver before (nothing took it while held), goes to bochs, and nothing stays mounted. The
# image's vm-passthrough would have put it on vfio-pci.
#   garbage   random bytes, named by path (gpuvm.config=/dev/vda): no file system
#   damaged   ext4 whose label libblkid reads, with its group descriptors zeroed: mount fails
#   missing   ext4 without /etc/gpuvm/gpuvm.conf
#   oversize  a 70 KiB gpuvm.conf (the limit is 64 KiB)
#   escape    gpuvm.conf a symlink to /proc/cmdline: it leaves the file system, not followed
# shellcheck source=tests/e2e/confdisk-lib.sh
. "$E2E_ROOT/tests/e2e/confdisk-lib.sh"
e2e_need_gpuvm
confdisk_conf 'mode=vm-passthrough\nids=1234:1111\n'
e2e_image --gpuvm "$E2E_GPUVM" --config "$CONFDISK_CONF" --load "virtio_pci virtio_blk bochs" \
	--modules ext4 --add "$E2E_GUEST/gpuvm-check.sh:/init.d/50-gpuvm-check.sh"
good='mode=container\nids=1234:1111\n'

# bad_boot NAME DISK CONFIG REASON-ERE
bad_boot() {
	confdisk_args "$2"
	# shellcheck disable=SC2086 # QEMU arguments
	e2e_boot --log "$1" --iommu intel --gpu vga --append "gpuvm.config=$3 gpuvm.ids=1234:1111" -- $CONFDISK_ARGS
	e2e_guest_done
	e2e_fact_is vga.driver bochs-drm
	e2e_fact_is vga.override '(null)'
	e2e_fact_is run_gpuvm 'boot.json metrics state.json '
	e2e_fact_is gpuvm_mounts ''
	e2e_state_is .mode container
	e2e_state_is .mode_source default
	e2e_state_is .config_disk.status fallback
	e2e_state_match .config_disk.reason "$4"
	e2e_state_is "$E2E_JQ_VGA | .driver_before" null
	e2e_state_is "$E2E_JQ_VGA | .driver_after" bochs-drm
	e2e_state_match '.errors[]' "^config: .*; using the kernel command line and the defaults$"
	e2e_expect '^@dmesg .*gpuvm: container: 1 GPU in place for the host driver, 0 failed'
	e2e_reject '^@dmesg .*after waiting' 'gpuvm waited out its timeout for a disk that was there'
}

cdisk=$E2E_OUT/$E2E_NAME.conf.disk
head -c 16M /dev/urandom >"$cdisk"
bad_boot garbage "$cdisk" /dev/vda '^/dev/vda:/etc/gpuvm/gpuvm.conf: libblkid finds no file system on /dev/vda$'

confdisk_conf "$good"
rm -f "$cdisk"
truncate -s 16M "$cdisk"
mkdir -p "$E2E_OUT/$E2E_NAME.d/etc/gpuvm"
cp "$CONFDISK_CONF" "$E2E_OUT/$E2E_NAME.d/etc/gpuvm/gpuvm.conf"
mkfs.ext4 -q -F -b 4096 -L gpuvm-conf -d "$E2E_OUT/$E2E_NAME.d" "$cdisk"
dd if=/dev/zero of="$cdisk" bs=4096 seek=1 count=1 conv=notrunc 2>/dev/null # the group descriptors
bad_boot damaged "$cdisk" LABEL=gpuvm-conf '^cannot mount /dev/vda \(ext4\) read-only: '

confdisk_ext4 "$cdisk" gpuvm-conf
bad_boot missing "$cdisk" LABEL=gpuvm-conf '^/etc/gpuvm/gpuvm.conf on /dev/vda: No such file or directory$'

head -c 71680 /dev/zero | tr '\0' '#' >"$E2E_OUT/$E2E_NAME.big"
confdisk_ext4 "$cdisk" gpuvm-conf "$E2E_OUT/$E2E_NAME.big"
bad_boot oversize "$cdisk" LABEL=gpuvm-conf '^/etc/gpuvm/gpuvm.conf on /dev/vda: larger than 65536 bytes$'

tree=$E2E_OUT/$E2E_NAME.d
rm -rf "$tree"
mkdir -p "$tree/etc/gpuvm"
ln -s /proc/cmdline "$tree/etc/gpuvm/gpuvm.conf"
rm -f "$cdisk"
truncate -s 16M "$cdisk"
mkfs.ext4 -q -F -L gpuvm-conf -d "$tree" "$cdisk"
bad_boot escape "$cdisk" LABEL=gpuvm-conf '^/etc/gpuvm/gpuvm.conf on /dev/vda: a symlink or .\.\.. leads out of the file system$'
