#!/bin/sh
# tests/dumps/add.sh — a host's dump as a test (see README.md here).
#
#   tests/dumps/add.sh NAME DUMP.tar [PLANS]   add tests/dumps/NAME: the dump (gzipped) and
#                                              the plans expected in each mode
#   tests/dumps/add.sh --update NAME           the expected plans again, from build/gpuvm's
#                                              replay (an intended change of the plan)
#
# PLANS is a folder with plan-container.json, plan-vm-passthrough.json and
# plan-vm-vgpu.json: what the host's own gpuvm printed (`gpuvm plan --mode MODE --json`;
# scripts/realhost.sh's OUT, an e2e cell's build/e2e/CELL.dump have them). Without PLANS, and
# with --update, they are build/gpuvm's replay of the dump: read them before committing, a
# replay proves nothing about the host. tests/bats/dump.bats replays every NAME.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
gpuvm=${GPUVM:-$here/../../build/gpuvm}
die() {
	echo "add.sh: $*" >&2
	exit 1
}

# replay DIR: DIR/plan-MODE.json from the dump DIR/dump.tar.gz, by build/gpuvm.
replay() {
	t=$(mktemp -d)
	tar -xzf "$1/dump.tar.gz" -C "$t"
	for m in container vm-passthrough vm-vgpu; do
		{ "$gpuvm" --root "$t" plan --mode "$m" --json 2>/dev/null || true; } | jq -S . >"$1/plan-$m.json"
	done
	rm -rf "$t"
}

[ -x "$gpuvm" ] || die "no $gpuvm (make, or GPUVM=FILE)"
if [ "${1-}" = --update ]; then
	if [ $# -ne 2 ] || [ ! -f "$here/$2/dump.tar.gz" ]; then
		die "usage: add.sh --update NAME (an existing one)"
	fi
	replay "$here/$2"
	echo "tests/dumps/$2: the plans are build/gpuvm's replay now (git diff shows what changed)"
	exit 0
fi
if [ $# -lt 2 ] || [ $# -gt 3 ]; then
	die "usage: add.sh NAME DUMP.tar [PLANS] | add.sh --update NAME"
fi
case $1 in */* | .* | '') die "NAME: a plain name" ;; esac
[ ! -e "$here/$1" ] || die "tests/dumps/$1 is there already"
tar -tf "$2" gpuvm-dump.txt >/dev/null 2>&1 || die "$2: not a gpuvm dump (no gpuvm-dump.txt)"
mkdir "$here/$1"
gzip -9n <"$2" >"$here/$1/dump.tar.gz"
if [ $# -eq 3 ]; then
	for m in container vm-passthrough vm-vgpu; do
		[ -f "$3/plan-$m.json" ] || die "$3: no plan-$m.json"
		jq -S . "$3/plan-$m.json" >"$here/$1/plan-$m.json"
	done
else
	replay "$here/$1"
	echo "tests/dumps/$1: the plans are build/gpuvm's replay: read them before committing"
fi
echo "tests/dumps/$1: $(wc -c <"$here/$1/dump.tar.gz") bytes; bats tests/bats/dump.bats replays it"
