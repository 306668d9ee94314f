#!/bin/sh
# The stages of `make test`, timed:
#   scripts/stagetime.sh --start         begin a run (forget the last one's times)
#   scripts/stagetime.sh NAME CMD [ARG]  run CMD, record NAME's wall time and exit status
#   scripts/stagetime.sh --report        the table, each stage and the whole, in seconds
# The times go to build/stages.tsv ("NAME SECONDS STATUS"); the exit status is CMD's. A
# failed stage prints the table too, so a red run still says where its time went.
set -u
log=${STAGES_LOG:-build/stages.tsv}

report() {
	[ -f "$log" ] || return 0
	awk '{ printf "stage %-12s %5d s%s\n", $1, $2, ($3 == 0 ? "" : "  (exit " $3 ")"); t += $2 }
	     END { printf "stage %-12s %5d s (%d min)\n", "total", t, int((t + 30) / 60) }' "$log"
}

case ${1-} in
--start)
	mkdir -p "$(dirname "$log")"
	: >"$log"
	;;
--report)
	report
	;;
'' | -*)
	echo "usage: $0 --start | --report | NAME CMD [ARG...]" >&2
	exit 2
	;;
*)
	name=$1
	shift
	t0=$(date +%s)
	"$@"
	rc=$?
	mkdir -p "$(dirname "$log")"
	echo "$name $(($(date +%s) - t0)) $rc" >>"$log"
	[ "$rc" -eq 0 ] || report
	exit "$rc"
	;;
esac
