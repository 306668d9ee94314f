#!/bin/sh
# In the guest, after gpuvm's boot run (an /init.d hook before the check: --add
# "$E2E_GUEST/gpuvm-dump.sh:/init.d/45-gpuvm-dump.sh"): a real kernel's sysfs as a dump, for
# the build machine to replay (lib.sh's e2e_dump_replay). gpuvm dump writes the archive, and
# the guest's own gpuvm says its plan in each mode (plan --mode MODE --json); the three plans
# and the dump go to the console as one gzipped tar in base64, "@dump LINE" lines between
# "@dump-begin" and "@dump-end" (no second disk needed).
# Kernel command line:
#   e2e.dump=IDS   with IDS other than 1, dump and plan with the boot line plus
#                  gpuvm.ids=IDS (--cmdline): a selection the boot itself did not make, e.g.
#                  a function in a group that is not viable
# With the dump go what gpuvm-dra reads beside it (tests/dra/replay.sh: the plugin on the
# dump, on the build machine) that the dump does not hold: gpuvm's pinned records
# (/run/gpuvm/pinned/*, as pinned/) and the guest's vfio device nodes, /dev/vfio's character
# devices one a line (dev-vfio.txt: "vfio/1", "vfio/vfio", "vfio/devices/vfio0").
# Facts: dump_rc (gpuvm dump's exit status), plan_rc_MODE, dump_bytes (the archive),
# dump_sha256 (of the gzipped tar on the console), dump_secs (from the dump's start to the
# end of the console lines, /proc/uptime).

dmesg -n 1 2>/dev/null
fact() { echo "@e2e $1=$2"; }
up() { cut -d' ' -f1 /proc/uptime; }
t0=$(up)
read -r cmdline </proc/cmdline
ids=1
for a in $cmdline; do
	case $a in e2e.dump=*) ids=${a#*=} ;; esac
done
d=/run/e2e-dump
rm -rf "$d"
mkdir -p "$d"
if [ "$ids" = 1 ]; then
	set --
else
	set -- --cmdline "$cmdline gpuvm.ids=$ids"
fi
# stderr into the archive: a plan's errors (a group not viable) are no boot's
gpuvm "$@" dump --out "$d/dump.tar" 2>"$d/dump.err"
fact dump_rc $?
for m in container vm-passthrough vm-vgpu; do
	gpuvm "$@" plan --mode "$m" --json >"$d/plan-$m.json" 2>"$d/plan-$m.err"
	fact "plan_rc_$m" $?
done
fact dump_bytes "$(wc -c <"$d/dump.tar")"
mkdir -p "$d/pinned"
for f in /run/gpuvm/pinned/*; do
	[ ! -f "$f" ] || cp "$f" "$d/pinned/"
done
for f in /dev/vfio/* /dev/vfio/devices/*; do
	[ ! -c "$f" ] || echo "${f#/dev/}"
done >"$d/dev-vfio.txt"
(cd "$d" && tar -cf - dump.tar dump.err plan-* pinned dev-vfio.txt) | gzip -9 >"$d.tgz"
fact dump_sha256 "$(sha256sum "$d.tgz" | cut -d' ' -f1)"
echo "@dump-begin"
base64 "$d.tgz" | sed 's/^/@dump /'
echo "@dump-end"
fact dump_secs "$(awk -v a="$t0" -v b="$(up)" 'BEGIN { printf "%.2f", b - a }')"
rm -rf "$d" "$d.tgz"
