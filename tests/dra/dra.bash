# shellcheck shell=bash
# shellcheck disable=SC2154 # $code and $output: standin.bash's call and bats' run set them
# gpuvm-dra for a bats file: the kubelet stand-in's stubs (once a file), the plugin on a
# fixture tree ($ROOT), the API stand-in's claims. tests/dra/README.md says what is what.
#   setup_file: dra_gen           (grpc_tools: the stubs of dra/proto into $BATS_FILE_TMPDIR/gen)
#   a test:     dra_start [OPTION...], kubelet CMD ARGS..., dra_stop
#   claims:     claim NAME UID [ALLOCATION_RESULTS_JSON [ANNOTATIONS_JSON]]

DRA=${GPUVM_DRA:-$TOP/build/gpuvm-dra}
DRIVER=vfio.gpuvm.dev

dra_gen() {
	mkdir -p "$BATS_FILE_TMPDIR/gen"
	/usr/bin/python3 -m grpc_tools.protoc -I"$TOP/dra/proto" --python_out="$BATS_FILE_TMPDIR/gen" \
		--grpc_python_out="$BATS_FILE_TMPDIR/gen" "$TOP/dra/proto/dra.proto" \
		"$TOP/dra/proto/pluginregistration.proto"
}

# dra_vars: where a test's plugin keeps its sockets and files (short paths: a unix socket's
# path is at most 107 bytes).
dra_vars() {
	D=$BATS_TEST_TMPDIR
	REG=$D/reg.sock
	SOCK=$D/dra.sock
	CDI=$D/cdi
	STATE=$D/state
	PLOG=$D/plugin.log
}

# dra_rbac [SED_SCRIPT]: the stand-in's RBAC becomes the shipped rules and the plugin's
# (dra/deploy/component/rbac.yaml, through SED_SCRIPT, which must change it), and its ServiceAccount's
# token dra-token is known.
dra_rbac() {
	sed "${1-}" "$TOP/dra/deploy/component/rbac.yaml" >"$API/rbac.dra-only.yaml"
	[ -z "${1-}" ] || ! cmp -s "$TOP/dra/deploy/component/rbac.yaml" "$API/rbac.dra-only.yaml" ||
		fail "dra_rbac $1: nothing changed"
	{ cat "$API/rbac.shipped.yaml"; echo ---; cat "$API/rbac.dra-only.yaml"; } >"$API/rbac.dra.yaml"
	ln -sfn "$API/rbac.dra.yaml" "$API/rbac.yaml"
	grep -q '^dra-token ' "$API/tokens" ||
		echo "dra-token system:serviceaccount:gpuvm-system:gpuvm-dra" >>"$API/tokens"
}

# dra_start [OPTION...]: the plugin on $ROOT for node gpu-node-1, the API stand-in's server,
# its ServiceAccount's token (dra_rbac); waits for its two sockets. DRA_TRACE=FILE: under
# strace -f, its openat calls into FILE ($SPID strace, $DPID the plugin).
dra_start() {
	local wrap=
	# LeakSanitizer cannot run under ptrace: a traced sanitizer build leaves leaks to the
	# suite's untraced runs
	[ -z "${DRA_TRACE-}" ] ||
		wrap="env ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 strace -f -qq -e trace=openat,openat2 -o $DRA_TRACE"
	printf 'dra-token\n' >"$D/token"
	# shellcheck disable=SC2086 # $wrap is words
	GPUVM_API_SERVER=$SERVER GPUVM_API_TOKEN_FILE=$D/token GPUVM_API_CA_FILE=$API/tls/ca.crt \
		GPUVM_API_TIMEOUT=10 $wrap "$DRA" --node gpu-node-1 --root "$ROOT" --registration-socket "$REG" \
		--plugin-socket "$SOCK" --cdi-dir "$CDI" --state-dir "$STATE" "$@" >>"$PLOG" 2>&1 3>&- &
	DPID=$!
	SPID=
	for _ in $(seq 1 100); do
		if [ -S "$REG" ] && [ -S "$SOCK" ]; then
			[ -z "$wrap" ] || { SPID=$DPID; DPID=$(pgrep -P "$SPID"); }
			return 0
		fi
		kill -0 "$DPID" 2>/dev/null || break
		sleep 0.05
	done
	cat "$PLOG" >&2
	fail "gpuvm-dra did not start"
}

# dra_stop: SIGTERM, as the kubelet's pod ends; a sanitizer's report in the log (GPUVM_DRA an
# ASan+UBSan build) fails the test.
dra_stop() {
	[ -z "${DPID-}" ] || { kill "$DPID" 2>/dev/null || true; wait "$DPID" 2>/dev/null || true; }
	DPID=
	# strace ends with the plugin, its trace whole
	[ -z "${SPID-}" ] || wait "$SPID" 2>/dev/null || true
	SPID=
	! grep -q -e 'Sanitizer' -e 'runtime error' "$PLOG" 2>/dev/null || fail "a sanitizer's report in $PLOG"
}

# kubelet CMD SOCKET ARGS...: tests/dra/kubelet.py (register, prepare, unprepare, raw, garbage).
kubelet() {
	/usr/bin/python3 "$TOP/tests/dra/kubelet.py" "$BATS_FILE_TMPDIR/gen" "$@"
}

# claim NAME UID [RESULTS [ANNOTATIONS]]: a ResourceClaim in namespace default, allocated with
# RESULTS (a JSON list of allocation results; "none": not allocated).
claim() {
	local dir=$STORE/apis/resource.k8s.io/v1/namespaces/default/resourceclaims res=${3:-[]}
	[ "$res" != none ] || res=null
	mkdir -p "$dir"
	jq -n --arg n "$1" --arg uid "$2" --argjson res "$res" --argjson ann "${4:-{\}}" '
		{apiVersion: "resource.k8s.io/v1", kind: "ResourceClaim",
		 metadata: {name: $n, namespace: "default", uid: $uid, generation: 1,
			    annotations: $ann},
		 spec: {devices: {requests: [{name: "gpu", exactly: {deviceClassName: "vfio.gpuvm.dev"}}]}}}
		| if $res == null then . else .status = {allocation: {devices: {results: $res}}} end' \
		>"$dir/$1.json"
}

# result DEVICE [REQUEST [DRIVER [POOL]]]: one allocation result, JSON.
result() {
	jq -nc --arg d "$1" --arg r "${2:-gpu}" --arg drv "${3:-$DRIVER}" --arg p "${4:-gpu-node-1}" \
		'{request: $r, driver: $drv, pool: $p, device: $d}'
}

# setdriver ADDR NAME: the function of $ROOT is bound to NAME ("" none), as its uevent and
# driver link say.
setdriver() {
	local d=$ROOT/sys/bus/pci/devices/$1
	sed -i '/^DRIVER=/d' "$d/uevent"
	rm -f "$d/driver"
	[ -n "$2" ] || return 0
	echo "DRIVER=$2" >>"$d/uevent"
	mkdir -p "$ROOT/sys/bus/pci/drivers/$2"
	ln -s "../../../../bus/pci/drivers/$2" "$d/driver"
}

# pin ADDR [SELECTION [MODE]]: gpuvm's apply pinned the function of $ROOT: its record
# /run/gpuvm/pinned/ADDR, as src/boot/pinned.c writes it (selection default gpus, mode vm).
pin() {
	mkdir -p "$ROOT/run/gpuvm/pinned"
	printf 'mode=%s\nmode_source=config\nselection=%s\nselection_source=%s\ndriver=vfio-pci\n' \
		"${3:-vm}" "${2:-gpus}" "$([ "${2:-gpus}" = default ] && echo default || echo config)" \
		>"$ROOT/run/gpuvm/pinned/$1"
}

# vfio_nodes GROUP: the legacy vfio device nodes of $ROOT (plain files: nothing opens them).
vfio_nodes() {
	mkdir -p "$ROOT/dev/vfio"
	: >"$ROOT/dev/vfio/$1"
	: >"$ROOT/dev/vfio/vfio"
}

# node NAME: a Node in the API stand-in's store (the slices' owner).
node() {
	jq -n --arg n "$1" '{apiVersion: "v1", kind: "Node", metadata: {name: $n,
		uid: "0b7e4c1d-0000-4000-8000-00000000000a"}}' >"$STORE/api/v1/nodes/$1.json"
}

# slices: the API's ResourceSlices of the driver, as the admin lists them ($output).
slices() {
	call admin-token GET "/apis/resource.k8s.io/v1/resourceslices?fieldSelector=spec.driver%3D$DRIVER"
	[ "$code" = 200 ] || fail "list of resourceslices: $code $output"
}

# wait_for WHAT SECONDS COMMAND...: COMMAND succeeds within SECONDS (tenths of a second polled).
wait_for() {
	local what=$1 n=$(($2 * 10))
	shift 2
	while ! "$@" >/dev/null 2>&1; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || fail "no $what"
		sleep 0.1
	done
}
