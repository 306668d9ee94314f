#!/bin/sh
# sysroot.sh — what building and booting gpuvm for another architecture needs from Debian,
# in a private tree: musl (musl-dev) and a static busybox (busybox-static) of that
# architecture, downloaded with apt pointed at private folders and unpacked with dpkg -x.
# No foreign architecture is added to the system's dpkg and nothing is installed.
#
#   scripts/sysroot.sh ARCH OUTDIR          e.g. scripts/sysroot.sh arm64 build/arm64
#
#   OUTDIR/musl/            musl-dev:ARCH unpacked; musl-gcc.specs rewritten to point into it
#   OUTDIR/bin/musl-gcc     the cross compiler with those specs, always static
#                           (TRIPLET-gcc -specs … -static; TRIPLET from ARCH)
#   OUTDIR/busybox          busybox-static:ARCH's /bin/busybox
#   OUTDIR/SYSROOT          "<package> <version>", one a line
#   OUTDIR/apt, OUTDIR/debs the private apt state and the downloaded packages
# Idempotent: when everything is there it returns at once (remove OUTDIR/SYSROOT to redo).
set -eu

prog=sysroot
die() { echo "$prog: $*" >&2; exit 1; }
say() { echo "$prog: $*" >&2; }

[ $# -eq 2 ] || die "usage: $0 ARCH OUTDIR"
arch=$1
case $arch in
arm64) triplet=aarch64-linux-gnu musl_triplet=aarch64-linux-musl ;;
*) die "unsupported architecture: $arch (arm64)" ;;
esac
mkdir -p "$2"
out=$(cd "$2" && pwd)
[ -f "$out/SYSROOT" ] && [ -x "$out/bin/musl-gcc" ] && [ -x "$out/busybox" ] && exit 0
command -v "$triplet-gcc" >/dev/null || die "$triplet-gcc not found: run scripts/install-packages.sh"

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/apt-private.sh
. "$here/apt-private.sh"

debs=$out/debs
mkdir -p "$debs"
pkgs="musl-dev busybox-static"
# deb PKG: the downloaded .deb of PKG, if any.
deb() { find "$debs" -maxdepth 1 -name "${1}_*_$arch.deb" | sort | tail -n 1; }
need=
for p in $pkgs; do [ -n "$(deb "$p")" ] || need="$need $p"; done
if [ -n "$need" ]; then
	apt_private_init "$out/apt" deb "$arch"
	say "apt-get update ($arch, private lists in $out/apt)"
	apt_private apt-get update >"$out/apt/update.log" 2>&1 ||
		{ tail -n 20 "$out/apt/update.log" >&2; die "apt-get update failed"; }
	say "downloading$need ($arch)"
	# shellcheck disable=SC2086 # the package list is split on purpose
	(cd "$debs" && apt_private apt-get download $need >&2) || die "apt-get download$need failed"
fi

rm -f "$out/SYSROOT"
: >"$out/SYSROOT.tmp"
for p in $pkgs; do
	f=$(deb "$p")
	[ -n "$f" ] || die "no ${p}_*_$arch.deb in $debs"
	echo "$p $(dpkg-deb -f "$f" Version)" >>"$out/SYSROOT.tmp"
done

rm -rf "$out/musl"
dpkg -x "$(deb musl-dev)" "$out/musl"
lib=$out/musl/usr/lib/$musl_triplet
inc=$out/musl/usr/include/$musl_triplet
if [ ! -f "$lib/musl-gcc.specs" ] || [ ! -f "$lib/libc.a" ] || [ ! -d "$inc" ]; then
	die "musl-dev:$arch has no $musl_triplet specs, libc.a or headers"
fi
sed -e "s|/usr/include/$musl_triplet|$inc|g" -e "s|/usr/lib/$musl_triplet|$lib|g" \
	"$lib/musl-gcc.specs" >"$out/musl/musl-gcc.specs"
mkdir -p "$out/bin"
cat >"$out/bin/musl-gcc.tmp" <<EOF
#!/bin/sh
# musl-gcc for $arch, written by scripts/sysroot.sh: musl-dev:$arch has no shared libc, so
# every link is static.
exec $triplet-gcc "\$@" -specs "$out/musl/musl-gcc.specs" -static
EOF
chmod 0755 "$out/bin/musl-gcc.tmp"
mv "$out/bin/musl-gcc.tmp" "$out/bin/musl-gcc"

rm -rf "$out/busybox-static"
dpkg -x "$(deb busybox-static)" "$out/busybox-static"
cp "$out/busybox-static/bin/busybox" "$out/busybox.tmp"
rm -rf "$out/busybox-static"
mv "$out/busybox.tmp" "$out/busybox"

mv "$out/SYSROOT.tmp" "$out/SYSROOT"
say "$arch: $(tr '\n' ' ' <"$out/SYSROOT")in $out"
