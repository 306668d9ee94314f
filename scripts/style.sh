#!/bin/sh
# What .editorconfig says, checked (make lint): every text file git tracks ends in a newline
# and has no trailing blanks; a C line is indented with tabs (a space may only continue a
# comment's " *"). Data the tests feed in (the fuzz corpora) and recorded output are left out.
# And what doc/HACKING.md asks of gpuvm's own C (src/), which clang-format cannot say: a
# message string is never split across lines (so that grep finds it; a line of text that
# ends in \n may be followed by the next), a string literal is not glued to a macro across a
# line break (a #define holds the whole message), ?: is not chained (a small function or an
# if says it), a file is opened with openat(2), never open(2) (musl follows an open()
# with O_CLOEXEC by a fcntl F_SETFD, a syscall more, for kernels older than 2.6.23), and
# where a setting came from is never decided by its text: no string compared with a
# literal holds a setting's source (settings.h's enum set_from says it; settings_source()
# words it for display only). The ?: chain and the source are read in a statement, however
# many lines it spans. Exit 1 with each offence named FILE:LINE.
#
#   scripts/style.sh [FILE...]     every file git tracks, or those named
set -eu
cd "$(dirname "$0")/.."
bad=0

# c_rules FILE: HACKING's five, each offence FILE:LINE: what; status 1 if any. Literals and
# comments are blanked first (a '?' or a quote inside them is no code; a literal is "S").
c_rules() {
	awk -v f="$1" '
		function code(l) {
			gsub(/\\./, "", l)
			gsub(/"[^"]*"/, "\"S\"", l)
			gsub(/\047[^\047]*\047/, "C", l)
			gsub(/\/\*.*\*\//, "", l)
			sub(/\/\*.*/, "", l)
			sub(/\/\/.*/, "", l)
			return l
		}
		# Whether a comparison call of st has among its arguments a literal and a setting'"'"'s
		# source (settings_source(), a where[] or source[] member).
		function source_compared(st,   i, c, depth, start, args) {
			while (match(st, /(streq|strcmp|strncmp|strcasecmp|startswith|memcmp)[ \t]*\(/)) {
				start = RSTART + RLENGTH
				depth = 1
				for (i = start; i <= length(st) && depth > 0; i++) {
					c = substr(st, i, 1)
					if (c == "(") depth++
					else if (c == ")") depth--
				}
				args = substr(st, start, i - start)
				if (args ~ /"S"/ && args ~ /settings_source[ \t]*\(|(->|\.)(source|where)[ \t]*\[/)
					return 1
				st = substr(st, start)
			}
			return 0
		}
		# One statement (to a ; { or }), begun at line at.
		function statement(st, at) {
			if (st ~ /\?[^?:;,()]*:[ \t]*\(?[^?:;,()]*\?/ || st ~ /\?[ \t]*\([^?:;,]*\?/) {
				printf "%s:%d: a chain of ?: (a small function or an if)\n", f, at
				bad = 1
			}
			if (source_compared(st)) {
				printf "%s:%d: a setting'"'"'s source compared as text (ask its enum set_from)\n", f, at
				bad = 1
			}
		}
		{ cur = code($0) }
		cur !~ /^[ \t]*(#|\*)/ {
			rest = cur
			while (match(rest, /[;{}]/)) {
				end = RSTART # statement() matches too
				if (st == "") at = NR
				statement(st " " substr(rest, 1, end), at)
				st = ""
				rest = substr(rest, end + 1)
			}
			if (rest ~ /[^ \t]/) {
				if (st == "") at = NR
				st = st " " rest
			}
			if (prev ~ /"[ \t]*$/ && prev_raw !~ /\\n"[ \t]*$/ && cur ~ /^[ \t]*"/) {
				printf "%s:%d: a string split across lines (one literal, so that grep finds it)\n", f, NR
				bad = 1
			}
			if ((prev ~ /"[ \t]*$/ && cur ~ /^[ \t]*[A-Z_][A-Z0-9_]*[ \t]*("|$|[,)])/) ||
			    (prev ~ /(^|[^A-Za-z0-9_])[A-Z_][A-Z0-9_]*[ \t]*$/ && prev !~ /^[ \t]*#/ && cur ~ /^[ \t]*"/)) {
				printf "%s:%d: a string glued to a macro across a line break (a #define holds the whole message)\n", f, NR
				bad = 1
			}
			if (cur ~ /(^|[^A-Za-z0-9_.>])open[ \t]*\(/) {
				printf "%s:%d: open(): openat(AT_FDCWD, ...) (musl follows an open with O_CLOEXEC by a fcntl)\n", f, NR
				bad = 1
			}
		}
		{ prev = cur; prev_raw = $0 }
		END { exit bad }' "$1"
}

if [ $# -gt 0 ]; then
	files=$*
else
	files=$(git ls-files | grep -v -e '^tests/fuzz/corpus/' -e '^bench/RESULTS.md$')
fi
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
	case $f in
	src/*.c | src/*.h | */src/*.c | */src/*.h)
		c_rules "$f" >&2 || bad=1
		;;
	esac
done
[ "$bad" = 0 ] && echo "style: $(echo "$files" | wc -l) files as .editorconfig says"
exit "$bad"
