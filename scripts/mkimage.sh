#!/bin/sh
# mkimage.sh — build gpuvm's standalone busybox initramfs (`make image`).
#
#   scripts/mkimage.sh [--kernel-dir DIR] [--kver KVER] [--out FILE]
#                      [--modules "M1 M2 …"] [--load "M1 M2 …"] [--config FILE]
#                      [--gpuvm FILE | --no-gpuvm] [--init FILE] [--busybox FILE]
#                      [--add SRC:DEST]… [--compress-modules none|xz|zst]
#                      [--compress zstd|gzip|xz|none]
#
#   --kernel-dir DIR  the tree whose lib/modules/KVER holds the modules: / (default) for the
#                     running system, build/kernel for scripts/fetch-kernel.sh's
#   --kver KVER       default: DIR/KVER when that file exists, else `uname -r`
#   --out FILE        default build/initrd.img
#   --modules LIST    modules to put in the image, with their dependencies (softdeps too);
#                     repeatable, names split on blanks and commas
#   --load LIST       the same, and also named in /etc/modules-load so that /init loads them
#                     after gpuvm (the root disk's: e.g. "virtio_pci virtio_blk ext4")
#                     The vfio set is always in: vfio, vfio_iommu_type1, vfio-pci,
#                     vfio-pci-core (those the kernel has: 5.10 has no vfio-pci-core),
#                     their dependencies, and the vfio variant drivers that modules.alias
#                     offers for NVIDIA (vendor 10de).
#   --config FILE     installed as /etc/gpuvm/gpuvm.conf
#   --gpuvm FILE      installed as /sbin/gpuvm (default: build/gpuvm of this repo when it
#                     exists); --no-gpuvm leaves it out
#   --init FILE       installed as /init (default: init of this repo)
#   --busybox FILE    a static busybox (default /bin/busybox, from busybox-static); every
#                     applet of `busybox --list-full` is linked to it
#   --add SRC:DEST    copy file SRC to the path DEST in the image, or the contents of directory
#                     SRC into directory DEST (repeatable); for tests, e.g. a hook:
#                     --add check.sh:/init.d/50-check.sh
#   --compress-modules xz|zst   compress the image's modules (.ko.xz, .ko.zst; as the kernel's
#                     build does) and run depmod again. Modules from --load and their
#                     dependencies stay uncompressed: /init loads them with busybox modprobe.
#   --compress        the cpio archive's compression (default zstd)
# Every module tree in the image gets fresh modules.* indexes from depmod. The archive is
# newc, owned by root, with mtimes set to SOURCE_DATE_EPOCH (default 0); no root privileges
# are needed.
set -eu

prog=mkimage
die() { echo "$prog: $*" >&2; exit 1; }
say() { echo "$prog: $*" >&2; }

here=$(cd "$(dirname "$0")/.." && pwd)
kdir=/ kver='' out=build/initrd.img modules='' load='' config='' init=$here/init
gpuvm=$here/build/gpuvm gpuvm_explicit='' busybox=/bin/busybox adds='' cmods=none compress=zstd
nl='
'

need() { [ "$2" -ge 2 ] || die "$1 needs a value"; }
while [ $# -gt 0 ]; do
	case $1 in --*=*) opt=$1; shift; set -- "${opt%%=*}" "${opt#*=}" "$@" ;; esac
	case $1 in
	--kernel-dir) need "$1" $#; kdir=$2 ;;
	--kver) need "$1" $#; kver=$2 ;;
	--out) need "$1" $#; out=$2 ;;
	--modules) need "$1" $#; modules="$modules $2" ;;
	--load) need "$1" $#; load="$load $2" ;;
	--config) need "$1" $#; config=$2 ;;
	--gpuvm) need "$1" $#; gpuvm=$2; gpuvm_explicit=1 ;;
	--no-gpuvm) gpuvm=''; shift; continue ;;
	--init) need "$1" $#; init=$2 ;;
	--busybox) need "$1" $#; busybox=$2 ;;
	--add) need "$1" $#
		case $2 in *:/*) ;; *) die "--add $2: expected SRC:/DEST" ;; esac
		adds="$adds$2$nl" ;;
	--compress-modules) need "$1" $#; cmods=$2 ;;
	--compress) need "$1" $#; compress=$2 ;;
	-h | --help) sed -n '2,/^set -eu/{/^set -eu/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
	*) die "unknown argument: $1 (see --help)" ;;
	esac
	shift 2
done

case $cmods in none | xz | zst) ;; zstd) cmods=zst ;; *) die "--compress-modules: none, xz or zst" ;; esac
case $compress in
zstd) ccmd='zstd -q -T0 -10 -c' ;;
gzip) ccmd='gzip -9 -n -c' ;;
xz) ccmd='xz -q -T0 -C crc32 -c' ;;
none) ccmd='cat' ;;
*) die "--compress: zstd, gzip, xz or none" ;;
esac

[ -d "$kdir" ] || die "--kernel-dir $kdir: no such directory"
kdir=$(cd "$kdir" && pwd)
if [ -z "$kver" ]; then
	if [ -f "$kdir/KVER" ]; then kver=$(cat "$kdir/KVER"); else kver=$(uname -r); fi
fi
moddir=$kdir/lib/modules/$kver
[ -f "$moddir/modules.dep.bin" ] ||
	die "$moddir has no modules.dep.bin (run depmod -b $kdir $kver, or scripts/fetch-kernel.sh)"
[ -f "$init" ] || die "--init $init: no such file"
[ -x "$busybox" ] || die "--busybox $busybox: not found (apt-get install busybox-static)"
if command -v file >/dev/null && file -L "$busybox" | grep -q 'dynamically linked'; then
	die "$busybox is dynamically linked: install busybox-static (or pass --busybox)"
fi
if [ -n "$gpuvm" ] && [ ! -f "$gpuvm" ]; then
	[ -z "$gpuvm_explicit" ] || die "--gpuvm $gpuvm: no such file"
	gpuvm=''
fi
[ -z "$config" ] || [ -f "$config" ] || die "--config $config: no such file"

stage=$(mktemp -d "${TMPDIR:-/tmp}/gpuvm-mkimage.XXXXXX")
tmp=''
trap 'rm -rf "$stage" ${tmp:+"$tmp"}' EXIT
trap 'exit 130' INT TERM

# --- layout and busybox ----------------------------------------------------------------------
for d in bin sbin usr/bin usr/sbin etc dev proc sys run tmp newroot root lib/modules/"$kver"; do
	mkdir -p "$stage/$d"
done
cp "$busybox" "$stage/bin/busybox"
chmod 0755 "$stage/bin/busybox"
# One link per applet, made by busybox's own sh: its ln runs without exec, which is 10 times
# faster than a process per link here. A busybox of another architecture (arm64's for an arm64
# image) cannot run here: the host's /bin/busybox lists the applets and makes the links, which
# is right when both come from the same busybox-static version (checked).
bbhost=$stage/bin/busybox
if ! "$bbhost" true 2>/dev/null; then
	bbhost=/bin/busybox
	[ -x "$bbhost" ] || die "$busybox cannot run here and there is no /bin/busybox to list its applets"
	v1=$(LC_ALL=C grep -ao 'BusyBox v[0-9][^ ]* ([^)]*)' "$busybox" | head -n 1)
	v2=$(LC_ALL=C grep -ao 'BusyBox v[0-9][^ ]* ([^)]*)' "$bbhost" | head -n 1)
	if [ -z "$v1" ] || [ "$v1" != "$v2" ]; then
		die "$busybox ($v1) cannot run here and /bin/busybox is another version ($v2)"
	fi
fi
# shellcheck disable=SC2016 # the script is busybox sh's
"$bbhost" --list-full | "$bbhost" sh -c '
	while read -r applet; do
		case $applet in bin/busybox | linuxrc) continue ;; esac # not over itself; no /linuxrc
		[ -e "$1/$applet" ] || [ -L "$1/$applet" ] || ln -s /bin/busybox "$1/$applet" || exit 1
	done' sh "$stage" || die "cannot link the applets of $busybox"
[ -L "$stage/bin/sh" ] || die "$busybox has no sh applet"
ln -s /proc/mounts "$stage/etc/mtab"
cp "$init" "$stage/init"
chmod 0755 "$stage/init"
if [ -n "$gpuvm" ]; then
	cp "$gpuvm" "$stage/sbin/gpuvm"
	chmod 0755 "$stage/sbin/gpuvm"
	if command -v file >/dev/null && file -L "$gpuvm" | grep -q 'dynamically linked'; then
		say "warning: $gpuvm is dynamically linked; it will not run in this image"
	fi
fi
if [ -n "$config" ]; then
	mkdir -p "$stage/etc/gpuvm"
	cp "$config" "$stage/etc/gpuvm/gpuvm.conf"
	chmod 0644 "$stage/etc/gpuvm/gpuvm.conf"
fi

# --- modules ---------------------------------------------------------------------------------
# deps NAME…: the module files (relative to moddir) that loading the NAMEs loads, softdeps
# included; builtin modules need none.
deps() {
	[ $# -gt 0 ] || return 0
	show=$(modprobe -S "$kver" -d "$kdir" --show-depends -a "$@" 2>&1) ||
		die "$(printf '%s\n' "$show" | grep -v '^insmod ' || echo "modprobe --show-depends $*")"
	printf '%s\n' "$show" | sed -n "s|^insmod .*/lib/modules/$kver/\([^ ]*\).*|\1|p"
}
words() { printf '%s\n' "$*" | tr -s ', \t' '\n' | sed '/^$/d'; }

# The vfio set this kernel has (vfio-pci-core is a module of its own from 5.15).
vfio_set=''
for m in vfio vfio_iommu_type1 vfio-pci vfio-pci-core; do
	if modprobe -S "$kver" -d "$kdir" --show-depends "$m" >/dev/null 2>&1; then
		vfio_set="$vfio_set $m"
	elif [ "$m" != vfio-pci-core ]; then
		die "the kernel $kver in $kdir has no module $m"
	fi
done
vfio_variants=$(sed -n 's/^alias vfio_pci:v000010DE[^ ]* \([^ ]*\)$/\1/p' "$moddir/modules.alias" |
	sort -u | tr '\n' ' ')
files=$stage/.files
keep=$stage/.keep
# shellcheck disable=SC2046 # module names have no blanks or wildcards
deps $(words "$vfio_set" "$vfio_variants" "$modules") >"$files"
# shellcheck disable=SC2046
deps $(words "$load") >"$keep"
cat "$keep" >>"$files"
sort -u -o "$files" "$files"
(cd "$moddir" && xargs cp --parents -t "$stage/lib/modules/$kver") <"$files" ||
	die "cannot copy the modules from $moddir"
for f in modules.order modules.builtin modules.builtin.modinfo; do
	[ ! -f "$moddir/$f" ] || cp "$moddir/$f" "$stage/lib/modules/$kver/"
done
# Host depmod.d files are not the image's: -C to a path that does not exist.
depmod -C "$stage/.no-depmod.d" -b "$stage" "$kver" ||
	die "depmod failed for the image's modules"

if [ "$cmods" != none ]; then
	while read -r rel; do
		case $rel in *.ko) ;; *) continue ;; esac # already compressed in the source tree
		grep -qxF "$rel" "$keep" && continue
		f=$stage/lib/modules/$kver/$rel
		case $cmods in
		xz) xz -q -C crc32 --lzma2=dict=1MiB -T1 "$f" ;; # what the kernel's build uses
		zst) zstd -q -T0 --rm -19 "$f" ;;
		esac
	done <"$files"
	depmod -C "$stage/.no-depmod.d" -b "$stage" "$kver" ||
		die "depmod failed after compressing the modules"
fi
nmod=$(wc -l <"$files")
rm -f "$files" "$keep"
[ -z "$(words "$load")" ] || words "$load" >"$stage/etc/modules-load"

# --- extra files -----------------------------------------------------------------------------
printf '%s' "$adds" | while IFS= read -r spec; do
	[ -n "$spec" ] || continue
	src=${spec%%:/*} dest=/${spec#*:/}
	if [ -d "$src" ]; then
		mkdir -p "$stage$dest"
		cp -R "$src/." "$stage$dest"
	elif [ -e "$src" ]; then
		mkdir -p "$stage${dest%/*}"
		cp "$src" "$stage$dest"
	else
		die "--add $spec: $src does not exist"
	fi
done

# --- archive ---------------------------------------------------------------------------------
mkdir -p "$(dirname "$out")"
tmp=$out.tmp.$$
find "$stage" -exec touch -h -d "@${SOURCE_DATE_EPOCH:-0}" {} +
(cd "$stage" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --reproducible --quiet) |
	$ccmd >"$tmp" || { rm -f "$tmp"; die "cannot write $out"; }
mv "$tmp" "$out"
size=$(wc -c <"$out")
nmod="$nmod modules"
[ "$cmods" = none ] || nmod="$nmod (.ko.$cmods)"
say "$out: $((size / 1024)) KiB ($compress), kernel $kver, $nmod," \
	"gpuvm: ${gpuvm:-none}${config:+, config $config}"
