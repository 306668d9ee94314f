# shellcheck shell=sh
# tests/e2e/confdisk-lib.sh — config disks for the config-disk-* scenarios (gpuvm's
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
#   rootconf_cycle BOOT DRIVER OVERRIDE
#                                      one image booted three times with the root disk's
#                                      /etc/gpuvm/gpuvm.conf edited between the boots
#                                      (container, vm-passthrough, container): see below

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

# rootconf_cycle BOOT DRIVER_FACT OVERRIDE_FACT: the label mirror's story on the root disk
# itself. One image ($E2E_IMG, built once), one root disk ($E2E_DISK, ext4, whose
# /etc/gpuvm/gpuvm.conf is edited in place with debugfs between the boots: only that file
# changes), three boots: container, vm-passthrough, container. BOOT SUFFIX is the caller's
# function that boots once (its log: NAME-SUFFIX.log; SUFFIX is 1-container,
# 2-vm-passthrough, 3-container). After each boot: the image's sha256 is the one it had
# before the first; the guest ran to its end; DRIVER_FACT and OVERRIDE_FACT (the stand-in's
# driver and driver_override, as the guest's check found them right after gpuvm's last call)
# are bochs-drm and (null), vfio-pci and vfio-pci, bochs-drm and (null); the boot.json the
# guest printed says the mode the file says, from the root's file (mode_source
# /etc/gpuvm/gpuvm.conf:2), decided at the root stage (host_config read), no error, and a
# boot_id of its own. Each boot's boot.json stays in $E2E_OUT/NAME-SUFFIX.boot.json.
rootconf_cycle() {
	rc_sum=$(sha256sum <"$E2E_IMG")
	rc_ids='' rc_n=0
	for rc_mode in container vm-passthrough container; do
		rc_n=$((rc_n + 1))
		confdisk_conf "# written by the label mirror\nmode=$rc_mode\n"
		confdisk_edit "$E2E_DISK" "$CONFDISK_CONF"
		"$1" "$rc_n-$rc_mode"
		[ "$(sha256sum <"$E2E_IMG")" = "$rc_sum" ] || e2e_fail "boot $rc_n: the image changed"
		case $rc_mode in
		container) rc_drv=bochs-drm rc_ovr='(null)' ;;
		*) rc_drv=vfio-pci rc_ovr=vfio-pci ;;
		esac
		e2e_guest_done
		e2e_fact_is "$2" "$rc_drv"
		e2e_fact_is "$3" "$rc_ovr"
		e2e_bootjson_is .mode "$rc_mode"
		e2e_bootjson_is .mode_source /etc/gpuvm/gpuvm.conf:2
		e2e_bootjson_is .boot.stage root
		e2e_bootjson_is .boot.decided true
		e2e_bootjson_is .boot.host_config read
		e2e_bootjson_is '.errors | length' 0
		rc_id=$(e2e_bootjson .boot.boot_id) || rc_id=''
		case $rc_id in
		'' | null) e2e_fail "boot $rc_n: boot.json has no boot_id" ;;
		*) case " $rc_ids " in *" $rc_id "*) e2e_fail "boot $rc_n: boot_id $rc_id seen before" ;; esac ;;
		esac
		rc_ids="$rc_ids $rc_id"
		e2e_expect "gpuvm: config: /etc/gpuvm/gpuvm.conf read from the root at " \
			"boot $rc_n: gpuvm did not say it read the root's config"
	done
}
