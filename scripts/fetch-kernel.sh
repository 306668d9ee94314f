#!/bin/sh
# fetch-kernel.sh — get Debian's current amd64 (or arm64) kernel into a private tree.
#
#   scripts/fetch-kernel.sh [--arch ARCH] [--release RELEASE] [--package PKG] [OUTDIR]
#                                                         (OUTDIR defaults to build)
#
# Resolves the real kernel package from the linux-image-ARCH metapackage (or takes
# --package linux-image-X-ARCH), downloads it with `apt-get download` into OUTDIR/debs/
# and unpacks it with `dpkg -x` into OUTDIR/kernel/:
#   OUTDIR/kernel/boot/vmlinuz-KVER
#   OUTDIR/kernel/boot/vmlinux-KVER        (amd64: the ELF kernel inside, for QEMU's faster
#                                           PVH boot; arm64's vmlinuz is an Image already)
#   OUTDIR/kernel/lib/modules/KVER/        (modules.dep made with depmod -b if missing)
#   OUTDIR/kernel/KVER                     (one line: the kernel version)
# Prints KVER on stdout; progress goes to stderr. Idempotent: when the tree for the
# resolved version is complete it returns at once. The host is left alone: nothing is
# installed, apt's configuration is not changed (as root, it runs `apt-get update` when apt
# has no package lists yet).
# --arch ARCH (default: the host's, amd64): another architecture's kernel (arm64, e.g. into
# OUTDIR build/arm64) comes through apt pointed at private folders in OUTDIR/apt
# (scripts/apt-private.sh); no foreign architecture is added to the system's dpkg. Its
# modules.dep is made on the host with depmod -b, which reads any architecture's modules.
# --release RELEASE (bullseye, bookworm, trixie, sid, …; default: none, the system's apt as
# above): that Debian release's kernel, through private folders in OUTDIR/apt whose sources
# are the release's suite (and its -security suite, but for sid) on the system's mirror
# (e.g. OUTDIR build/kernels/bullseye, or build/kernels/trixie-arm64 with --arch arm64).
# Their package lists are fetched again a day after the last update, so that sid's
# meta-package names its newest kernel; offline, the tree already there is used. A kernel split in parts
# (sid from 7.x: linux-image-KVER only depends on linux-base-KVER, with the config,
# linux-binary-KVER, with usr/lib/modules/KVER/vmlinuz, and linux-modules-KVER) is fetched
# whole: every linux-*-KVER package the image package depends on; boot/vmlinuz-KVER and
# boot/config-KVER are then links to the files in the modules directory.
set -eu

prog=fetch-kernel
die() { echo "$prog: $*" >&2; exit 1; }
say() { echo "$prog: $*" >&2; }

pkg='' release=''
arch=$(dpkg --print-architecture 2>/dev/null || echo amd64)
native=$arch
while [ $# -gt 0 ]; do
	case $1 in
	--package) [ $# -ge 2 ] || die "--package needs a value"; pkg=$2; shift 2 ;;
	--package=*) pkg=${1#*=}; shift ;;
	--arch) [ $# -ge 2 ] || die "--arch needs a value"; arch=$2; shift 2 ;;
	--arch=*) arch=${1#*=}; shift ;;
	--release) [ $# -ge 2 ] || die "--release needs a value"; release=$2; shift 2 ;;
	--release=*) release=${1#*=}; shift ;;
	-h | --help) sed -n '2,/^set -eu/{/^set -eu/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
	--) shift; break ;;
	-*) die "unknown option: $1" ;;
	*) break ;;
	esac
done
[ $# -le 1 ] || die "usage: $0 [--arch ARCH] [--release RELEASE] [--package PKG] [OUTDIR]"
case $release in
*[!a-z0-9-]* | -*) die "not a release name: $release" ;;
esac
out=${1:-build}
mkdir -p "$out"
out=$(cd "$out" && pwd)
kdir=$out/kernel

# tree_ok TREE KVER: is TREE a finished unpack of KVER?
tree_ok() {
	[ -f "$1/KVER" ] && [ "$(cat "$1/KVER")" = "$2" ] &&
		[ -f "$1/boot/vmlinuz-$2" ] && [ -f "$1/lib/modules/$2/modules.dep" ]
}

# apt: the system's for the host's architecture, a private state for another one or for
# another release.
apt() { "$@"; }
private=''
if [ "$arch" != "$native" ] || [ -n "$release" ]; then
	private=1
	here=$(cd "$(dirname "$0")" && pwd)
	# shellcheck source=scripts/apt-private.sh
	. "$here/apt-private.sh"
	apt_private_init "$out/apt" deb "$arch" "$release"
	apt() { apt_private "$@"; }
fi
# A release's private lists are fetched again a day after the last update (OUTDIR/apt/updated;
# apt leaves an unchanged list's time as it was): sid moves on. A failed update (offline)
# leaves the old lists, and the tree already there is used.
if [ -n "$release" ] && [ -z "$pkg" ] &&
	{ [ -z "$(find "$out/apt/lists" -maxdepth 1 -name '*_Packages*' 2>/dev/null)" ] ||
		[ -z "$(find "$out/apt/updated" -mmin -1440 2>/dev/null)" ]; }; then
	say "apt-get update for $release ($arch)"
	if apt apt-get update -qq -o Acquire::Languages=none >&2; then
		touch "$out/apt/updated"
	else
		say "warning: apt-get update failed"
	fi
fi

# Resolve the package: the metapackage's dependency on linux-image-<kver>.
resolve() {
	apt apt-cache show --no-all-versions "linux-image-$arch" 2>/dev/null |
		sed -n "s/^Depends: .*\(linux-image-[0-9][^ ,]*-$arch\).*/\1/p" | head -n 1
}
if [ -z "$pkg" ]; then
	pkg=$(resolve) || pkg=
	if [ -z "$pkg" ] && { [ "$(id -u)" -eq 0 ] || [ -n "$private" ]; } &&
		! tree_ok "$kdir" "$(cat "$kdir/KVER" 2>/dev/null)"; then
		say "apt-cache does not know linux-image-$arch: apt-get update"
		apt apt-get update -qq >&2 || true
		pkg=$(resolve) || pkg=
	fi
	if [ -z "$pkg" ]; then
		# No apt lists (offline, or `apt-get update` never ran): use what is there.
		if [ -f "$kdir/KVER" ] && tree_ok "$kdir" "$(cat "$kdir/KVER")"; then
			say "cannot resolve linux-image-$arch with apt-cache; using the kernel already in $kdir"
			cat "$kdir/KVER"
			exit 0
		fi
		die "cannot resolve linux-image-$arch with apt-cache (run apt-get update first)"
	fi
fi
case $pkg in
linux-image-*) kver=${pkg#linux-image-} ;;
*) die "not a kernel image package: $pkg" ;;
esac

if tree_ok "$kdir" "$kver"; then
	echo "$kver"
	exit 0
fi

# vmlinux BZIMAGE CONFIG OUT: extract the ELF kernel from the bzImage (compression per the
# kernel's config). QEMU boots it through its PVH entry, without the real-mode setup and the
# decompressor: under TCG that halves a boot. Status 1 when it cannot.
vmlinux() {
	case $(grep -E '^CONFIG_KERNEL_(XZ|ZSTD|GZIP)=y' "$2") in
	*XZ=y) magic=$(printf '\3757zXZ') unz='xz -dc' ;;
	*ZSTD=y) magic=$(printf '\050\265\057\375') unz='zstd -dcq' ;;
	*GZIP=y) magic=$(printf '\037\213\010') unz='gzip -dc' ;;
	*) return 1 ;;
	esac
	grep -q '^CONFIG_PVH=y' "$2" || return 1
	for off in $(LC_ALL=C grep -abo "$magic" "$1" | head -n 5 | cut -d: -f1); do
		# The payload is followed by more data: the decompressor's complaint is expected.
		tail -c "+$((off + 1))" "$1" | $unz >"$3" 2>/dev/null
		[ "$(head -c 4 "$3" | od -An -c | tr -d ' ')" = 177ELF ] && return 0
	done
	rm -f "$3"
	return 1
}

# The packages that make the kernel: the image package and, where the kernel comes in parts
# (sid from 7.x), every linux-*-KVER package it depends on (base: config and modules.builtin;
# binary: the vmlinuz; modules).
more=$(apt apt-cache show --no-all-versions "$pkg" 2>/dev/null | sed -n 's/^Depends: //p' |
	tr -s ',|' '\n' | sed -n "s/^ *\(linux-[a-z-]*-$kver\)\( .*\)\{0,1\}\$/\1/p" |
	grep -vxF "$pkg" | sort -u | tr '\n' ' ') || more=''
parts="$pkg $more"

# Download (apt checks the hash against the signed index), unless already here.
debs=$out/debs
mkdir -p "$debs"
debfiles=''
for p in $parts; do
	deb=$(find "$debs" -maxdepth 1 -name "${p}_*_$arch.deb" | sort | tail -n 1)
	if [ -z "$deb" ]; then
		say "downloading $p"
		# As root apt would warn that its sandbox user cannot write here; download as root.
		(cd "$debs" && apt apt-get download -q -o APT::Sandbox::User=root "$p" >&2) ||
			die "apt-get download $p failed"
		deb=$(find "$debs" -maxdepth 1 -name "${p}_*_$arch.deb" | sort | tail -n 1)
		[ -n "$deb" ] || die "apt-get download left no ${p}_*.deb in $debs"
	fi
	debfiles="$debfiles $deb"
done

# Unpack into a fresh directory and put it in place only when it is complete.
tmp=$out/kernel.tmp.$$
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
rm -rf "$tmp"
mkdir -p "$tmp"
for deb in $debfiles; do
	say "unpacking $(basename "$deb")"
	dpkg -x "$deb" "$tmp"
done
# Merged-/usr packages (trixie on) put modules under usr/lib/modules.
if [ ! -d "$tmp/lib/modules" ] && [ -d "$tmp/usr/lib/modules" ]; then
	ln -s usr/lib "$tmp/lib"
fi
# A kernel in parts keeps its vmlinuz and config in the modules directory.
for f in vmlinuz config; do
	if [ ! -e "$tmp/boot/$f-$kver" ] && [ -f "$tmp/lib/modules/$kver/$f" ]; then
		mkdir -p "$tmp/boot"
		ln -s "../lib/modules/$kver/$f" "$tmp/boot/$f-$kver"
	fi
done
[ -f "$tmp/boot/vmlinuz-$kver" ] || die "$parts: no boot/vmlinuz-$kver"
[ -d "$tmp/lib/modules/$kver" ] || die "$parts: no lib/modules/$kver"
if [ ! -f "$tmp/lib/modules/$kver/modules.dep" ]; then
	say "depmod -b for $kver"
	depmod -b "$tmp" "$kver"
fi
if [ "$arch" = amd64 ]; then
	vmlinux "$tmp/boot/vmlinuz-$kver" "$tmp/boot/config-$kver" "$tmp/boot/vmlinux-$kver" ||
		say "warning: no vmlinux-$kver could be extracted (QEMU boots the vmlinuz, more slowly)"
fi
echo "$kver" >"$tmp/KVER"
rm -rf "$kdir"
mv "$tmp" "$kdir"
trap - EXIT
say "kernel $kver in $kdir"
echo "$kver"
