#!/bin/sh
# bench/mirror.sh hour|quiet: the label mirror's cost to a fleet (bench/mirror-fleet.py), in a
# scratch directory on /dev/shm. BENCH_MIRRORS: how many mirrors (100); BENCH_MIRROR_SCALE: the
# time scale of the hour (60); BENCH_MIRROR_SECONDS: the quiet window, real seconds (600).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
what=${1:-hour}
[ -x "$top/build/gpuvm" ] || { echo "bench/mirror.sh: no build/gpuvm (make first)" >&2; exit 1; }
base=/dev/shm
[ -d "$base" ] && [ -w "$base" ] || base=${TMPDIR:-/tmp}
work=$(mktemp -d "$base/gpuvm-bench-mirror.XXXXXX")
trap 'rm -rf "$work"' EXIT
case $what in
hour)
	/usr/bin/python3 "$top/bench/mirror-fleet.py" hour --work "$work" --nodes "${BENCH_MIRRORS:-100}" \
		--scale "${BENCH_MIRROR_SCALE:-60}"
	;;
quiet)
	/usr/bin/python3 "$top/bench/mirror-fleet.py" quiet --work "$work" --nodes "${BENCH_MIRRORS:-20}" \
		--seconds "${BENCH_MIRROR_SECONDS:-600}"
	;;
*)
	echo "usage: bench/mirror.sh hour|quiet" >&2
	exit 2
	;;
esac
