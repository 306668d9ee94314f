# shellcheck shell=sh
# tests/e2e/confdisk-lib.sh — config disks for the config-disk-* scenarios (issue 6: gpuvm's
# host config read from a disk before root is mounted). Sourced by those scenarios after lib.sh:
#     . "$E2E_ROOT/tests/e2e/confdisk-lib.sh"
# Every disk is an image file made without root privileges (mkfs.ext4 -d, mkfs.vfat + mtools,
# sfdisk on a file, debugfs -w to edit a file in place); QEMU opens it with snapshot=on.
#
#   confdisk_ext4 FILE LABEL [CONF]    an ext4 file system labelled LABEL; CONF (a file) becomes
#                                      its /etc/gpuvm/gpuvm.conf (none without CONF)
#   confdisk_edit FILE CONF            replace /etc/gpuvm/gpuvm.conf in the ext4 FILE in place
#                                      (debugfs: only that file changes)
#   confdisk_gpt_vfat FILE PARTUUID CONF
#                                      a GPT disk whose one partition (PARTUUID, name
#                                      gpuvm-conf) holds vfat with CONF as /gpuvm.conf
#   confdisk_args FILE                 the QEMU arguments for one more virtio-blk disk (after
#                                      the root disk of e2e_boot --disk, if any): pass them
#                                      after e2e_boot's "--"; sets CONFDISK_ARGS
#   confdisk_conf TEXT                 a config file with TEXT (printf %b) in $E2E_OUT; its path
#                                      in CONFDISK_CONF

confdisk_conf() {
	CONFDISK_CONF=$E2E_OUT/$E2E_NAME.conf.$$.$(date +%s%N)
	printf '%b' "$1" >"$CONFDISK_CONF"
}

confdisk_ext4() {
	d=$E2E_OUT/$E2E_NAME.confdir
	rm -rf "$d" "$1"
	mkdir -p "$d/etc/gpuvm"
	[ -n "${3-}" ] && cp "$3" "$d/etc/gpuvm/gpuvm.conf"
	truncate -s 16M "$1"
	mkfs.ext4 -q -F -L "$2" -d "$d" "$1" || { e2e_fail "mkfs.ext4 $1 failed"; exit 1; }
}

confdisk_edit() {
	printf 'cd /etc/gpuvm\nrm gpuvm.conf\nwrite %s gpuvm.conf\n' "$2" >"$1.debugfs"
	debugfs -w -f "$1.debugfs" "$1" >/dev/null 2>&1 || { e2e_fail "debugfs -w $1 failed"; exit 1; }
	e2fsck -fn "$1" >/dev/null 2>&1 || { e2e_fail "$1 is not clean after the edit"; exit 1; }
}

confdisk_gpt_vfat() {
	rm -f "$1"
	truncate -s 40M "$1"
	printf 'label: gpt\nstart=2048, size=61440, type=linux, uuid=%s, name=gpuvm-conf\n' "$2" |
		sfdisk -q "$1" >/dev/null || { e2e_fail "sfdisk $1 failed"; exit 1; }
	# The partition starts at sector 2048 (1 MiB): mkfs.vfat and mtools work at that offset.
	mkfs.vfat --offset 2048 -n GPUVMCONF "$1" 61440 >/dev/null ||
		{ e2e_fail "mkfs.vfat $1 failed"; exit 1; }
	MTOOLS_SKIP_CHECK=1 mcopy -i "$1@@1M" "$3" ::/gpuvm.conf ||
		{ e2e_fail "mcopy into $1 failed"; exit 1; }
}

confdisk_args() {
	n=$(basename "$1" | tr -c 'a-zA-Z0-9\n' _)
	# shellcheck disable=SC2034 # for the scenarios
	CONFDISK_ARGS="-drive file=$1,format=raw,if=none,id=$n,snapshot=on -device virtio-blk-pci,drive=$n"
}
