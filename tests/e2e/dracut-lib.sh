# shellcheck shell=sh
# tests/e2e/dracut-lib.sh — dracut-built initramfs images for the dracut-* scenarios. Sourced
# by those scenarios (after lib.sh, which run.sh has sourced already):
#     . "$E2E_ROOT/tests/e2e/dracut-lib.sh"
#
# Nothing touches the host's dracut: every image is built with a private dracutbasedir,
# $E2E_OUT/$E2E_NAME.dracut/base, a symlink farm of the host's /usr/lib/dracut whose
# modules.d holds the host's modules, 90gpuvm (-> the repo's dracut/90gpuvm) and 99e2e (a
# test-only module written here: the guest/dracut-*.sh hooks); the kernel and its modules are
# Debian's from build/kernel (--kmoddir), the host config none (--conf /dev/null, an empty
# --confdir). The binary is $E2E_GPUVM (build/gpuvm), handed to the module as GPUVM_BINARY.
# distro-lib.sh's distro_need builds inside another release's root instead: it sets
# E2E_DRACUT (the work folder, in the root), E2E_DRACUT_IN (the same as the root sees it),
# E2E_DRACUT_SYSROOT (the root: 90gpuvm and the binary are copied in, the links point at the
# root's own /usr/lib/dracut, the root's own kernel modules are used) and E2E_DRACUT_RUN (the
# command that runs dracut inside the root).
#
# The test module 99e2e (guest side, all facts as "@e2e KEY=VALUE" on the console at the end):
#   pre-udev 99     guest/dracut-pre-udev.sh: right after gpuvm's hook (pre-udev 00) and
#                   before udevd: is udevd running, where is the stand-in (facts pre_udev.*,
#                   kmsg "e2e: pre_udev: …")
#   pre-trigger 99  guest/dracut-pre-trigger.sh: udevd runs now, no coldplug yet (pre_trigger.*,
#                   kmsg "e2e: pre_trigger: …")
#   emergency 99    guest/dracut-emergency.sh: at an rd.break=NAME shell: what that shell sees
#                   (break.NAME.*, kmsg "e2e: break.NAME: …"); then the shell exits at once (as
#                   if one typed `exit`: kmsg "e2e: break.NAME: the shell exits") and the boot
#                   goes on. Any other emergency: the report below, at once.
#   the end         guest/dracut-check.sh, after udev settled: the facts, the state file, the
#                   kernel log lines; "@e2e end"; power off (sysrq o). Shell init: a pre-mount
#                   hook (and a cmdline hook that accepts the missing root=); systemd:
#                   e2e-check.service, wanted by and before initrd.target.
#                   With E2E_DRACUT_END=pre-pivot (a boot with a real root=): a pre-pivot 99
#                   hook instead (kmsg "e2e: pre_pivot: the report"), after gpuvm's pre-pivot
#                   50 hook decided from the root's config, in both inits.
# guest/dracut-facts.sh (the hooks' helpers) and guest/dracut-check.sh list the facts.
#
# Functions:
#   dracut_need                  skip the scenario without dracut, the kernel or $E2E_GPUVM
#   dracut_base                  make the private dracutbasedir afresh and set E2E_DRACUT_BASE
#                                to it (dracut_image does it once by itself)
#   dracut_image [--as SUFFIX] [DRACUT OPTIONS…]
#                                build $E2E_OUT/$E2E_NAME[-SUFFIX].img, set E2E_IMG; dracut's
#                                output goes to $E2E_IMG.dracut.log; the build time to
#                                E2E_BUILD_SECS and $E2E_OUT/$E2E_NAME.build-times
#   dracut_before FIRST THEN [WHAT]   in the console log a line matching ERE FIRST comes
#                                before the first line matching ERE THEN (both must be there)

E2E_GPUVM=${E2E_GPUVM:-$E2E_ROOT/build/gpuvm}
E2E_DRACUT=${E2E_DRACUT:-$E2E_OUT/$E2E_NAME.dracut}
E2E_DRACUT_IN=${E2E_DRACUT_IN:-$E2E_DRACUT}
E2E_DRACUT_HOST=${E2E_DRACUT_HOST:-/usr/lib/dracut}
rm -f "$E2E_OUT/$E2E_NAME.build-times" "$E2E_OUT/$E2E_NAME".img.dracut.log \
	"$E2E_OUT/$E2E_NAME"-*.img.dracut.log

dracut_need() {
	command -v dracut >/dev/null || e2e_skip "no dracut (apt-get install dracut-core)"
	[ -f "$E2E_DRACUT_HOST/dracut-functions.sh" ] || e2e_skip "no $E2E_DRACUT_HOST"
	# shellcheck disable=SC2153 # E2E_KDIR and E2E_KVER come from lib.sh
	if [ -z "${E2E_KVER-}" ] || [ ! -d "$E2E_KDIR/lib/modules/$E2E_KVER" ]; then
		e2e_skip "no kernel in $E2E_KDIR (scripts/fetch-kernel.sh)"
	fi
	[ -x "$E2E_GPUVM" ] || e2e_skip "no $E2E_GPUVM (run make)"
}

# dracut_base: make the private dracutbasedir $E2E_DRACUT/base afresh (dracut_image does it
# once per scenario run).
dracut_base() {
	E2E_DRACUT_BASE=$E2E_DRACUT/base
	base=$E2E_DRACUT_BASE
	rm -rf "$base" "$E2E_DRACUT/99e2e"
	mkdir -p "$base/modules.d" "$E2E_DRACUT/99e2e" "$E2E_DRACUT/confdir" "$E2E_DRACUT/tmp"
	# The links point where the dracut that builds sees the files: inside the root of
	# distro-lib.sh (E2E_DRACUT_SYSROOT) that is the root's own /usr/lib/dracut.
	sysroot=${E2E_DRACUT_SYSROOT-}
	for f in "$sysroot$E2E_DRACUT_HOST"/*; do
		case ${f##*/} in modules.d | dracut.conf.d) continue ;; esac
		ln -s "$E2E_DRACUT_HOST/${f##*/}" "$base/${f##*/}"
	done
	for m in "$sysroot$E2E_DRACUT_HOST"/modules.d/[0-9][0-9]*; do
		case ${m##*/} in ??gpuvm | ??e2e) continue ;; esac
		ln -s "$E2E_DRACUT_HOST/modules.d/${m##*/}" "$base/modules.d/${m##*/}"
	done
	if [ -n "$sysroot" ]; then
		cp -R "$E2E_ROOT/dracut/90gpuvm" "$base/modules.d/90gpuvm"
		cp "$E2E_GPUVM" "$E2E_DRACUT/gpuvm"
	else
		ln -s "$E2E_ROOT/dracut/90gpuvm" "$base/modules.d/90gpuvm"
	fi
	ln -s "$E2E_DRACUT_IN/99e2e" "$base/modules.d/99e2e"
	for f in "$E2E_GUEST"/dracut-*.sh; do
		cp "$f" "$E2E_DRACUT/99e2e/${f##*/}"
	done
	cat >"$E2E_DRACUT/99e2e/module-setup.sh" <<'EOF'
#!/bin/bash
# Test-only dracut module (written by tests/e2e/dracut-lib.sh): hooks that report to the
# serial console what the gpuvm scenarios check, then power the VM off.
# shellcheck disable=SC2154
check() { return 255; }
depends() { return 0; }
install() {
    inst_multiple cat readlink basename sed grep cut sort tr dmesg head udevadm
    inst_simple "$moddir/dracut-check.sh" /usr/lib/e2e/dracut-check.sh
    inst_simple "$moddir/dracut-facts.sh" /usr/lib/e2e/dracut-facts.sh
    inst_hook pre-udev 99 "$moddir/dracut-pre-udev.sh"
    inst_hook pre-trigger 99 "$moddir/dracut-pre-trigger.sh"
    inst_hook emergency 99 "$moddir/dracut-emergency.sh"
    if [[ -f $moddir/end-pre-pivot ]]; then
        # The root is mounted: the report comes from pre-pivot, after gpuvm's (50).
        inst_hook pre-pivot 99 "$moddir/e2e-pre-pivot.sh"
    elif dracut_module_included systemd; then
        cat >"$initdir$systemdsystemunitdir/e2e-check.service" <<'UNIT'
[Unit]
Description=gpuvm e2e: report and power off
DefaultDependencies=no
After=systemd-udev-trigger.service systemd-udevd.service dracut-pre-trigger.service
# dracut's main loop, when a hook queued work (gpuvm waiting for its config's disk).
After=dracut-initqueue.service
Wants=systemd-udev-trigger.service
# initrd.target (then initrd-cleanup and switch-root) waits for the report and its power-off.
Before=initrd.target

[Service]
Type=oneshot
ExecStart=/bin/sh /usr/lib/e2e/dracut-check.sh
StandardInput=null
StandardOutput=tty
StandardError=tty
TTYPath=/dev/console
UNIT
        mkdir -p "$initdir$systemdsystemunitdir/initrd.target.wants"
        ln -sf ../e2e-check.service "$initdir$systemdsystemunitdir/initrd.target.wants/"
    else
        inst_hook cmdline 99 "$moddir/e2e-root.sh"
        inst_hook pre-mount 99 "$moddir/e2e-pre-mount.sh"
    fi
}
EOF
	# dracut's shell init wants a root= it knows how to mount; the tests have none.
	# shellcheck disable=SC2016 # for the guest
	printf '%s\n' '# shellcheck shell=sh disable=SC2034 # for dracut, which sources it' \
		'[ -n "$root" ] || { root=e2e-none; rootok=1; }' >"$E2E_DRACUT/99e2e/e2e-root.sh"
	printf '%s\n' '#!/bin/sh' '/bin/sh /usr/lib/e2e/dracut-check.sh' >"$E2E_DRACUT/99e2e/e2e-pre-mount.sh"
	# E2E_DRACUT_END=pre-pivot: a boot with a real root= reports at pre-pivot 99, right after
	# gpuvm's decision from the root's config (gpuvm-pre-pivot.sh, pre-pivot 50), not before.
	if [ "${E2E_DRACUT_END-}" = pre-pivot ]; then
		: >"$E2E_DRACUT/99e2e/end-pre-pivot"
		printf '%s\n' '#!/bin/sh' 'echo "e2e: pre_pivot: the report" >/dev/kmsg' \
			'/bin/sh /usr/lib/e2e/dracut-check.sh >/dev/console 2>&1' >"$E2E_DRACUT/99e2e/e2e-pre-pivot.sh"
	fi
}

dracut_image() {
	E2E_IMG=$E2E_OUT/$E2E_NAME.img
	if [ "${1-}" = --as ]; then
		E2E_IMG=$E2E_OUT/$E2E_NAME-$2.img
		shift 2
	fi
	[ -n "${E2E_DRACUT_BASE-}" ] || dracut_base
	t0=$(date +%s.%N)
	if [ -n "${E2E_DRACUT_SYSROOT-}" ]; then
		# The root's own kernel and modules; the image comes out inside the root.
		img_in=$E2E_DRACUT_IN/image.img gpuvm_in=$E2E_DRACUT_IN/gpuvm
		set -- "$@" "$img_in"
	else
		img_in=$E2E_IMG gpuvm_in=$E2E_GPUVM
		set -- --kmoddir "$E2E_KDIR/lib/modules/$E2E_KVER" "$@" "$E2E_IMG"
	fi
	# shellcheck disable=SC2086 # E2E_DRACUT_RUN is a command prefix
	${E2E_DRACUT_RUN-} env dracutbasedir="$E2E_DRACUT_IN/base" GPUVM_BINARY="$gpuvm_in" \
		dracut --force --no-hostonly --no-hostonly-cmdline --no-early-microcode \
		--conf /dev/null --confdir "$E2E_DRACUT_IN/confdir" --tmpdir "$E2E_DRACUT_IN/tmp" \
		--kver "$E2E_KVER" --compress "zstd -3 -q -T0" "$@" >"$E2E_IMG.dracut.log" 2>&1
	rc=$?
	if [ "$img_in" != "$E2E_IMG" ]; then
		rm -f "$E2E_IMG"
		[ "$rc" -ne 0 ] || mv "$E2E_DRACUT/image.img" "$E2E_IMG" || rc=1
	fi
	t1=$(date +%s.%N)
	E2E_BUILD_SECS=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
	echo "${E2E_IMG##*/} $E2E_BUILD_SECS" >>"$E2E_OUT/$E2E_NAME.build-times"
	e2e_note "dracut built ${E2E_IMG##*/} in $E2E_BUILD_SECS s (status $rc," \
		"$(wc -c <"$E2E_IMG" 2>/dev/null || echo 0) bytes); log $E2E_IMG.dracut.log"
	if [ "$rc" -ne 0 ] || [ ! -s "$E2E_IMG" ]; then
		tail -n 20 "$E2E_IMG.dracut.log"
		e2e_fail "dracut failed (status $rc): $(grep -m1 -E 'FATAL|ERROR' "$E2E_IMG.dracut.log")"
		exit 1
	fi
	# dracut 112 goes on after a fatal message (a program it could not install) and exits 0.
	if grep -q -E '^dracut\[F\]|FATAL' "$E2E_IMG.dracut.log"; then
		e2e_fail "dracut: $(grep -m1 -E '^dracut\[F\]|FATAL' "$E2E_IMG.dracut.log")"
	fi
}

dracut_before() {
	a=$(grep -n -m1 -E -- "$1" "$E2E_LOG" | cut -d: -f1)
	b=$(grep -n -m1 -E -- "$2" "$E2E_LOG" | cut -d: -f1)
	if [ -z "$a" ]; then
		e2e_fail "${3:+$3: }no line matching /$1/"
	elif [ -z "$b" ]; then
		e2e_fail "${3:+$3: }no line matching /$2/"
	elif [ "$a" -ge "$b" ]; then
		e2e_fail "${3:+$3: }/$1/ (line $a) is not before /$2/ (line $b)"
	fi
}

# dracut_bound: the end of a boot that bound the stand-in as gpuvm.mode=vm-passthrough with
# its ID selected asks: bochs, loaded by the coldplug, did not take it; it is on vfio-pci with
# its group's node; the state file says ok, no error; no gpuvm hook warned.
dracut_bound() {
	e2e_fact_is bochs yes
	e2e_fact_is vga.driver vfio-pci
	e2e_fact_is vga.override vfio-pci
	e2e_fact_is vga.vfio_node yes
	e2e_state_is .result ok
	e2e_state_is .mode vm-passthrough
	e2e_state_is '.errors | length' 0
	e2e_reject 'Warning: gpuvm:' 'the gpuvm hooks warned'
}

# dracut_held_then_read: the config-disk wait (the disk ext4, labelled gpuvm-conf, on /dev/vda):
# at pre-udev gpuvm held the stand-in (gpuvm-hold, no driver) and said so; it decided once the
# disk was there, read the config from it and bound the stand-in (dracut_bound).
dracut_held_then_read() {
	e2e_fact_is pre_udev.vga.driver none
	e2e_fact_is pre_udev.vga.override gpuvm-hold
	dracut_bound
	e2e_state_is .mode_source LABEL=gpuvm-conf:/etc/gpuvm/gpuvm.conf:1
	e2e_state_is .config_disk.status disk
	e2e_state_is .config_disk.device /dev/vda
	e2e_state_is "$E2E_JQ_VGA | .driver_before" null
	e2e_state_is "$E2E_JQ_VGA | .driver_override" gpuvm-hold
	e2e_state_is "$E2E_JQ_VGA | .driver_after" vfio-pci
	e2e_expect '^\[ *[0-9.]+\] gpuvm: config=LABEL=gpuvm-conf: not there yet; 1 GPU held'
	dracut_before '^\[ *[0-9.]+\] gpuvm: config=LABEL=gpuvm-conf: not there yet' \
		'^\[ *[0-9.]+\] gpuvm: config: LABEL=gpuvm-conf:/etc/gpuvm/gpuvm.conf is on /dev/vda \(ext4\)' \
		'the hold, then the decision'
}

# dracut_order INIT: the pre-udev hooks (their "e2e: pre_udev: udevd=none" line) ran before
# udevd, and udevd before pre-trigger. shell: udevd's own "Starting systemd-udevd version"
# line (udev.log_level=info on newer releases). systemd: systemd's unit lines
# (systemd.log_target=kmsg), the units' own timestamps, and no failed unit.
dracut_order() {
	case $1 in
	shell)
		dracut_before '^\[ *[0-9.]+\] e2e: pre_udev: udevd=none' '^Starting systemd-udevd version' \
			'pre-udev before udevd'
		dracut_before '^Starting systemd-udevd version' '^\[ *[0-9.]+\] e2e: pre_trigger: udevd=[0-9]+ ' \
			'udevd before pre-trigger'
		;;
	systemd)
		dracut_before '^\[ *[0-9.]+\] e2e: pre_udev: udevd=none' \
			'^\[ *[0-9.]+\] systemd\[1\]: Finished dracut-pre-udev\.service' 'the hooks inside dracut-pre-udev'
		dracut_before '^\[ *[0-9.]+\] systemd\[1\]: Finished dracut-pre-udev\.service' \
			'^\[ *[0-9.]+\] systemd\[1\]: Starting systemd-udevd\.service' 'dracut-pre-udev before udevd'
		dracut_before '^\[ *[0-9.]+\] systemd\[1\]: Starting systemd-udevd\.service' \
			'^\[ *[0-9.]+\] e2e: pre_trigger: udevd=[0-9]+ ' 'udevd before pre-trigger'
		e2e_fact_is failed_units ''
		do_us=$(e2e_fact pre_udev.done_us) su_us=$(e2e_fact udevd.start_us)
		case "$do_us:$su_us" in
		[1-9]*[0-9]:[1-9]*[0-9])
			[ "$do_us" -le "$su_us" ] || e2e_fail "systemd says dracut-pre-udev.service" \
				"was active at $do_us us, after systemd-udevd.service started at $su_us us"
			;;
		*) e2e_fail "no unit timestamps: pre_udev.done_us='$do_us' udevd.start_us='$su_us'" ;;
		esac
		;;
	*) e2e_fail "dracut_order: no such init '$1'" ;;
	esac
}
