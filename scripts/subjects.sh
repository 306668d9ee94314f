#!/bin/sh
# subjects.sh — the commit subjects since the rule began (make lint): "area: what changed",
# at most 72 characters, the why in the body. Older commits are history and stay as they are.
#
#   scripts/subjects.sh [REV]      check REV's history (default HEAD); exit 1 on any bad one
set -u
# The last commit before the rule; its descendants are checked.
SINCE=6f5367bc38c132ef8245c7d3bea10c3554a9695e
rev=${1:-HEAD}
cd "$(dirname "$0")/.." || exit 1
git rev-parse --git-dir >/dev/null 2>&1 || { echo "subjects: not a git tree: nothing to check"; exit 0; }
since=$SINCE
git rev-parse -q --verify "$SINCE^{commit}" >/dev/null 2>&1 || {
	# a shallow clone that does not reach it: the commits it has are all newer
	echo "subjects: $SINCE is not in this clone; checking the commits it has"
	since=''
}
git log --format='%h %s' "${since:+$since..}$rev" | awk '
	{ h = $1; s = substr($0, length(h) + 2) }
	length(s) > 72 { printf "%s: subject of %d characters (at most 72): %s\n", h, length(s), s; bad++; next }
	s !~ /^[A-Za-z0-9][-A-Za-z0-9_.\/, ]*: [^ ]/ { printf "%s: not \"area: what changed\": %s\n", h, s; bad++ }
	END { exit bad > 0 }'
