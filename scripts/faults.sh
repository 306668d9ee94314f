#!/bin/sh
# The fault table of gpuvm(8) from doc/faults.tsv (see there).
#   scripts/faults.sh --man     print the page's table (.TS … .TE)
#   scripts/faults.sh --update  write it into doc/gpuvm.8 (after an edit of doc/faults.tsv)
#   scripts/faults.sh --check   the page carries exactly that table, and every test the table
#                               names is there (its TEXT occurs in its FILE); exit 1 if not
# FAULTS_TSV and FAULTS_PAGE name other files (the tests of this script).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
tsv=${FAULTS_TSV:-$top/doc/faults.tsv}
page=${FAULTS_PAGE:-$top/doc/gpuvm.8}

table() {
	printf '.TS\nl l.\nFault\tOutcome\n'
	grep -v '^#' "$tsv" | cut -f1,2
	printf '.TE\n'
}

case ${1-} in
--man)
	table
	;;
--update)
	table >"$page.table"
	awk -v tf="$page.table" '
		/^\.SH FAULTS$/ { inf = 1 }
		/^\.SH / && !/^\.SH FAULTS$/ { inf = 0 }
		inf && /^\.TS$/ { while ((getline l < tf) > 0) print l; skip = 1; next }
		skip && /^\.TE$/ { skip = 0; next }
		!skip { print }' "$page" >"$page.new"
	mv "$page.new" "$page"
	rm -f "$page.table"
	;;
--check)
	bad=0
	sed -n '/^\.SH FAULTS$/,/^\.SH /{/^\.TS$/,/^\.TE$/p}' "$page" >"${TMPDIR:-/tmp}/faults.$$"
	if ! table | diff -u "${TMPDIR:-/tmp}/faults.$$" - >&2; then
		echo "faults: doc/gpuvm.8's FAULTS table differs from doc/faults.tsv (scripts/faults.sh --man)" >&2
		bad=1
	fi
	rm -f "${TMPDIR:-/tmp}/faults.$$"
	n=0
	grep -v '^#' "$tsv" | cut -f3 | tr '|' '\n' | sed 's/^ *//; s/ *$//' | {
		while IFS= read -r ref; do
			file=${ref%%: *} text=${ref#*: }
			n=$((n + 1))
			if [ ! -f "$top/$file" ]; then
				echo "faults: $file: no such test file" >&2
				exit 1
			fi
			if ! grep -qF -- "$text" "$top/$file"; then
				echo "faults: $file does not hold '$text'" >&2
				exit 1
			fi
		done
		echo "faults: $n tests named by doc/faults.tsv are there"
	} || bad=1
	exit "$bad"
	;;
*)
	echo "usage: scripts/faults.sh --man | --update | --check" >&2
	exit 2
	;;
esac
