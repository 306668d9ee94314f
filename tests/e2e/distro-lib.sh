# shellcheck shell=sh
# tests/e2e/distro-lib.sh — dracut images made by another Debian release's own dracut, for
# its own kernel (dracut-ng 106 on trixie, the newest dracut on sid). Sourced by a
# scenario after dracut-lib.sh (whose dracut_image and checks it reuses):
#     . "$E2E_ROOT/tests/e2e/dracut-lib.sh"
#     . "$E2E_ROOT/tests/e2e/distro-lib.sh"
#     distro_need trixie
#     dracut_image -m "base gpuvm e2e" …     (built inside the root, as below)
#
# distro_need RELEASE   skip without debootstrap or root; else make or reuse the cached root
#                       build/roots/RELEASE (scripts/distro-root.sh: debootstrap, that
#                       release's dracut, kernel through linux-image-amd64, systemd) and point
#                       dracut-lib.sh at it: E2E_KVER, E2E_KDIR and E2E_KERNEL are the root's
#                       kernel; dracut_image then runs the root's dracut inside the root
#                       (chroot in a private mount namespace: scripts/distro-root.sh RELEASE --),
#                       with the private dracutbasedir, 90gpuvm (copied from the repo), 99e2e
#                       and $E2E_GPUVM under the root's /e2e/$E2E_NAME, and the root's own
#                       /lib/modules. Sets E2E_DISTRO_ROOT and E2E_DISTRO_DRACUT (the root's
#                       dracut version, e.g. 106).
# The first run of a release pays its debootstrap (about 2 minutes here); later runs find it
# in build/roots. Nothing outside build/ is written.

# shellcheck disable=SC2034 # what it sets is read by lib.sh and dracut-lib.sh
distro_need() {
	command -v debootstrap >/dev/null || e2e_skip "no debootstrap (apt-get install debootstrap)"
	[ "$(id -u)" -eq 0 ] || e2e_skip "not root (debootstrap and chroot need it)"
	command -v unshare >/dev/null || e2e_skip "no unshare"
	[ -x "$E2E_GPUVM" ] || e2e_skip "no $E2E_GPUVM (run make)"
	t0=$(date +%s)
	E2E_DISTRO_ROOT=$("$E2E_ROOT/scripts/distro-root.sh" "$1") || {
		e2e_fail "scripts/distro-root.sh $1 failed"
		exit 1
	}
	e2e_note "root $E2E_DISTRO_ROOT ready after $(($(date +%s) - t0)) s"
	set -- "$1" "$E2E_DISTRO_ROOT"/usr/lib/modules/*/modules.dep
	[ -f "$2" ] || { e2e_fail "no kernel in $E2E_DISTRO_ROOT"; exit 1; }
	E2E_KVER=${2%/modules.dep}
	E2E_KVER=${E2E_KVER##*/}
	E2E_KDIR=$E2E_DISTRO_ROOT
	E2E_KERNEL=$E2E_DISTRO_ROOT/boot/vmlinuz-$E2E_KVER
	[ -f "$E2E_KERNEL" ] || E2E_KERNEL=$E2E_DISTRO_ROOT/usr/lib/modules/$E2E_KVER/vmlinuz
	E2E_DISTRO_DRACUT=$(awk '/^Package: dracut-core$/ { p = 1 } p && /^Version:/ { print $2; exit }' \
		"$E2E_DISTRO_ROOT/var/lib/dpkg/status")
	e2e_note "$1: dracut $E2E_DISTRO_DRACUT, kernel $E2E_KVER"
	# dracut-lib.sh: everything under the root's /e2e/NAME, seen from inside as /e2e/NAME.
	E2E_DRACUT=$E2E_DISTRO_ROOT/e2e/$E2E_NAME
	E2E_DRACUT_IN=/e2e/$E2E_NAME
	E2E_DRACUT_SYSROOT=$E2E_DISTRO_ROOT
	E2E_DRACUT_HOST=/usr/lib/dracut
	E2E_DRACUT_RUN="$E2E_ROOT/scripts/distro-root.sh $1 --"
	rm -rf "$E2E_DRACUT"
	mkdir -p "$E2E_DRACUT"
}
