#!/bin/sh
# The stages of `make test`, timed:
#   scripts/stagetime.sh --start                 begin a run (forget the last one's times)
#   scripts/stagetime.sh NAME CMD [ARG]          run CMD, record NAME's wall time and exit status
#   scripts/stagetime.sh --background NAME CMD   the same, in the background (its output in
#                                                build/stage-NAME.log); returns at once
#   scripts/stagetime.sh --wait NAME             wait for a background stage to end; say how
#                                                it ended (its exit status does not fail this)
#   scripts/stagetime.sh --report                the table: each stage, and the run's wall time
# The times go to build/stages.tsv ("NAME SECONDS STATUS [bg]"); the exit status is CMD's. A
# failed stage prints the table too, so a red run still says where its time went. A
# background stage overlaps the others: the total is the wall time since --start, not a sum.
set -u
log=${STAGES_LOG:-build/stages.tsv}
dir=$(dirname "$log")

report() {
	[ -f "$log" ] || return 0
	now=$(date +%s)
	start=$(cat "$dir/stages.start" 2>/dev/null) || start=''
	awk -v wall="${start:+$((now - start))}" '
		{ printf "stage %-12s %5d s%s%s\n", $1, $2, ($4 == "bg" ? " (in the background)" : ""),
		    ($3 == 0 ? "" : "  (exit " $3 ")"); if ($4 != "bg") t += $2 }
		END { if (wall == "") wall = t
		      printf "stage %-12s %5d s (%d min), wall time since the start\n", "total", wall,
		          int((wall + 30) / 60) }' "$log"
}

# timed NAME TAG CMD...: run CMD, append its line to the log, return its status.
timed() {
	t_name=$1 t_tag=$2
	shift 2
	t0=$(date +%s)
	"$@"
	t_rc=$?
	mkdir -p "$dir"
	echo "$t_name $(($(date +%s) - t0)) $t_rc${t_tag:+ $t_tag}" >>"$log"
	return "$t_rc"
}

case ${1-} in
--start)
	mkdir -p "$dir"
	: >"$log"
	rm -f "$dir"/stage-*.rc
	date +%s >"$dir/stages.start"
	;;
--report)
	report
	;;
--background)
	[ $# -ge 3 ] || { echo "usage: $0 --background NAME CMD [ARG...]" >&2; exit 2; }
	name=$2
	shift 2
	mkdir -p "$dir"
	rm -f "$dir/stage-$name.rc"
	(
		timed "$name" bg "$@" >"$dir/stage-$name.log" 2>&1
		echo "$?" >"$dir/stage-$name.rc"
	) </dev/null >/dev/null 2>&1 &
	echo "stage $name: in the background ($dir/stage-$name.log)"
	;;
--wait)
	[ $# -eq 2 ] || { echo "usage: $0 --wait NAME" >&2; exit 2; }
	name=$2
	[ -f "$dir/stage-$name.log" ] || { echo "stage $name: never started" >&2; exit 0; }
	while [ ! -f "$dir/stage-$name.rc" ]; do sleep 2; done
	rc=$(cat "$dir/stage-$name.rc")
	if [ "$rc" = 0 ]; then
		echo "stage $name: done"
	else
		echo "stage $name: exit $rc ($dir/stage-$name.log):"
		grep -i 'failed' "$dir/stage-$name.log" | sed 's/^/  /'
	fi
	;;
'' | -*)
	echo "usage: $0 --start | --report | --background NAME CMD... | --wait NAME | NAME CMD [ARG...]" >&2
	exit 2
	;;
*)
	name=$1
	shift
	timed "$name" '' "$@"
	rc=$?
	[ "$rc" -eq 0 ] || report
	exit "$rc"
	;;
esac
