#!/bin/sh
# dra/sysroot.sh ARCH OUTDIR — what cross-building gpuvm-dra for ARCH needs from Debian 12:
# glibc's libc6-dev and the -dev packages of its libraries (libnghttp2, libprotobuf-c, libcurl
# with OpenSSL, json-c) and everything they depend on, of that architecture, downloaded through a private apt state
# (scripts/apt-private.sh) and unpacked with dpkg-deb --extract into OUTDIR/root: no foreign
# architecture is added to dpkg, nothing is installed, nothing of ARCH runs. dra/dra.mk
# compiles and links with Debian's TRIPLET-gcc --sysroot OUTDIR/root: the same Debian
# versions the mirror's image carries for ARCH (packaging/mirror-image.sh), so the binary
# finds them there.
#
#   OUTDIR/root       the packages unpacked
#   OUTDIR/SYSROOT    "PACKAGE VERSION ARCH", one a line, what was unpacked
#   OUTDIR/apt        the private apt state and the downloaded .debs
# Idempotent: with OUTDIR/SYSROOT there it returns at once (remove it to redo).
set -eu

prog=dra-sysroot
die() { echo "$prog: $*" >&2; exit 1; }
say() { echo "$prog: $*" >&2; }

[ $# -eq 2 ] || die "usage: $0 ARCH OUTDIR"
arch=$1
case $arch in
arm64 | amd64) ;;
*) die "unsupported architecture: $arch (arm64, amd64)" ;;
esac
mkdir -p "$2"
out=$(cd "$2" && pwd)
[ -f "$out/SYSROOT" ] && [ -d "$out/root" ] && exit 0
command -v dpkg-deb >/dev/null || die "no dpkg-deb"

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/apt-private.sh
. "$here/../scripts/apt-private.sh"

pkgs="libc6-dev libnghttp2-dev libprotobuf-c-dev libcurl4-openssl-dev libjson-c-dev"
state=$out/apt
apt_private_init "$state" deb "$arch" bookworm
say "apt-get update ($arch, private lists in $state)"
apt_private apt-get update >"$state/update.log" 2>&1 ||
	{ tail -n 20 "$state/update.log" >&2; die "apt-get update failed"; }
# What apt would install on an empty system, as packaging/mirror-image.sh resolves its layer.
# shellcheck disable=SC2086 # the package list is split on purpose
apt_private apt-get install -s --no-install-recommends $pkgs >"$state/plan" 2>&1 ||
	{ cat "$state/plan" >&2; die "$arch: apt cannot install $pkgs"; }
sed -n 's/^Inst \([^ ]*\) (\([^ ]*\) [^[]*\[\([a-z0-9]*\)\]).*/\1 \2 \3/p' "$state/plan" |
	LC_ALL=C sort >"$state/packages"
[ "$(wc -l <"$state/packages")" = "$(grep -c '^Inst ' "$state/plan")" ] ||
	die "$arch: cannot read apt's plan ($state/plan)"
say "downloading $(wc -l <"$state/packages") packages ($arch)"
# shellcheck disable=SC2086
apt_private apt-get install -y -q --download-only --no-install-recommends $pkgs \
	>"$state/download.log" 2>&1 || { cat "$state/download.log" >&2; die "$arch: download failed"; }

rm -rf "$out/root" "$out/SYSROOT"
mkdir -p "$out/root"
while read -r pkg ver parch; do
	deb=$state/cache/archives/${pkg}_$(printf '%s' "$ver" | sed 's/:/%3a/')_$parch.deb
	[ -f "$deb" ] || die "$arch: apt left no $deb"
	dpkg-deb --extract "$deb" "$out/root" || die "$arch: cannot unpack $deb"
done <"$state/packages"
for p in $pkgs; do
	grep -q "^$p " "$state/packages" || die "$arch: $p is not in apt's plan"
done
cp "$state/packages" "$out/SYSROOT"
say "$out/root: $(wc -l <"$out/SYSROOT") packages"
