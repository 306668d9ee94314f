#!/bin/sh
# distro-root.sh — a minimal Debian root of another release with that release's own dracut,
# kernel and systemd, cached under build/roots: the e2e cells that build their initramfs with
# a newer dracut build it inside such a root (tests/e2e/distro-lib.sh).
#
#   scripts/distro-root.sh [--out DIR] RELEASE              make DIR/RELEASE if needed; print it
#   scripts/distro-root.sh [--out DIR] RELEASE -- CMD…      run CMD inside it (chroot)
#
# GENERATOR=initramfs-tools makes and uses DIR/RELEASE-initramfs-tools instead: the same root
# with initramfs-tools in place of dracut (the two conflict as packages), its kernel hook
# diverted the same way (tests/e2e/itools-lib.sh). GENERATOR=dracut (the default) is the root
# described below.
#
# DIR defaults to build/roots. The root is `debootstrap --variant=minbase RELEASE`, then, in
# it, `apt-get install --no-install-recommends` of $PKGS: dracut, the kernel through its
# meta-package linux-image-amd64 (sid's newest kernel, never a stale version), systemd, udev.
# The mirror is the Debian mirror of the host's apt sources (scripts/apt-private.sh), else
# deb.debian.org. DIR/RELEASE.stamp says what the root was made from (release, mirror,
# packages); a root whose stamp is missing or says something else is made again from scratch
# (a few minutes), one that matches is used as it is: a second run pays nothing. A lock
# (DIR/RELEASE.lock) lets two cells of one release ask at once.
#
# Everything that runs inside the root (debootstrap's second stage, apt, CMD) runs in a
# private mount namespace (unshare -m) with the host's /proc, /sys and /dev bound in: no mount
# outlives it, and the host's /boot, dracut and dpkg database are never touched. The root's
# kernel hook (/etc/kernel/postinst.d/dracut) is diverted away and a stub that does nothing
# takes its place before dracut is installed: the root never builds an initramfs of its own
# (minutes saved); the cells build theirs.
set -eu

prog=distro-root
die() { echo "$prog: $*" >&2; exit 1; }
say() { echo "$prog: $*" >&2; }

# What every root gets; the stamp holds this list, so a change here makes the roots again.
# libkmod2: newer systemd-udevd loads modules through a dlopen()ed libkmod (a Recommends);
# util-linux-extra: switch_root, which dracut's base module needs, since sid's util-linux.
PKGS='dracut linux-image-amd64 systemd udev kmod libkmod2 zstd util-linux-extra'
STAMP_FORMAT=1
# initramfs-tools' roots: its own package list (busybox: the image's shell and tools, as
# initramfs-tools recommends it; lvm2: its hook puts LVM into every image, as on Ubuntu
# Server, whose root is on LVM by default), its own folder and stamp.
case ${GENERATOR:-dracut} in
dracut) gen_bin=/usr/bin/dracut gen_hook=dracut suffix='' ;;
initramfs-tools)
	PKGS='initramfs-tools busybox linux-image-amd64 systemd udev kmod zstd lvm2'
	gen_bin=/usr/sbin/mkinitramfs gen_hook=initramfs-tools suffix=-initramfs-tools
	;;
*) die "GENERATOR: dracut or initramfs-tools, not ${GENERATOR}" ;;
esac

here=$(cd "$(dirname "$0")" && pwd)
out=$here/../build/roots
while [ $# -gt 0 ]; do
	case $1 in
	--out) [ $# -ge 2 ] || die "--out needs a value"; out=$2; shift 2 ;;
	-h | --help) sed -n '2,/^set -eu/{/^set -eu/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
	-*) die "unknown option: $1" ;;
	*) break ;;
	esac
done
[ $# -ge 1 ] || die "usage: $0 [--out DIR] RELEASE [-- CMD…]"
release=$1
shift
case $release in
'' | */* | .*) die "not a release name: $release" ;;
esac
if [ $# -gt 0 ]; then
	[ "$1" = -- ] || die "usage: $0 [--out DIR] RELEASE [-- CMD…]"
	shift
	[ $# -gt 0 ] || die "-- needs a command"
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
root=$out/$release$suffix

# in_root ROOT CMD…: CMD chrooted into ROOT, in a mount namespace of its own with the host's
# /proc, /sys and /dev (recursive binds: devtmpfs, devpts, sysfs as the host has them).
in_root() {
	# shellcheck disable=SC2016 # for the inner shell
	unshare -m --propagation private sh -c '
		r=$1
		shift
		for d in proc sys dev; do
			mkdir -p "$r/$d"
			mount --rbind "/$d" "$r/$d" || exit 1
		done
		exec chroot "$r" "$@"' in_root "$@"
}

if [ $# -gt 0 ]; then
	[ -f "$root.stamp" ] || die "no root in $root (run $0 $release first)"
	in_root "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8 "$@"
	exit $?
fi

# The mirror and its keyring: the host's own Debian entry (deb.debian.org by default).
mirror=http://deb.debian.org/debian
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
# shellcheck source=scripts/apt-private.sh
. "$here/apt-private.sh"
line=$(apt_private_sources deb | awk '$0 !~ /-security|-updates|-backports/ && / main/ {
	print; exit }')
case $line in
*' http'*)
	mirror=$(echo "$line" | sed -n 's/.* \(https\{0,1\}:[^ ]*\) .*/\1/p')
	k=$(echo "$line" | sed -n 's/.*signed-by=\([^] ]*\).*/\1/p')
	[ -z "$k" ] || keyring=$k
	;;
esac
[ -n "$mirror" ] || mirror=http://deb.debian.org/debian
stamp_text="format=$STAMP_FORMAT release=$release mirror=$mirror packages=$PKGS"

exec 9>"$root.lock"
flock 9
if [ -f "$root.stamp" ] && [ "$(cat "$root.stamp")" = "$stamp_text" ] && [ -x "$root$gen_bin" ]; then
	echo "$root"
	exit 0
fi

command -v debootstrap >/dev/null || die "no debootstrap (apt-get install debootstrap)"
[ "$(id -u)" -eq 0 ] || die "must run as root (debootstrap, chroot)"
t0=$(date +%s)
tmp=$root.tmp
rm -rf "$tmp" "$root" "$root.stamp"
say "debootstrap $release from $mirror into $tmp"
unshare -m --propagation private debootstrap --variant=minbase --keyring="$keyring" \
	"$release" "$tmp" "$mirror" >"$root.debootstrap.log" 2>&1 ||
	die "debootstrap failed: see $root.debootstrap.log"
# Nothing in the root starts services, and its kernel hook is never run.
printf '#!/bin/sh\nexit 101\n' >"$tmp/usr/sbin/policy-rc.d"
chmod 0755 "$tmp/usr/sbin/policy-rc.d"
in_root "$tmp" dpkg-divert --local --rename --divert "/etc/kernel/postinst.d/$gen_hook.distro-root" \
	--add "/etc/kernel/postinst.d/$gen_hook" >/dev/null
# dracut's own trigger runs the hook by its path (trixie): a stub that does nothing.
mkdir -p "$tmp/etc/kernel/postinst.d"
printf '#!/bin/sh\n# distro-root.sh: this root builds no initramfs of its own\nexit 0\n' \
	>"$tmp/etc/kernel/postinst.d/$gen_hook"
chmod 0755 "$tmp/etc/kernel/postinst.d/$gen_hook"
say "apt-get install $PKGS"
# shellcheck disable=SC2086 # the package list
in_root "$tmp" /usr/bin/env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
	--no-install-recommends $PKGS >>"$root.debootstrap.log" 2>&1 ||
	die "apt-get install in the root failed: see $root.debootstrap.log"
in_root "$tmp" apt-get clean
[ -x "$tmp$gen_bin" ] || die "no ${GENERATOR:-dracut} in the root"
set -- "$tmp"/usr/lib/modules/*/modules.dep
[ -f "$1" ] || die "no kernel modules (modules.dep) in the root"
mv "$tmp" "$root"
echo "$stamp_text" >"$root.stamp"
say "$release ready in $root in $(($(date +%s) - t0)) s ($(du -sm "$root" | cut -f1) MiB)"
echo "$root"
