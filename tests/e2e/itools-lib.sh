# shellcheck shell=sh
# tests/e2e/itools-lib.sh — initramfs-tools images made inside a Debian root of their own
# release (initramfs-tools on Debian 12), for that root's kernel. Sourced by a
# scenario after lib.sh:
#     . "$E2E_ROOT/tests/e2e/itools-lib.sh"
#     itools_need bookworm
#     itools_image [--as SUFFIX] [--no-gpuvm]
#
# itools_need RELEASE   skip without debootstrap or root; else make or reuse the cached root
#                       build/roots/RELEASE-initramfs-tools (GENERATOR=initramfs-tools
#                       scripts/distro-root.sh: debootstrap, that release's initramfs-tools,
#                       busybox, kernel, udev) and point E2E_KVER and E2E_KERNEL at its kernel.
#                       Sets E2E_ITOOLS_ROOT and E2E_ITOOLS_VERSION (initramfs-tools' version).
# itools_image [--as SUFFIX] [--no-gpuvm] [--premount SCRIPT] [--bottom SCRIPT] [--file FILE]…
#              [--host-config TEXT]
#                       build $E2E_OUT/$E2E_NAME[-SUFFIX].img inside the root with its own
#                       mkinitramfs, as update-initramfs would: gpuvm installed into the root as
#                       `make install` lays it out (build/gpuvm as /usr/sbin/gpuvm, the hook
#                       and init-top script under /usr/share/initramfs-tools); --no-gpuvm takes
#                       all three out of the root first (an image without gpuvm). The config
#                       directory is a private copy of the root's /etc/initramfs-tools
#                       (mkinitramfs -d) with the test-only hook guest/itools-e2e-hook.sh (the
#                       guest checks, bochs) and init-premount script guest/itools-e2e-premount.sh
#                       (after udev's coldplug: guest/dracut-check.sh reports and powers off).
#                       --premount SCRIPT is that init-premount script instead (none when
#                       SCRIPT is empty); --bottom SCRIPT installs SCRIPT as the init-bottom
#                       script e2e (guest/itools-e2e-bottom.sh: after gpuvm's, the report at
#                       the last stage, the root mounted); each --file
#                       FILE goes into the image as /usr/lib/e2e/NAME. --host-config TEXT is the
#                       root's /etc/gpuvm/gpuvm.conf while the image is built (as a host's
#                       config: gpuvm's hook no longer copies it in); there is none otherwise.
#                       The build time goes to E2E_BUILD_SECS and $E2E_OUT/$E2E_NAME.build-times.
# The root is shared by the cells of a release and changed by itools_image: those cells run
# one after the other (the root's lock, build/roots/RELEASE-initramfs-tools.lock, is held
# while an image is built).

rm -f "$E2E_OUT/$E2E_NAME.build-times"
# The stages the boot script is installed into (the Makefile's ITOOLS_STAGES).
E2E_ITOOLS_STAGES='init-top init-premount local-block init-bottom'

# shellcheck disable=SC2034 # what it sets is read by lib.sh
itools_need() {
	command -v debootstrap >/dev/null || e2e_skip "no debootstrap (apt-get install debootstrap)"
	[ "$(id -u)" -eq 0 ] || e2e_skip "not root (debootstrap and chroot need it)"
	command -v unshare >/dev/null || e2e_skip "no unshare"
	[ -x "$E2E_GPUVM" ] || e2e_skip "no $E2E_GPUVM (run make)"
	E2E_ITOOLS_RELEASE=$1
	t0=$(date +%s)
	E2E_ITOOLS_ROOT=$(GENERATOR=initramfs-tools "$E2E_ROOT/scripts/distro-root.sh" "$1") || {
		e2e_fail "GENERATOR=initramfs-tools scripts/distro-root.sh $1 failed"
		exit 1
	}
	e2e_note "root $E2E_ITOOLS_ROOT ready after $(($(date +%s) - t0)) s"
	set -- "$1" "$E2E_ITOOLS_ROOT"/usr/lib/modules/*/modules.dep
	[ -f "$2" ] || { e2e_fail "no kernel in $E2E_ITOOLS_ROOT"; exit 1; }
	E2E_KVER=${2%/modules.dep}
	E2E_KVER=${E2E_KVER##*/}
	E2E_KERNEL=$E2E_ITOOLS_ROOT/boot/vmlinuz-$E2E_KVER
	E2E_ITOOLS_VERSION=$(awk '/^Package: initramfs-tools-core$/ { p = 1 } p && /^Version:/ { print $2; exit }' \
		"$E2E_ITOOLS_ROOT/var/lib/dpkg/status")
	e2e_note "$1: initramfs-tools $E2E_ITOOLS_VERSION, kernel $E2E_KVER"
}

# shellcheck disable=SC2034 # E2E_IMG, E2E_BUILD_SECS, E2E_ITOOLS_ORDER: read by the scenario
itools_image() {
	E2E_IMG=$E2E_OUT/$E2E_NAME.img
	if [ "${1-}" = --as ]; then
		E2E_IMG=$E2E_OUT/$E2E_NAME-$2.img
		shift 2
	fi
	gpuvm=yes premount=$E2E_GUEST/itools-e2e-premount.sh hostconf='' bottom=''
	r=$E2E_ITOOLS_ROOT
	w=/e2e/$E2E_NAME
	rm -rf "$r$w"
	mkdir -p "$r$w/files"
	while [ $# -gt 0 ]; do
		case $1 in
		--no-gpuvm) gpuvm=no; shift ;;
		--premount) premount=$2; shift 2 ;;
		--bottom) bottom=$2; shift 2 ;;
		--host-config) hostconf=$2; shift 2 ;;
		--file) cp "$2" "$r$w/files/" || { e2e_fail "itools_image: cannot copy $2"; exit 1; }; shift 2 ;;
		*) e2e_fail "itools_image: unknown option $1"; exit 1 ;;
		esac
	done
	cp -R "$r/etc/initramfs-tools" "$r$w/conf"
	mkdir -p "$r$w/conf/hooks" "$r$w/conf/scripts/init-premount" "$r$w/conf/scripts/init-bottom" \
		"$r/usr/lib/e2e"
	install -m 0755 "$E2E_GUEST/itools-e2e-hook.sh" "$r$w/conf/hooks/e2e"
	[ -z "$premount" ] || install -m 0755 "$premount" "$r$w/conf/scripts/init-premount/e2e"
	[ -z "$bottom" ] || install -m 0755 "$bottom" "$r$w/conf/scripts/init-bottom/e2e"
	cp "$E2E_GUEST/dracut-check.sh" "$E2E_GUEST/dracut-facts.sh" "$r$w/"
	exec 8>"$r.lock"
	flock 8
	rm -f "$r/usr/sbin/gpuvm" "$r/usr/share/initramfs-tools/hooks/gpuvm"
	for s in $E2E_ITOOLS_STAGES; do rm -f "$r/usr/share/initramfs-tools/scripts/$s/gpuvm"; done
	rm -rf "$r/etc/gpuvm"
	if [ -n "$hostconf" ]; then
		mkdir -p "$r/etc/gpuvm"
		printf '%s\n' "$hostconf" >"$r/etc/gpuvm/gpuvm.conf"
	fi
	if [ "$gpuvm" = yes ]; then
		install -m 0755 "$E2E_GPUVM" "$r/usr/sbin/gpuvm"
		install -m 0755 "$E2E_ROOT/initramfs-tools/hooks/gpuvm" "$r/usr/share/initramfs-tools/hooks/gpuvm"
		for s in $E2E_ITOOLS_STAGES; do
			install -D -m 0755 "$E2E_ROOT/initramfs-tools/scripts/gpuvm" \
				"$r/usr/share/initramfs-tools/scripts/$s/gpuvm"
		done
	fi
	t0=$(date +%s.%N)
	GENERATOR=initramfs-tools "$E2E_ROOT/scripts/distro-root.sh" "$E2E_ITOOLS_RELEASE" -- \
		env E2E_ITOOLS_DIR="$w" mkinitramfs -d "$w/conf" -o "$w/image.img" "$E2E_KVER" \
		>"$E2E_IMG.mkinitramfs.log" 2>&1
	rc=$?
	t1=$(date +%s.%N)
	# The image carries the order init-top runs in: kept for the scenario to check. Read with
	# the root's own unmkinitramfs: the image may begin with uncompressed early archives
	# (microcode, trixie), then the compressed main one.
	E2E_ITOOLS_ORDER=''
	if [ "$rc" -eq 0 ]; then
		rm -rf "$r$w/unpacked"
		GENERATOR=initramfs-tools "$E2E_ROOT/scripts/distro-root.sh" "$E2E_ITOOLS_RELEASE" -- \
			unmkinitramfs "$w/image.img" "$w/unpacked" >>"$E2E_IMG.mkinitramfs.log" 2>&1
		for o in "$r$w/unpacked/main/scripts/init-top/ORDER" "$r$w/unpacked/scripts/init-top/ORDER"; do
			[ ! -f "$o" ] || E2E_ITOOLS_ORDER=$(cat "$o")
		done
		rm -rf "$r$w/unpacked"
	fi
	rm -rf "$r/etc/gpuvm"
	rm -f "$E2E_IMG"
	[ "$rc" -ne 0 ] || mv "$r$w/image.img" "$E2E_IMG" || rc=1
	flock -u 8
	exec 8>&-
	E2E_BUILD_SECS=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
	echo "${E2E_IMG##*/} $E2E_BUILD_SECS" >>"$E2E_OUT/$E2E_NAME.build-times"
	e2e_note "mkinitramfs built ${E2E_IMG##*/} in $E2E_BUILD_SECS s (status $rc," \
		"$(wc -c <"$E2E_IMG" 2>/dev/null || echo 0) bytes); log $E2E_IMG.mkinitramfs.log"
	if [ "$rc" -ne 0 ] || [ ! -s "$E2E_IMG" ]; then
		tail -n 20 "$E2E_IMG.mkinitramfs.log"
		e2e_fail "mkinitramfs failed (status $rc): $(grep -m1 -E '^E:' "$E2E_IMG.mkinitramfs.log")"
		exit 1
	fi
}

# itools_etc_hooks on|off: for images that update-initramfs builds (it reads the root's own
# /etc/initramfs-tools, not a private copy): "on" puts the test hook and init-premount script
# itools_image uses into the root's /etc/initramfs-tools/{hooks,scripts/init-premount} as e2e,
# and guest/dracut-check.sh and dracut-facts.sh under the root's /e2e/$E2E_NAME (the hook
# needs E2E_ITOOLS_DIR=/e2e/$E2E_NAME in update-initramfs' environment); "off" takes them all
# out again. Call both under the root's lock (build/roots/RELEASE-initramfs-tools.lock): the
# other cells of the release build their images from that /etc/initramfs-tools too.
itools_etc_hooks() {
	r=$E2E_ITOOLS_ROOT
	e=$r/etc/initramfs-tools
	rm -f "$e/hooks/e2e" "$e/scripts/init-premount/e2e"
	rm -rf "${r:?}/e2e/$E2E_NAME"
	[ "$1" = on ] || return 0
	mkdir -p "$e/hooks" "$e/scripts/init-premount" "$r/e2e/$E2E_NAME"
	install -m 0755 "$E2E_GUEST/itools-e2e-hook.sh" "$e/hooks/e2e"
	install -m 0755 "$E2E_GUEST/itools-e2e-premount.sh" "$e/scripts/init-premount/e2e"
	cp "$E2E_GUEST/dracut-check.sh" "$E2E_GUEST/dracut-facts.sh" "$r/e2e/$E2E_NAME/"
}

# itools_order_ok ORDER: the image's init-top ORDER runs gpuvm before udev.
itools_order_ok() {
	g=$(echo "$1" | grep -n -m1 '/gpuvm ' | cut -d: -f1)
	u=$(echo "$1" | grep -n -m1 '/udev ' | cut -d: -f1)
	if [ -z "$g" ] || [ -z "$u" ] || [ "$g" -ge "$u" ]; then
		e2e_fail "init-top ORDER does not run gpuvm (line ${g:-none}) before udev (line ${u:-none}): $1"
	fi
}

# itools_bound: the boot bound the stand-in as gpuvm.mode=vm-passthrough with its ID selected
# asks: gpuvm ran at init-top before udevd started (its first kernel log line before udevd's
# "Starting systemd-udevd version", shown when the boot line has no `quiet`); after the
# coldplug the stand-in is on vfio-pci with its group's node, bochs (loaded by the coldplug)
# did not take it; the state file says ok, no error; the boot script warned of nothing.
itools_bound() {
	e2e_fact_is init shell
	e2e_fact_is vga.driver vfio-pci
	e2e_fact_is vga.override vfio-pci
	e2e_fact_is vga.vfio_node yes
	e2e_fact_is bochs yes
	e2e_state_is .result ok
	e2e_state_is .mode vm-passthrough
	e2e_state_is "$E2E_JQ_VGA | .driver_before" null
	e2e_state_is "$E2E_JQ_VGA | .driver_after" vfio-pci
	e2e_state_is '.errors | length' 0
	a=$(grep -n -m1 -E '^\[ *[0-9.]+\] gpuvm: ' "$E2E_LOG" | cut -d: -f1)
	b=$(grep -n -m1 -E 'Starting systemd-udevd version' "$E2E_LOG" | cut -d: -f1)
	if [ -z "$a" ] || [ -z "$b" ] || [ "$a" -ge "$b" ]; then
		e2e_fail "gpuvm's first kernel log line (line ${a:-none}) is not before udevd's start (line ${b:-none})"
	fi
	e2e_reject 'gpuvm: apply.* exited|gpuvm: the IOMMU is not active|did not decide' 'the boot script warned'
}
