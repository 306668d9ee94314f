#!/bin/sh
# realhost.sh — once, on a borrowed host with an NVIDIA GPU and its driver loaded: what gpuvm
# reads there and what it would decide, all into one folder, changing nothing.
#
#   sh realhost.sh [--gpuvm FILE] OUT              on the host, as root
#   sh realhost.sh --root DIR [--gpuvm FILE] OUT   against a --root tree (its own test)
#
# It builds nothing: FILE is the static gpuvm carried along (default: gpuvm beside this
# script, else build/gpuvm of its tree). OUT is made (it must be new or empty). Before gpuvm
# runs at all the script enters a private mount namespace (unshare -m --propagation private)
# and remounts /sys and /proc read-only there (mount -o remount,bind,ro), /etc and /run too
# (each bound onto itself first); it refuses to go on when /sys is still writable. The host
# outside the namespace keeps its mounts. Then, each into OUT, with its exit status in
# OUT/commands.txt:
#   dump.tar                     gpuvm dump (gpuvm(8), DUMP): the host as a --root tree
#   plan-MODE.json               gpuvm plan --mode MODE --json, for each of the three modes
#   in-use-MODE.json             gpuvm plan --mode MODE --in-use --json: who holds what a
#                                switch to MODE would change (read-only: no unbindLock asked)
#   status.json                  gpuvm status --json
#   check-vm-passthrough.json, check-vm-vgpu.json    gpuvm check --mode M --json
#   kubevirt.yaml, kubevirt.json gpuvm kubevirt, and --json
#   iommu-groups.txt             each IOMMU group and its functions
#   modules.txt                  the loaded modules' names (/proc/modules)
#   lspci.txt                    lspci -nnk, where lspci is
#   nvidia-smi.txt               nvidia-smi -q, where nvidia-smi is, its serial numbers,
#                                UUIDs and part numbers masked
#   version.txt, uname.txt       gpuvm --version, the kernel release
# and each command's stderr as NAME.err. Never apply in any form, never a sysfs write, never
# a module load or unload: the commands are read-only ones, and the mounts hold them to it.
# With --root DIR gpuvm reads DIR (each command gets --root DIR) and lspci and nvidia-smi are
# not run; DIR is left writable, so that the test (tests/bats/dump.bats) proves that nothing
# writes to it. REALHOST_SKIP_REMOUNT=1 leaves the mounts as they are, for the test of the
# refusal only: the check must then stop the script.
set -u

prog=realhost
die() {
	echo "$prog: $*" >&2
	exit 1
}
usage() {
	echo "usage: $prog [--root DIR] [--gpuvm FILE] OUT" >&2
	exit 2
}

here=$(cd "$(dirname "$0")" && pwd)
gpuvm='' root='' out=''
while [ $# -gt 0 ]; do
	case $1 in
	--gpuvm) [ $# -ge 2 ] || usage; gpuvm=$2; shift 2 ;;
	--root) [ $# -ge 2 ] || usage; root=$2; shift 2 ;;
	-h | --help) usage ;;
	-*) usage ;;
	*) [ -z "$out" ] || usage; out=$1; shift ;;
	esac
done
[ -n "$out" ] || usage
if [ -z "$gpuvm" ]; then
	gpuvm=$here/gpuvm
	[ -x "$gpuvm" ] || gpuvm=$here/../build/gpuvm
fi
[ -x "$gpuvm" ] || die "no gpuvm at $gpuvm (--gpuvm FILE: the static binary, build/gpuvm)"
gpuvm=$(cd "$(dirname "$gpuvm")" && pwd)/$(basename "$gpuvm")
[ "$(id -u)" -eq 0 ] || die "must run as root (a private mount namespace; gpuvm reads what root reads)"
command -v unshare >/dev/null || die "no unshare (util-linux)"
if [ -n "$root" ]; then
	[ -d "$root" ] || die "--root $root: not a directory"
	root=$(cd "$root" && pwd)
fi

if [ -z "${REALHOST_INSIDE-}" ]; then
	mkdir -p "$out" || die "cannot make $out"
	out=$(cd "$out" && pwd)
	[ -z "$(ls -A "$out")" ] || die "$out is not empty"
	case $out/ in /sys/* | /proc/* | /etc/* | /run/* | /dev/*) die "$out: under a tree the script makes read-only" ;; esac
	REALHOST_INSIDE=1
	export REALHOST_INSIDE
	set -- --gpuvm "$gpuvm"
	[ -z "$root" ] || set -- "$@" --root "$root"
	exec unshare -m --propagation private sh "$here/$(basename "$0")" "$@" "$out"
fi

# In the namespace: nothing of gpuvm's has run yet.
if [ -z "${REALHOST_SKIP_REMOUNT-}" ]; then
	mount -o remount,bind,ro /sys || die "cannot remount /sys read-only"
	mount -o remount,bind,ro /proc || die "cannot remount /proc read-only"
	for m in /etc /run; do
		mount --bind "$m" "$m" || die "cannot bind $m onto itself"
		mount -o remount,bind,ro "$m" || die "cannot remount $m read-only"
	done
fi
# access(2) says EROFS for a read-only mount, even to root.
if [ -w /sys ] || [ -w /proc ]; then
	die "/sys or /proc is still writable after the remount: stopping before gpuvm runs"
fi
[ -w "$out" ] || die "$out is not writable"

# g ARGS...: gpuvm, on the tree when --root was given.
g() {
	if [ -n "$root" ]; then
		"$gpuvm" --root "$root" "$@"
	else
		"$gpuvm" "$@"
	fi
}

# run NAME COMMAND...: its stdout to OUT/NAME, its stderr to OUT/NAME.err, the status noted.
run() {
	n=$1
	shift
	"$@" >"$out/$n" 2>"$out/$n.err"
	rc=$?
	[ -s "$out/$n.err" ] || rm -f "$out/$n.err"
	printf '%-28s %3d  %s\n' "$n" "$rc" "$*" >>"$out/commands.txt"
}

groups() {
	for gdir in "$root"/sys/kernel/iommu_groups/*; do
		[ -d "$gdir" ] || continue
		printf 'group %s:' "${gdir##*/}"
		for f in "$gdir"/devices/*; do
			[ -e "$f" ] || [ -L "$f" ] || continue
			printf ' %s' "${f##*/}"
		done
		printf '\n'
	done
}

# nvidia-smi -q with what names one board masked: serial numbers, UUIDs, part numbers.
smi() {
	nvidia-smi -q | sed -E 's/^([[:space:]]*[^:]*(Serial|UUID|Part Number|PDI|Board ID|Module ID|Chassis|Node ID)[^:]*:).*$/\1 (masked)/'
}

printf '# realhost.sh: command, exit status, command line\n' >"$out/commands.txt"
run version.txt "$gpuvm" --version
if [ -n "$root" ]; then
	run uname.txt cat "$root/proc/sys/kernel/osrelease"
else
	run uname.txt uname -r
fi
run dump.log g dump --out "$out/dump.tar"
for m in container vm-passthrough vm-vgpu; do
	run "plan-$m.json" g plan --mode "$m" --json
	run "in-use-$m.json" g plan --mode "$m" --in-use --json
done
run status.json g status --json
run check-vm-passthrough.json g check --mode vm-passthrough --json
run check-vm-vgpu.json g check --mode vm-vgpu --json
run kubevirt.yaml g kubevirt
run kubevirt.json g kubevirt --json
run iommu-groups.txt groups
run modules.txt cut -d' ' -f1 "$root/proc/modules"
if [ -z "$root" ]; then
	if command -v lspci >/dev/null; then run lspci.txt lspci -nnk; fi
	if command -v nvidia-smi >/dev/null; then run nvidia-smi.txt smi; fi
fi
[ -s "$out/dump.log" ] || rm -f "$out/dump.log"
echo "$prog: done: $out (exit statuses in $out/commands.txt)" >&2
