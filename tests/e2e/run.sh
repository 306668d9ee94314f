#!/bin/sh
# tests/e2e/run.sh — gpuvm's end-to-end suite: Debian's kernel booted in QEMU (TCG).
#
#   tests/e2e/run.sh [-j N] [SCENARIO…]      run them (default: all, in name order)
#   tests/e2e/run.sh -l                      list the scenarios
#
# A scenario is tests/e2e/scenarios/NAME.sh, sourced with tests/e2e/lib.sh (read it first),
# or a cell of the matrix: a line "NAME CELL ARG…" of tests/e2e/matrix runs
# tests/e2e/cells/CELL.sh with the words ARG… in $E2E_ARGS (compression, architecture,
# on_error: what differs in a word), so that a new cell is one line.
# At most N boots run at a time (default 2, E2E_JOBS). For each scenario one line
#     NAME: PASS | NAME: FAIL (reason) | NAME: SKIP (reason)
# (on a failure followed by the tail of its console log), then the boot times, gpuvm apply's
# elapsed time in each boot and its share of the initramfs phase, and last
#     N passed, N failed[, N skipped]
# Exit status 0 when none failed. Logs: build/e2e/NAME.log (the whole console),
# build/e2e/NAME.out (what the scenario itself printed: image build, QEMU command lines).
# Debian's kernel is fetched into build/kernel first (scripts/fetch-kernel.sh).
set -u

here=$(cd "$(dirname "$0")" && pwd)
E2E_ROOT=$(cd "$here/../.." && pwd)
E2E_OUT=$E2E_ROOT/build/e2e
export E2E_ROOT E2E_OUT

# The cells of the matrix: "NAME CELL ARG…", comments and blank lines left out.
matrix() { sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$here/matrix"; }

scenarios() {
	{
		for f in "$here"/scenarios/*.sh; do [ -f "$f" ] && basename "$f" .sh; done
		matrix | awk '{ print $1 }'
	} | LC_ALL=C sort
}

# run_one NAME: run one scenario (run.sh calls itself so through xargs -P); prints its lines.
run_one() {
	# shellcheck source=tests/e2e/lib.sh disable=SC1091
	. "$here/lib.sh"
	name=$1 scen=$here/scenarios/$1.sh E2E_ARGS=''
	if [ ! -f "$scen" ]; then
		# shellcheck disable=SC2046 # a cell's words
		set -- $(matrix | awk -v n="$name" '$1 == n { $1 = ""; print }')
		if [ $# -gt 0 ]; then
			scen=$here/cells/$1.sh
			shift
			E2E_ARGS=$*
		fi
	fi
	export E2E_ARGS
	rm -f "$E2E_OUT/$name.result" "$E2E_OUT/$name.times" "$E2E_OUT/$name.apply" \
		"$E2E_OUT/$name".*log
	if [ ! -f "$scen" ]; then
		echo "FAIL (no such scenario: $scen)" >"$E2E_OUT/$name.result"
	else
		(
			E2E_NAME=$name && export E2E_NAME
			trap e2e_finish EXIT
			# shellcheck source=/dev/null
			. "$scen"
		) >"$E2E_OUT/$name.out" 2>&1 </dev/null
	fi
	verdict=$(cat "$E2E_OUT/$name.result" 2>/dev/null) || verdict="FAIL (no verdict)"
	msg="$name: $verdict"
	case $verdict in
	FAIL*)
		# shellcheck disable=SC2012 # names are ours, without newlines
		log=$(ls -t "$E2E_OUT/$name".log "$E2E_OUT/$name"-*.log 2>/dev/null | head -n 1)
		[ -n "$log" ] || log=$E2E_OUT/$name.out
		if [ -s "$log" ]; then
			msg="$msg
    --- last lines of $log ---
$(tail -n 25 "$log" | sed 's/^/    | /')"
		fi
		;;
	esac
	printf '%s\n' "$msg" # one write: the lines of parallel scenarios do not mix
}

if [ "${1-}" = --one ]; then
	run_one "$2"
	exit 0
fi

jobs=${E2E_JOBS:-2}
while getopts j:lh opt; do
	case $opt in
	j) jobs=$OPTARG ;;
	l) scenarios; exit 0 ;;
	h) sed -n '2,/^set -u/{/^set -u/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
# shellcheck disable=SC2046 # scenario names have no blanks
[ $# -gt 0 ] || set -- $(scenarios)

out=$E2E_OUT
mkdir -p "$out"
problem=''
for tool in qemu-system-x86_64 timeout mkfs.ext4 cpio zstd xz depmod modprobe awk jq; do
	command -v "$tool" >/dev/null || problem="$problem $tool"
done
[ -z "$problem" ] || problem="missing:$problem (scripts/install-packages.sh)"
[ -x /bin/busybox ] || problem="$problem; no /bin/busybox (busybox-static)"
if [ -z "$problem" ] && ! "$E2E_ROOT/scripts/fetch-kernel.sh" "$E2E_ROOT/build" >/dev/null; then
	problem="scripts/fetch-kernel.sh failed"
fi

t0=$(date +%s)
if [ -n "$problem" ]; then
	for name; do echo "FAIL ($problem)" >"$out/$name.result"; echo "$name: FAIL ($problem)"; done
else
	printf '%s\n' "$@" | xargs -P "$jobs" -n 1 sh "$here/run.sh" --one
fi
t1=$(date +%s)

passed=0 failed=0 skipped=0 times=''
for name; do
	case $(cat "$out/$name.result" 2>/dev/null) in
	PASS) passed=$((passed + 1)) ;;
	SKIP*) skipped=$((skipped + 1)) ;;
	*) failed=$((failed + 1)) ;;
	esac
	[ ! -f "$out/$name.times" ] || times="$times $(tr ' \n' '= ' <"$out/$name.times")"
done
[ -z "$times" ] || echo "boot times (s):$times"
# gpuvm apply's elapsed_us (the state file) and its share of the initramfs phase (lib.sh)
for name; do cat "$out/$name.apply" 2>/dev/null; done | awk '
	{ s = s sprintf(" %s=%.1f", $1, $2 / 1000)
	  if ($3 != "-" && $3 > 0) s = s sprintf(" (%.0f%% of %.0f)", 100 * $2 / $3, $3 / 1000) }
	END { if (s != "") print "gpuvm apply, ms (share of the initramfs phase, ms):" s }'
# A boot whose console showed a state file must have given its time: the line above cannot
# go missing unnoticed (it once did, when e2e_boot was split).
for name; do
	if [ "$(cat "$out/$name.result" 2>/dev/null)" = PASS ] && [ ! -s "$out/$name.apply" ] &&
		grep -qs '^@state .*"elapsed_us"' "$out/$name".log "$out/$name"-*.log; then
		echo "$name: FAIL (its console shows a state file, but no apply time was recorded)"
		failed=$((failed + 1))
	fi
done
echo "wall time: $((t1 - t0)) s for $# scenarios, $jobs at a time"
summary="$passed passed, $failed failed"
[ "$skipped" -eq 0 ] || summary="$summary, $skipped skipped"
echo "$summary"
[ "$failed" -eq 0 ]
