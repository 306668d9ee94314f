#!/bin/sh
# Run the libFuzzer harnesses: tests/fuzz/run.sh [SECONDS] [HARNESS...]
#
# Builds them (tests/fuzz/build.sh), then runs each for SECONDS (default 10; 0 replays the
# corpus once and mutates nothing) on a copy of its seed corpus in FUZZ_OUT/corpus/HARNESS
# that grows from run to run, with its dictionary. Prints execs, exec/s, coverage and corpus
# (libFuzzer's cov, ft and corp) per harness. A crash, a sanitizer report, a leak or a timeout
# leaves the input in FUZZ_OUT/crashes/HARNESS/ and the log in FUZZ_OUT/logs/HARNESS.log,
# and makes the exit status non-zero.
#
# Environment: FUZZ_OUT (default build/fuzz), FUZZ_JOBS (harnesses at a time, default 1),
# FUZZ_ARGS (more libFuzzer options), GPUVM_SRC and CC (see build.sh). FUZZ_TMPDIR is set
# for the harnesses to a scratch directory that the run removes.
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
secs=${1:-10}
[ $# -gt 0 ] && shift
out=${FUZZ_OUT:-$top/build/fuzz}
jobs=${FUZZ_JOBS:-1}

case $secs in
'' | *[!0-9]*)
	echo "usage: tests/fuzz/run.sh [SECONDS] [HARNESS...]" >&2
	exit 2
	;;
esac

"$top/tests/fuzz/build.sh" "$out" || exit 2

if [ $# -eq 0 ]; then
	for h in "$top"/tests/fuzz/fuzz-*.c; do
		h=$(basename "$h" .c)
		set -- "$@" "${h#fuzz-}"
	done
fi
for h in "$@"; do
	[ -x "$out/bin/$h" ] || { echo "fuzz: no harness '$h'" >&2; exit 2; }
done

# One harness, in the background of the batch: its status goes to a file.
run_one() {
	h=$1
	corpus=$out/corpus/$h
	mkdir -p "$corpus" "$out/crashes/$h" "$out/logs"
	rm -f "$out/crashes/$h/"*
	if [ -d "$top/tests/fuzz/corpus/$h" ]; then
		cp "$top/tests/fuzz/corpus/$h/"* "$corpus/" 2>/dev/null
	fi
	if [ "$secs" -eq 0 ]; then
		limit=-runs=0
	else
		limit=-max_total_time=$secs
	fi
	dict=
	[ -f "$top/tests/fuzz/dict/$h.dict" ] && dict=-dict=$top/tests/fuzz/dict/$h.dict
	# shellcheck disable=SC2086 # $dict and FUZZ_ARGS are empty or split on purpose
	"$out/bin/$h" "$limit" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$out/crashes/$h/" $dict ${FUZZ_ARGS:-} "$corpus" \
		>"$out/logs/$h.log" 2>&1
	echo $? >"$out/logs/$h.status"
}

# The figures of one finished run, from libFuzzer's final lines.
report() {
	h=$1
	log=$out/logs/$h.log
	rc=$(cat "$out/logs/$h.status" 2>/dev/null || echo 1)
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
	cov=$(sed -n 's/.*[[:space:]]cov: \([0-9]*\) ft: \([0-9]*\) corp: \([0-9]*\).*/\1 \2 \3/p' \
		"$log" | tail -n 1)
	# shellcheck disable=SC2086 # cov holds three numbers
	set -- ${cov:-- - -}
	printf '%-14s %12s %10s %6s %7s %7s  ' "$h" "${execs:--}" "${rate:--}" "$1" "$2" "$3"
	if [ "$rc" -eq 0 ]; then
		echo ok
		return 0
	fi
	echo "FAILED (status $rc)"
	if grep -q -a 'gpuvm-fuzz: invariant' "$log"; then
		grep -a -A 1 -m 1 'gpuvm-fuzz: invariant' "$log" | sed 's/^/    /'
	else
		grep -a -m 2 -E 'ERROR: |runtime error|SUMMARY' "$log" | sed 's/^/    /'
	fi
	for f in "$out/crashes/$h/"*; do
		[ -f "$f" ] && echo "    input: $f"
	done
	echo "    log: $log"
	return 1
}

# Scratch files of the harnesses (config-update's config), gone after the run even when a
# harness aborts: tmpfs, as every update fsyncs.
scratch=$(mktemp -d /dev/shm/gpuvm-fuzz-run.XXXXXX 2>/dev/null || mktemp -d) || exit 2
trap 'rm -rf "$scratch"' EXIT
export FUZZ_TMPDIR="$scratch"

printf 'fuzz: %s harness(es), %s s each, %s at a time\n' "$#" "$secs" "$jobs"
rm -f "$out/logs/"*.status 2>/dev/null
batch=
n=0
for h in "$@"; do
	run_one "$h" &
	batch="$batch $!"
	n=$((n + 1))
	if [ "$n" -ge "$jobs" ]; then
		# shellcheck disable=SC2086 # a list of pids
		wait $batch
		batch=
		n=0
	fi
done
# shellcheck disable=SC2086
[ -n "$batch" ] && wait $batch

printf '%-14s %12s %10s %6s %7s %7s  %s\n' harness execs exec/s cov ft corp result
status=0
for h in "$@"; do
	report "$h" || status=1
done
exit $status
