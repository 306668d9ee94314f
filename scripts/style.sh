#!/bin/sh
# What .editorconfig says, checked (make lint): every text file git tracks ends in a newline
# and has no trailing blanks; a C line is indented with tabs (a space may only continue a
# comment's " *"). Data the tests feed in (the fuzz corpora) and recorded output are left out.
# Exit 1 with each offence named FILE:LINE.
set -eu
cd "$(dirname "$0")/.."
bad=0
files=$(git ls-files | grep -v -e '^tests/fuzz/corpus/' -e '^bench/RESULTS.md$')
for f in $files; do
	if [ ! -f "$f" ] || [ ! -s "$f" ]; then continue; fi
	case $(file -b --mime-encoding "$f") in binary) continue ;; esac
	if [ -n "$(tail -c 1 "$f")" ]; then
		echo "$f: no newline at the end" >&2
		bad=1
	fi
	if grep -qE '[[:blank:]]+$' "$f"; then
		grep -nE '[[:blank:]]+$' "$f" | cut -d: -f1 | sed "s|^|$f:|; s|$|: trailing blanks|" >&2
		bad=1
	fi
	case $f in
	*.c | *.h)
		if grep -qE '^ +([^ *]|\*[^ /])' "$f"; then
			grep -nE '^ +([^ *]|\*[^ /])' "$f" | cut -d: -f1 |
				sed "s|^|$f:|; s|$|: indented with spaces, not tabs|" >&2
			bad=1
		fi
		;;
	esac
done
[ "$bad" = 0 ] && echo "style: $(echo "$files" | wc -l) files as .editorconfig says"
exit "$bad"
