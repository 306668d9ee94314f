#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/dra.sh [REPORT]: what gpuvm-dra (dra/, doc/dra.md) costs for a claim and at rest.
# `make bench` runs it after bench/run.sh and puts its section at the end of
# bench/RESULTS.md (REPORT: another file; the section "## gpuvm-dra" is replaced there, every
# other line kept).
#
# The real plugin (build/gpuvm-dra, or GPUVM_DRA) on the vfio-stale fixture tree (one RTX 3090
# on vfio-pci) after the real gpuvm (build/gpuvm, or GPUVM) applied vm-passthrough to it, so the
# GPU carries the pinned record the plugin offers only with; its claims in the API stand-in (tests/api/kube-api-standin, over HTTPS, the
# plugin's ServiceAccount token and dra/deploy/component/rbac.yaml), called as the kubelet
# calls it by tests/dra/kubelet.py (Debian's grpcio over the unix sockets):
#   syscalls   strace -f -c on the plugin: a run that only starts and stops, one that also
#              prepares N claims (one call each), one that prepares them twice, one that
#              prepares and unprepares them; the differences over N are a prepare's, a repeated
#              prepare's and an unprepare's calls, each with a new connection of the client
#              (grpcio here opens one a call; the kubelet keeps one): an upper bound
#   writes     the files a prepare writes: renames (each file is written beside its name and
#              renamed), and fsyncs
#   time       a prepare call's wall time, client start included (python3 and grpcio: an empty
#              call, GetInfo, is given beside it), against the kubelet's 45 s DRA call timeout
#              (PluginClientTimeout, pkg/kubelet/cm/dra/plugin)
#   at rest    the API requests of the plugin over DRA_BENCH_REST seconds (default 10) after
#              its slices are published, checking its GPUs every second (--slice-interval 1)
# DRA_BENCH_CLAIMS: N (default 20).
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
REPORT=${1:-$top/bench/RESULTS.md}
DRA=${GPUVM_DRA:-$top/build/gpuvm-dra}
GPUVM=${GPUVM:-$top/build/gpuvm}
N=${DRA_BENCH_CLAIMS:-20}
REST=${DRA_BENCH_REST:-10}
NODE=gpu-node-1
GPU=0000:01:00.0
DEV=gpu-0000-01-00-0

die() {
	echo "bench/dra: $*" >&2
	exit 1
}
[ -x "$DRA" ] || die "no $DRA (make build/gpuvm-dra)"
[ -x "$GPUVM" ] || die "no $GPUVM (make)"
command -v strace >/dev/null || die "no strace (scripts/install-packages.sh)"
/usr/bin/python3 -c 'import grpc, grpc_tools' 2>/dev/null || die "no python3-grpcio, python3-grpc-tools"

W=$(mktemp -d "${TMPDIR:-/tmp}/dra-bench.XXXXXX")
API=$W/api
SPID='' WPID='' PPID_=''
# The stand-in and a plugin still running (a step that died) go with the script: left, they
# would hold its caller's output open.
cleanup() {
	[ -z "$SPID" ] || kill "$SPID" 2>/dev/null || true
	[ -z "$PPID_" ] || kill "$PPID_" 2>/dev/null || true
	[ -z "$WPID" ] || { kill "$WPID" 2>/dev/null || true; wait "$WPID" 2>/dev/null || true; }
	rm -rf "$W"
}
trap cleanup EXIT INT TERM

# The stubs, the fixture, the stand-in with the plugin's account, a Node and N claims.
mkdir -p "$W/gen" "$API/store/api/v1/nodes"
/usr/bin/python3 -m grpc_tools.protoc -I"$top/dra/proto" --python_out="$W/gen" \
	--grpc_python_out="$W/gen" "$top/dra/proto/dra.proto" "$top/dra/proto/pluginregistration.proto"
"$top/tests/fixture/mkfixture" "$W/root" vfio-stale >/dev/null
"$GPUVM" --root "$W/root" --cmdline gpuvm.mode=vm-passthrough apply >/dev/null 2>&1 ||
	die "gpuvm apply on the fixture failed"
[ -f "$W/root/run/gpuvm/pinned/$GPU" ] || die "gpuvm apply left no /run/gpuvm/pinned/$GPU"
group=$(basename "$(readlink "$W/root/sys/bus/pci/devices/$GPU/iommu_group")")
mkdir -p "$W/root/dev/vfio"
: >"$W/root/dev/vfio/$group"
: >"$W/root/dev/vfio/vfio"
"$top/tests/api/mkcert.sh" "$API/tls" >/dev/null
cp "$top/dra/deploy/component/rbac.yaml" "$API/rbac.yaml"
echo "dra-token system:serviceaccount:gpuvm-system:gpuvm-dra" >"$API/tokens"
echo dra-token >"$W/token"
jq -n --arg n "$NODE" '{apiVersion: "v1", kind: "Node", metadata: {name: $n,
	uid: "0b7e4c1d-0000-4000-8000-00000000000a"}}' >"$API/store/api/v1/nodes/$NODE.json"
cdir=$API/store/apis/resource.k8s.io/v1/namespaces/default/resourceclaims
mkdir -p "$cdir"
i=1
while [ "$i" -le "$N" ]; do
	jq -n --arg n "c$i" --arg uid "$(printf '6f1c2a9e-5b7d-4c1e-9a8f-%012d' "$i")" --arg d "$DEV" \
		--arg p "$NODE" '{apiVersion: "resource.k8s.io/v1", kind: "ResourceClaim",
		metadata: {name: $n, namespace: "default", uid: $uid, generation: 1},
		spec: {devices: {requests: [{name: "gpu", exactly: {deviceClassName: "vfio.gpuvm.dev"}}]}},
		status: {allocation: {devices: {results: [{request: "gpu", driver: "vfio.gpuvm.dev",
			pool: $p, device: $d}]}}}}' >"$cdir/c$i.json"
	i=$((i + 1))
done
/usr/bin/python3 "$top/tests/api/kube-api-standin" --dir "$API/store" --rbac "$API/rbac.yaml" \
	--tokens "$API/tokens" --cert "$API/tls/server.crt" --key "$API/tls/server.key" \
	--log "$API/requests.jsonl" --port-file "$API/port" >"$API/server.log" 2>&1 &
SPID=$!
i=0
until [ -s "$API/port" ]; do
	i=$((i + 1))
	[ "$i" -lt 200 ] || die "the API stand-in did not start: $(cat "$API/server.log")"
	sleep 0.05
done
SERVER=https://127.0.0.1:$(cat "$API/port")

kubelet() {
	/usr/bin/python3 "$top/tests/dra/kubelet.py" "$W/gen" "$@" >"$W/kubelet.out" ||
		die "kubelet.py $*: $(cat "$W/kubelet.out")"
	! grep -q '"error"' "$W/kubelet.out" || die "kubelet.py $*: $(cat "$W/kubelet.out")"
}
claim() {
	printf 'default/%s/c%s\n' "$(printf '6f1c2a9e-5b7d-4c1e-9a8f-%012d' "$1")" "$1"
}

# start TAG [WRAPPER...]: the plugin in a folder of its own (fresh state), through WRAPPER;
# PPID_ the plugin's pid (the wrapper's child where there is one).
start() {
	D=$W/$1
	shift
	rm -rf "$D"
	mkdir -p "$D"
	# shellcheck disable=SC2086 # $SLICES: the options, split on purpose
	GPUVM_API_SERVER=$SERVER GPUVM_API_TOKEN_FILE=$W/token GPUVM_API_CA_FILE=$API/tls/ca.crt \
		"$@" "$DRA" --node "$NODE" --root "$W/root" --registration-socket "$D/reg.sock" \
		--plugin-socket "$D/dra.sock" --cdi-dir "$D/cdi" --state-dir "$D/state" \
		$SLICES >"$D/log" 2>&1 &
	WPID=$!
	i=0
	until [ -S "$D/reg.sock" ] && [ -S "$D/dra.sock" ]; do
		i=$((i + 1))
		[ "$i" -lt 400 ] || die "gpuvm-dra did not start: $(cat "$D/log")"
		sleep 0.05
	done
	PPID_=$(pgrep -P "$WPID" -x gpuvm-dra || echo "$WPID")
}
stop() {
	kill "$PPID_"
	wait "$WPID" || true
	WPID='' PPID_=''
}
# calls FILE NAME...: the calls of those syscalls in strace -c's table FILE, added.
calls() {
	f=$1
	shift
	for s in "$@"; do echo "$s"; done | awk 'NR == FNR { want[$1] = 1; next }
		$NF in want && $4 ~ /^[0-9]+$/ { n += $4 } END { print n + 0 }' - "$f"
}
total() {
	awk '$NF == "total" { print $4 }' "$1"
}

# The four strace runs (slices never: only the calls).
SLICES="--slices never"
for run in idle prepare prepare2 unprepare; do
	start "$run" strace -f -c -o "$W/$run.strace"
	if [ "$run" != idle ]; then
		i=1
		while [ "$i" -le "$N" ]; do kubelet prepare "$D/dra.sock" "$(claim "$i")"; i=$((i + 1)); done
	fi
	if [ "$run" = prepare2 ]; then
		i=1
		while [ "$i" -le "$N" ]; do kubelet prepare "$D/dra.sock" "$(claim "$i")"; i=$((i + 1)); done
	fi
	if [ "$run" = unprepare ]; then
		i=1
		while [ "$i" -le "$N" ]; do kubelet unprepare "$D/dra.sock" "$(claim "$i")"; i=$((i + 1)); done
	fi
	stop
	specs=$(find "$D/cdi" -name '*.json' 2>/dev/null | wc -l)
	case $run in prepare*) want=$N ;; *) want=0 ;; esac
	[ "$specs" = "$want" ] || die "$run: $specs CDI specs, not $want"
done
per() { echo "$1 $2 $3" | awk '{ printf "%.1f", ($1 - $2) / $3 }'; }
t_idle=$(total "$W/idle.strace")
t_prep=$(total "$W/prepare.strace")
t_prep2=$(total "$W/prepare2.strace")
t_unprep=$(total "$W/unprepare.strace")
r_prep=$(calls "$W/prepare.strace" rename renameat renameat2)
r_prep2=$(calls "$W/prepare2.strace" rename renameat renameat2)
f_prep=$(calls "$W/prepare.strace" fsync fdatasync)
sys_prep=$(per "$t_prep" "$t_idle" "$N")
sys_prep2=$(per "$t_prep2" "$t_prep" "$N")
sys_unprep=$(per "$t_unprep" "$t_prep" "$N")
wr_prep=$(per "$r_prep" 0 "$N")
wr_prep2=$(per "$r_prep2" "$r_prep" "$N")
fs_prep=$(per "$f_prep" 0 "$N")
top_calls=$(sort -k4 -n -r "$W/prepare.strace" | awk '$4 ~ /^[0-9]+$/ && $NF != "total" { printf "%s%s %s", s, $NF, $4; s = ", " } NR == 8 { exit }')

# Time, without strace: N prepares, each timed, and N empty calls (GetInfo) for the client's
# own start.
ms() { date +%s%N; }
start timed
: >"$W/t.prepare"
: >"$W/t.getinfo"
i=1
while [ "$i" -le "$N" ]; do
	a=$(ms)
	kubelet prepare "$D/dra.sock" "$(claim "$i")"
	b=$(ms)
	kubelet register "$D/reg.sock"
	c=$(ms)
	echo $(((b - a) / 1000)) >>"$W/t.prepare"
	echo $(((c - b) / 1000)) >>"$W/t.getinfo"
	i=$((i + 1))
done
stop
stat_ms() { sort -n "$1" | awk '{ v[NR] = $1 } END { printf "%.1f %.1f", v[int((NR + 1) / 2)] / 1000, v[NR] / 1000 }'; }
read -r p_med p_max <<EOF
$(stat_ms "$W/t.prepare")
EOF
read -r g_med g_max <<EOF
$(stat_ms "$W/t.getinfo")
EOF

# At rest: the slices published, then REST seconds of GPU checks every second.
SLICES="--slices auto --slice-interval 1"
start rest
i=0
until grep -q '"POST".*resourceslices\|resourceslices.*"POST"' "$API/requests.jsonl"; do
	i=$((i + 1))
	[ "$i" -lt 200 ] || die "no slice published: $(cat "$D/log")"
	sleep 0.05
done
sleep 2
before=$(wc -l <"$API/requests.jsonl")
sleep "$REST"
after=$(wc -l <"$API/requests.jsonl")
stop
rest_req=$((after - before))

section=$W/section.md
cat >"$section" <<EOF
## gpuvm-dra: prepare, unprepare, at rest

\`bench/dra.sh\` (\`make bench\`): the real plugin on the vfio-stale fixture (one GPU on vfio-pci,
its pinned record written by the real gpuvm applying vm-passthrough, which every prepare reads),
its $N claims in the API stand-in over HTTPS, called by the kubelet stand-in (grpcio, one
connection a call: the kubelet keeps one, so the calls are an upper bound). Syscalls from
\`strace -f -c\` on the plugin, as differences between runs over the $N claims.

| | a claim |
|---|---|
| NodePrepareResources, first | $sys_prep syscalls; $wr_prep files written (renamed into place), $fs_prep fsyncs |
| the same claim prepared again | $sys_prep2 syscalls; $wr_prep2 files written (idempotent: nothing rewritten) |
| NodeUnprepareResources | $sys_unprep syscalls |
| a prepare call's wall time, client start included | median $p_med ms, max $p_max ms (an empty call, GetInfo: $g_med ms, $g_max ms), against the kubelet's 45 s DRA call timeout |
| API requests at rest, $REST s after the slices were published, the GPUs read every second | $rest_req |

A first prepare's commonest calls (over the $N claims, start and stop included): $top_calls.
EOF

# The report: this section replaced (or added at the end), every other line kept.
mkdir -p "$(dirname "$REPORT")"
[ -f "$REPORT" ] || : >"$REPORT"
awk '/^## gpuvm-dra: / { skip = 1; next } /^## / { skip = 0 } !skip' "$REPORT" >"$W/report"
# no blank line left at the end before the section's own
sed -e :a -e '/^\n*$/{$d;N;ba' -e '}' "$W/report" >"$W/report.trim"
{
	cat "$W/report.trim"
	[ ! -s "$W/report.trim" ] || echo
	cat "$section"
} >"$REPORT.new"
mv "$REPORT.new" "$REPORT"
cat "$section"
[ "$rest_req" = 0 ] || die "$rest_req API requests at rest (want none)"
