#!/bin/sh
# door.sh — every file beneath the root is opened by src/rootio.c (make lint). The unit
# tests link tests/unit/fake-kernel.c in rootio.c's place, so a read that goes around it
# is one the fake kernel cannot serve and test-faults cannot fail. Outside rootio.c and
# writefile.c (which walks the directories rootio hands it), a call that opens, lists,
# reads a link of or looks up a file by its name is an offence unless a comment on its
# line or one of the two lines before says "door:" and why it is no file beneath the root
# (a path of the caller's, /dev/kmsg, a disk gpuvm mounted itself) or how it came through
# rootio (a directory from root_open_dir). fstat(2) of a descriptor names no file.
#
#   scripts/door.sh [SRCDIR]      each offence as FILE:LINE: CALL(); exit 1 if any
set -u
src=${1:-$(cd "$(dirname "$0")/.." && pwd)/src}
bad=0
# Every C file under src/, in any folder (a file is known by its name there).
for f in $(find "$src" -name '*.[ch]' | LC_ALL=C sort); do
	rel=${f#"$src"/}
	case ${rel##*/} in
	rootio.c | writefile.c) continue ;;
	esac
	awk -v f="$rel" '
		function code(l) {
			gsub(/\\./, "", l)
			gsub(/"[^"]*"/, "\"S\"", l)
			gsub(/\/\*.*\*\//, "", l)
			sub(/\/\/.*/, "", l)
			return l
		}
		{ cur = code($0) }
		cur !~ /^[ \t]*(#|\*|\/\*)/ &&
		match(cur, /(^|[^A-Za-z0-9_.>])(open|openat|fopen|freopen|opendir|fdopendir|readlink|readlinkat|stat|lstat|fstatat|statx|faccessat|access|mkdirat|unlinkat|renameat|root_fd)[ \t]*\(|SYS_openat2/) {
			if ($0 !~ /door:/ && p1 !~ /door:/ && p2 !~ /door:/) {
				call = substr(cur, RSTART, RLENGTH)
				sub(/^[^A-Za-z_]/, "", call)
				sub(/[ \t]*\($/, "", call)
				printf "%s:%d: %s(): a file opened beneath the root outside rootio.c (or say door: and why not)\n", f, NR, call
				bad = 1
			}
		}
		{ p2 = p1; p1 = $0 }
		END { exit bad }' "$f" || bad=1
done
exit $bad
