#!/bin/bash
# tests/dra/replay.sh DUMP_DIR ADDRESS: gpuvm-dra on a QEMU guest's dump, on the build machine
# (an e2e cell's: lib.sh's e2e_dump_replay unpacks it into DUMP_DIR, and e2e_dra_replay calls
# this). The root is the dump (DUMP_DIR/root) with what the guest sent beside it: its pinned
# records (DUMP_DIR/pinned/ as /run/gpuvm/pinned) and its /dev/vfio nodes (DUMP_DIR/dev-vfio.txt,
# made empty files: the plugin asks only whether they exist). Then as dra.bats runs the plugin:
# the API stand-in (tests/api) with a Node and a claim allocated for ADDRESS's device, the
# plugin on that root, and the kubelet stand-in's NodePrepareResources (tests/dra/kubelet.py).
# Left in DUMP_DIR/dra/ for the cell to check: prepare.json (the answer), cdi.json (the claim's
# spec), metadata.json (its device metadata), slices.json (the API's ResourceSlices),
# metrics.prom, plugin.log. Exit 0 when prepare answered without an error, else 1 and why.
set -eu
TOP=$(cd "$(dirname "$0")/../.." && pwd)
dump=$1 addr=$2
out=$dump/dra
rm -rf "$out"
mkdir -p "$out"
# short paths: a unix socket's is at most 107 bytes
BATS_FILE_TMPDIR=$(mktemp -d "${TMPDIR:-/tmp}/gpuvm-dra-replay.XXXXXX")
BATS_TEST_TMPDIR=$BATS_FILE_TMPDIR/t
mkdir -p "$BATS_TEST_TMPDIR"
fail() {
	echo "dra replay: $*" >&2
	exit 1
}
# shellcheck source=tests/api/standin.bash
. "$TOP/tests/api/standin.bash"
# shellcheck source=tests/dra/dra.bash
. "$TOP/tests/dra/dra.bash"
[ -x "$DRA" ] || fail "no $DRA: make build/gpuvm-dra"
done_() {
	dra_stop || true
	standin_stop 2>/dev/null || true
	[ ! -e "${PLOG-}" ] || cp "$PLOG" "$out/plugin.log"
	rm -rf "$BATS_FILE_TMPDIR"
}
trap done_ EXIT

ROOT=$BATS_FILE_TMPDIR/root
cp -a "$dump/root" "$ROOT"
[ -n "$(ls "$dump/pinned" 2>/dev/null)" ] || fail "the guest sent no pinned record"
mkdir -p "$ROOT/run/gpuvm/pinned"
cp "$dump/pinned/"* "$ROOT/run/gpuvm/pinned/"
while read -r n; do
	case $n in vfio/*) ;; *) fail "dev-vfio.txt: $n is not under /dev/vfio" ;; esac
	mkdir -p "$ROOT/dev/${n%/*}"
	: >"$ROOT/dev/$n"
done <"$dump/dev-vfio.txt"

dra_gen
# shellcheck disable=SC2119 # neither takes the script's arguments
standin_start
standin_vars
# shellcheck disable=SC2119
dra_rbac
dra_vars
node gpu-node-1
dev=gpu-$(printf '%s' "$addr" | tr ':.' '--')
uid=6f1c2a9e-5b7d-4c1e-9a8f-0000000000e2
claim e2e "$uid" "[$(result "$dev")]"
dra_start --slices auto --slice-interval 1 --metrics-dir "$D/metrics"
wait_for "ResourceSlice" 10 grep -q 'slices: pool gpu-node-1, generation 1' "$PLOG"
apicurl admin-token "$SERVER/apis/resource.k8s.io/v1/resourceslices" | sed '$d' >"$out/slices.json"
cp "$D/metrics/gpuvm-dra.prom" "$out/metrics.prom"
kubelet prepare "$SOCK" "default/$uid/e2e" >"$out/prepare.json" || fail "prepare: $(cat "$out/prepare.json")"
err=$(jq -r --arg u "$uid" '.claims[$u].error // ""' "$out/prepare.json")
[ -z "$err" ] || fail "prepare: $err"
cp "$CDI/$DRIVER-$uid.json" "$out/cdi.json"
cp "$STATE/claims/$uid/gpu/$DRIVER-metadata.json" "$out/metadata.json"
