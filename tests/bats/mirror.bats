#!/usr/bin/env bats
# shellcheck disable=SC2154 # $stderr and $output are set by bats' run
# The label mirror: the node's label into the host config, the API's refusals, the GPU
# Operator's warnings, the loop, the names, the desired mode, the KubeVirt entries and the
# fleet patch, Events, liveness and version drift. The loop guard (a reboot asked for once,
# whatever boots follow) is mirror-guard.bats. Fixture and helpers: mirror.bash.

load helpers
load ../api/standin
load mirror

@test "label unchanged: the file is not rewritten, no annotate call" {
	node container
	before=$(ident)
	mirror --once
	assert_success
	assert_output --partial "host config already has mode container; reboot: none: this boot runs container already"
	[ "$(ident)" = "$before" ]
	# the node is read, nothing else (container needs no ClusterPolicy): as the mirror's
	# ServiceAccount, the node found
	[ "$(requests | jq -r '"\(.method) \(.path)?\(.query) \(.code) \(.user)"')" = "GET /api/v1/nodes/$NODE? 200 $SA_USER" ]
	[ "$(events)" = "" ]
	# a VM mode's warnings need it: read once (no such CRD: 404)
	node vm-passthrough
	: >"$API/requests.jsonl"
	mirror --once
	assert_success
	[ "$(requests '.method == "GET"' | jq -r '"\(.path) \(.code)"')" = "$(printf '%s\n' \
		"/api/v1/nodes/$NODE 200" "/apis/nvidia.com/v1/clusterpolicies 404")" ]
}

@test "label unchanged and the boot already in that mode: a stale reboot mark is cleared" {
	node container gpuvm.dev/reboot-required=true
	before=$(ident)
	mirror --once
	assert_success
	assert_output --partial "removed annotation gpuvm.dev/reboot-required"
	[ "$(annotation gpuvm.dev/reboot-required)" = absent ]
	[ "$(ident)" = "$before" ]
}

@test "label back to the running mode: config rewritten, reboot mark cleared" {
	"$GPUVM" --root "$ROOT" config set mode=vm-passthrough >/dev/null
	node container gpuvm.dev/reboot-required=true
	mirror --once
	assert_success
	assert_output --partial "host config mode vm-passthrough -> container; reboot: none: this boot runs container already"
	grep -qx "mode=container" "$CONF"
	[ "$(annotation gpuvm.dev/reboot-required)" = absent ]
}

@test "no state file (gpuvm did not run at boot): a change is marked for reboot, no change is not" {
	rm -f "$ROOT/run/gpuvm/state.json"
	node container
	mirror --once
	assert_success
	assert_output --partial "reboot: unknown: no /run/gpuvm/state.json"
	[ "$(annotate_calls)" = 0 ]
	node vm-passthrough
	mirror --once
	assert_success
	[ "$(annotation gpuvm.dev/reboot-required)" = true ]
}

@test "label absent: the host config is left alone, no file is made, no annotate call" {
	"$GPUVM" --root "$ROOT" config set mode=vm-passthrough >/dev/null
	node --absent gpuvm.dev/reboot-required=true
	before=$(ident)
	mirror --once
	assert_success
	assert_output --partial "label nvidia.com/gpu.workload.config absent: host config left alone (mode vm-passthrough)"
	[ "$(ident)" = "$before" ]
	[ "$(annotate_calls)" = 0 ]
	[ "$(annotation gpuvm.dev/reboot-required)" = true ]
	rm -rf "$ROOT/etc/gpuvm"
	mirror --once
	assert_success
	assert_output --partial "host config left alone (mode unset)"
	[ ! -e "$ROOT/etc/gpuvm" ]
}

@test "label absent with GPUVM_LABEL_ABSENT=container: the GPU Operator's default is written" {
	"$GPUVM" --root "$ROOT" config set mode=vm-passthrough >/dev/null
	node --absent
	GPUVM_LABEL_ABSENT=container mirror --once
	assert_success
	assert_output --partial "label nvidia.com/gpu.workload.config absent, GPUVM_LABEL_ABSENT=container: host config mode vm-passthrough -> container"
	grep -qx "mode=container" "$CONF"
}

@test "label invalid: logged with its value, the config untouched, no annotate call, exit 1" {
	node vm-passthrough gpuvm.dev/reboot-required=true
	for v in vm-passthru Container "" "vm-vgpu;reboot"; do
		node "$v"
		before=$(ident)
		mirror --once
		assert_failure 1
		assert_output --partial "error: label nvidia.com/gpu.workload.config='$v' is not container, vm-passthrough or vm-vgpu: host config left alone (mode container)"
		[ "$(ident)" = "$before" ]
	done
	[ "$(annotate_calls)" = 0 ]
}

@test "the API refusing or failing, or serving something else: logged, nothing changed, exit 1" {
	node vm-passthrough
	before=$(ident)
	# a token the API server does not know: 401 and its Status
	echo not-a-known-token >"$API/token"
	mirror --once
	assert_failure 1
	assert_output --partial "error: cannot read node $NODE: GET /api/v1/nodes/$NODE: 401 Unauthorized: Unauthorized; host config left alone"
	# no token file, or none to read
	GPUVM_API_TOKEN_FILE=$API/nowhere mirror --once
	assert_failure 1
	assert_output --partial "error: cannot read node $NODE: GET /api/v1/nodes/$NODE: cannot read the token file $API/nowhere"
	printf 'mirror-token\n' >"$API/token"
	# a CA that did not sign the server's certificate: TLS is checked
	mkdir -p "$K/otherca"
	"$TOP/tests/api/mkcert.sh" "$K/otherca"
	GPUVM_API_CA_FILE=$K/otherca/ca.crt mirror --once
	assert_failure 1
	assert_output --partial "error: cannot read node $NODE: GET /api/v1/nodes/$NODE: curl: (60) SSL certificate problem"
	# no server there
	GPUVM_API_SERVER=https://127.0.0.1:1 mirror --once
	assert_failure 1
	assert_output --partial "error: cannot read node $NODE: GET /api/v1/nodes/$NODE: curl: (7) Failed to connect to 127.0.0.1 port 1"
	# no such node: 404 and its Status
	rm "$STORE/api/v1/nodes/$NODE.json"
	mirror --once
	assert_failure 1
	assert_output --partial "error: cannot read node $NODE: GET /api/v1/nodes/$NODE: 404 NotFound: nodes \"$NODE\" not found; host config left alone"
	# a Status where the Node should be, and something that is not JSON
	echo '{"kind": "Status", "metadata": {"name": "gpu-node-1"}}' >"$STORE/api/v1/nodes/$NODE.json"
	mirror --once
	assert_failure 1
	assert_output --partial "error: the API gave no Node object named $NODE"
	fault '{"path": "/api/v1/nodes/gpu-node-1", "text": "not json at all"}'
	mirror --once
	assert_failure 1
	assert_output --partial "error: the API gave no Node object named $NODE"
	assert_output --partial "host config left alone"
	# a proxy's 502 page: its first line, masked
	fault '{"path": "/api/v1/nodes/gpu-node-1", "code": 502, "text": "<html>\u001b[31mBad Gateway\n</html>"}'
	mirror --once
	assert_failure 1
	assert_output --partial "error: cannot read node $NODE: GET /api/v1/nodes/$NODE: 502 <html>?[31mBad Gateway; host config left alone"
	[ "$(ident)" = "$before" ]
	[ "$(annotate_calls)" = 0 ]
	# the token never in curl's arguments: on its standard input (a config line)
	run ! grep -q mirror-token "$MIRROR"
}

# RBAC as shipped, less what the mirror needs: the API refuses (403, the RBAC authorizer's
# message), and the mirror changes nothing on the node.
@test "RBAC without patch on nodes: the refusal logged with the API's message, the node unchanged, no sentinel, exit 1" {
	mkdir -p "$ROOT/run/gpuvm-reboot"
	rbac_sed 's/verbs: \["get", "list", "watch", "patch"\]/verbs: ["get", "list", "watch"]/'
	node vm-passthrough
	before=$(cat "$STORE/api/v1/nodes/$NODE.json")
	mirror --once
	assert_failure 1
	assert_output --partial "error: cannot annotate gpuvm.dev/requested=vm-passthrough@11111111-1111-1111-1111-111111111111: PATCH /api/v1/nodes/$NODE: 403 Forbidden: nodes \"$NODE\" is forbidden: User \"$SA_USER\" cannot patch resource \"nodes\" in API group \"\" at the cluster scope"
	[ "$(cat "$STORE/api/v1/nodes/$NODE.json")" = "$before" ]
	# the request first: refused, so no reboot mark and no sentinel
	[ "$(annotate_calls)" = 1 ]
	[ ! -e "$ROOT/$SENT" ]
	# the host config is written all the same (the next boot brings the mode if anyone reboots)
	grep -qx "mode=vm-passthrough" "$CONF"
	[ "$(requests '.code == 403' | jq -r '"\(.method) \(.verb)"')" = "PATCH patch" ]
}

@test "RBAC without get on nodes: nothing read, nothing changed, exit 1" {
	rbac_sed 's/verbs: \["get", "list", "watch", "patch"\]/verbs: ["list", "watch", "patch"]/'
	node vm-passthrough
	before=$(ident)
	mirror --once
	assert_failure 1
	assert_output --partial "error: cannot read node $NODE: GET /api/v1/nodes/$NODE: 403 Forbidden: nodes \"$NODE\" is forbidden: User \"$SA_USER\" cannot get resource \"nodes\" in API group \"\" at the cluster scope; host config left alone"
	[ "$(ident)" = "$before" ]
	[ "$(requests | wc -l)" = 1 ]
}

# The mirror patches with a JSON merge patch (RFC 7386), which the API server takes for every
# type. A copy of the mirror that sends another content type meets the stand-in's 415, as the
# API server answers: a patch type it would not take cannot pass these tests.
@test "a patch type the API would not take (415) is an error; merge patch is what the mirror sends" {
	node vm-passthrough
	mirror --once
	assert_success
	[ "$(patches | cut -d' ' -f1 | sort -u)" = application/merge-patch+json ]
	for t in application/json application/apply-patch+yaml; do
		sed "s|application/merge-patch+json|$t|" "$MIRROR" >"$K/mirror"
		chmod +x "$K/mirror"
		! cmp -s "$MIRROR" "$K/mirror"
		node vm-vgpu
		before=$(cat "$STORE/api/v1/nodes/$NODE.json")
		MIRROR=$K/mirror mirror --once
		assert_failure 1
		assert_output --partial "error: cannot annotate gpuvm.dev/requested=vm-vgpu@11111111-1111-1111-1111-111111111111: PATCH /api/v1/nodes/$NODE: 415 UnsupportedMediaType: the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json"
		[ "$(cat "$STORE/api/v1/nodes/$NODE.json")" = "$before" ]
	done
}

# kured (kubereboot/kured 1.23): reboots a node while its --reboot-sentinel file exists (its
# DaemonSet mounts the host's /var/run at /sentinel) or its --reboot-sentinel-command exits 0.
# The mirror's sentinel lives on the host's /run: a boot removes it; the mirror removes it when
# the reboot is no longer needed, and only the file it wrote.
@test "kured: the sentinel is written with the reboot mark, kept while it is due, removed with it" {
	mkdir -p "$ROOT/run/gpuvm-reboot"
	node vm-passthrough
	mirror --once
	assert_success
	assert_output --partial "wrote the reboot sentinel $ROOT/$SENT (kured)"
	[ "$(annotation gpuvm.dev/reboot-required)" = true ]
	grep -qx "gpuvm-label-mirror: node $NODE: the next boot puts the GPUs in vm-passthrough (label nvidia.com/gpu.workload.config=vm-passthrough)" "$ROOT/$SENT"
	# removed by hand in the same boot: the request stands, the sentinel is not written again
	rm "$ROOT/$SENT"
	mirror --once
	assert_success
	assert_output --partial "its sentinel is gone (removed by hand?): not written again"
	[ ! -e "$ROOT/$SENT" ]
	[ "$(annotation gpuvm.dev/reboot-required)" = true ]
	# ... until the request is removed: asked for again
	admin_annotate gpuvm.dev/requested-
	mirror --once
	assert_success
	[ -e "$ROOT/$SENT" ]
	# the label back to the mode the boot runs: the mark and the sentinel go
	node container gpuvm.dev/reboot-required=true
	mirror --once
	assert_success
	assert_output --partial "removed the reboot sentinel $ROOT/$SENT"
	[ ! -e "$ROOT/$SENT" ]
	[ "$(annotation gpuvm.dev/reboot-required)" = absent ]
}

@test "kured: a sentinel the mirror did not write is left alone; none disables it; no directory is a note" {
	mkdir -p "$ROOT/run/gpuvm-reboot"
	echo "*** System restart required ***" >"$ROOT/$SENT"
	node container
	mirror --once
	assert_success
	assert_output --partial "is not the mirror's: left as it is"
	[ -e "$ROOT/$SENT" ]
	rm "$ROOT/$SENT"
	node vm-passthrough
	GPUVM_REBOOT_SENTINEL=none mirror --once
	assert_success
	[ ! -e "$ROOT/$SENT" ]
	[ "$(annotation gpuvm.dev/reboot-required)" = true ]
	rmdir "$ROOT/run/gpuvm-reboot"
	admin_annotate gpuvm.dev/requested-
	mirror --once
	assert_success
	assert_output --partial "note: no directory $ROOT/run/gpuvm-reboot"
}

# The GPU Operator (gpu-operator v26.7.0, k8s-driver-manager v0.12.0): its vfio-manager runs
# where the node has nvidia.com/gpu.deploy.vfio-manager=true and the ClusterPolicy enables
# sandboxWorkloads and vfioManager; its init container and preStop hook unbind every GPU.
W=gpuvm.dev/warning

@test "operator: vfio-manager on this node while gpuvm binds: warned with the fix and annotated; cleared once the node label is false" {
	node vm-passthrough
	label nvidia.com/gpu.deploy.vfio-manager=true
	cpol sandboxWorkloads.enabled=true
	mirror --once
	assert_success
	assert_output --partial "warning: the GPU Operator's vfio-manager runs on this node (ClusterPolicy cluster-policy enables it; label nvidia.com/gpu.deploy.vfio-manager=true)"
	assert_output --partial "set vfioManager.enabled=false in the ClusterPolicy, or label the node nvidia.com/gpu.deploy.vfio-manager=false"
	assert_output --partial "annotated $W=vfio-manager"
	[ "$(annotation "$W")" = vfio-manager ]
	grep -qx "mode=vm-passthrough" "$CONF"
	[ "$(requests '.path == "/apis/nvidia.com/v1/clusterpolicies"' | jq -r '"\(.method) \(.verb) \(.code)"')" = "GET list 200" ]
	[ "$(events | grep '^Warning ')" = "Warning VfioManager: gpuvm.dev/warning=vfio-manager: the GPU Operator's vfio-manager runs on this node (ClusterPolicy cluster-policy enables it; label nvidia.com/gpu.deploy.vfio-manager=true): its init container unbinds every GPU and clears driver_override, and its preStop hook does it again whenever the pod is deleted, undoing what gpuvm bound at boot; set vfioManager.enabled=false in the ClusterPolicy, or label the node nvidia.com/gpu.deploy.vfio-manager=false" ]
	# a second pass finds the mark in place: no annotate call, no Event
	: >"$API/requests.jsonl"
	mirror --once
	assert_success
	[ "$(annotate_calls)" = 0 ]
	[ "$(events)" = "" ]
	# the operator honours a node label it did not set: no vfio-manager, no warning
	label nvidia.com/gpu.deploy.vfio-manager=false
	mirror --once
	assert_success
	assert_output --partial "removed annotation $W"
	refute_output --partial "vfio-manager runs"
	[ "$(annotation "$W")" = absent ]
	[ "$(events)" = "Normal WarningCleared: gpuvm.dev/warning: vfio-manager no longer holds" ]
}

@test "operator: vfio-manager label not set yet, but the operator will set it: warned; vfioManager.enabled=false or mode container clears it" {
	node vm-passthrough
	cpol sandboxWorkloads.enabled=true
	mirror --once
	assert_success
	assert_output --partial "warning: the GPU Operator's vfio-manager runs on this node (ClusterPolicy cluster-policy enables it; the operator labels this vm-passthrough node nvidia.com/gpu.deploy.vfio-manager=true)"
	[ "$(annotation "$W")" = vfio-manager ]
	cpol sandboxWorkloads.enabled=true vfioManager.enabled=false
	mirror --once
	assert_success
	assert_output --partial "removed annotation $W"
	[ "$(annotation "$W")" = absent ]
	# again, then the node goes to container: gpuvm binds nothing, nothing to undo
	cpol sandboxWorkloads.enabled=true
	mirror --once
	[ "$(annotation "$W")" = vfio-manager ]
	node container "$W=vfio-manager"
	mirror --once
	assert_success
	[ "$(annotation "$W")" = absent ]
	# nvidia.com/gpu.deploy.operands=false: the operator deploys nothing on the node
	node vm-passthrough
	label nvidia.com/gpu.deploy.operands=false
	mirror --once
	assert_success
	[ "$(annotation "$W")" = absent ]
}

@test "operator: ClusterPolicy forbidden (RBAC without its optional role, 403): not an error; the vfio-manager judged by the node label alone" {
	node vm-passthrough
	label nvidia.com/gpu.deploy.vfio-manager=true
	cpol sandboxWorkloads.enabled=true
	rbac_without 'gpuvm-label-mirror-clusterpolicy'
	mirror --once
	[ "$(requests '.path == "/apis/nvidia.com/v1/clusterpolicies"' | jq -r .code)" = 403 ]
	assert_success
	assert_output --partial "note: the ClusterPolicy cannot be read (Forbidden): sandboxWorkloads unknown; the vfio-manager judged by the node label alone"
	assert_output --partial "warning: the GPU Operator's vfio-manager runs on this node (label nvidia.com/gpu.deploy.vfio-manager=true)"
	refute_output --partial error:
	[ "$(annotation "$W")" = vfio-manager ]
	label nvidia.com/gpu.deploy.vfio-manager-
	mirror --once
	assert_success
	assert_output --partial "removed annotation $W"
	[ "$(annotation "$W")" = absent ]
}

@test "operator: a VM mode while sandboxWorkloads is off: warned and annotated; cleared when it is on, or the label is container" {
	for m in vm-passthrough vm-vgpu; do
		node "$m"
		cpol
		mirror --once
		assert_success
		assert_output --partial "warning: host config mode $m, but ClusterPolicy cluster-policy has sandboxWorkloads.enabled=false: the operator treats every node as container"
		assert_output --partial "set sandboxWorkloads.enabled=true in the ClusterPolicy"
		[ "$(annotation "$W")" = sandbox-workloads-disabled ]
		refute_output --partial "vfio-manager runs"
		refute_output --partial "vgpu-manager-disabled" # sandboxWorkloads off says it all
	done
	cpol sandboxWorkloads.enabled=true vgpuManager.enabled=true
	mirror --once
	assert_success
	assert_output --partial "removed annotation $W"
	[ "$(annotation "$W")" = absent ]
	cpol
	mirror --once
	[ "$(annotation "$W")" = sandbox-workloads-disabled ]
	node container "$W=sandbox-workloads-disabled"
	mirror --once
	assert_success
	[ "$(annotation "$W")" = absent ]
	# no ClusterPolicy (no operator): nothing to warn about, a stale mark goes
	rm -r "$CPD"
	node vm-passthrough "$W=sandbox-workloads-disabled"
	mirror --once
	assert_success
	[ "$(annotation "$W")" = absent ]
}

@test "operator: vm-vgpu while the ClusterPolicy has vgpuManager off (the chart's default): vgpu-manager-disabled" {
	node vm-vgpu
	cpol sandboxWorkloads.enabled=true
	mirror --once
	assert_success
	assert_output --partial "warning: host config mode vm-vgpu, but no vGPU Manager of the GPU Operator runs on this node (ClusterPolicy cluster-policy has vgpuManager.enabled=false, the chart's default): nothing loads nvidia_vgpu_vfio"
	assert_output --partial "set vgpuManager.enabled=true with your private vgpuManager.repository, .version and .imagePullSecrets"
	[ "$(annotation "$W")" = vgpu-manager-disabled ]
	# enabled: cleared
	cpol sandboxWorkloads.enabled=true vgpuManager.enabled=true
	mirror --once
	assert_success
	assert_output --partial "removed annotation $W"
	[ "$(annotation "$W")" = absent ]
	# the node opts out of the operator's DaemonSet: warned again, with that reason
	label nvidia.com/gpu.deploy.vgpu-manager=false
	mirror --once
	assert_output --partial "runs on this node (label nvidia.com/gpu.deploy.vgpu-manager=false)"
	[ "$(annotation "$W")" = vgpu-manager-disabled ]
	label nvidia.com/gpu.deploy.vgpu-manager=true
	mirror --once
	[ "$(annotation "$W")" = absent ]
	# no operand at all on the node
	label nvidia.com/gpu.deploy.operands=false
	mirror --once
	assert_output --partial "(label nvidia.com/gpu.deploy.operands=false: the operator deploys nothing on this node)"
	[ "$(annotation "$W")" = vgpu-manager-disabled ]
	# vm-passthrough needs no vGPU Manager
	node vm-passthrough
	label nvidia.com/gpu.deploy.vfio-manager=false
	mirror --once
	assert_success
	refute_output --partial "vgpu-manager-disabled"
	[ "$(annotation "$W")" = absent ]
}

@test "operator: vm-vgpu, ClusterPolicy forbidden: the node label alone tells vgpu-manager-disabled; no operator: nothing" {
	node vm-vgpu
	cpol sandboxWorkloads.enabled=true
	rbac_without 'gpuvm-label-mirror-clusterpolicy'
	mirror --once
	assert_success
	[ "$(annotation "$W")" = absent ]
	label nvidia.com/gpu.deploy.vgpu-manager=false
	mirror --once
	assert_success
	assert_output --partial "runs on this node (label nvidia.com/gpu.deploy.vgpu-manager=false)"
	[ "$(annotation "$W")" = vgpu-manager-disabled ]
	# no ClusterPolicy resource at all: the host's own vGPU Manager, maybe; the mark goes
	ln -sfn "$API/rbac.shipped.yaml" "$API/rbac.yaml"
	rm -r "$CPD"
	mirror --once
	assert_success
	assert_output --partial "removed annotation $W"
	[ "$(annotation "$W")" = absent ]
}

@test "operator: a ClusterPolicy read that fails otherwise (a timeout, a 500) is a warning; the warning mark is left as it is" {
	node vm-passthrough "$W=vfio-manager"
	cpol
	# an answer later than GPUVM_API_TIMEOUT: curl gives up (the API's calls are bounded)
	fault '{"path": "/apis/nvidia.com/v1/clusterpolicies", "delay": 3}'
	GPUVM_API_TIMEOUT=1 mirror --once
	assert_success
	assert_output --partial "warning: cannot read the ClusterPolicy: GET /apis/nvidia.com/v1/clusterpolicies: curl: (28) Operation timed out after"
	fault '{"path": "/apis/nvidia.com/v1/clusterpolicies", "code": 500, "reason": "InternalError", "message": "etcdserver: request timed out"}'
	mirror --once
	assert_success
	assert_output --partial "warning: cannot read the ClusterPolicy: GET /apis/nvidia.com/v1/clusterpolicies: 500 InternalError: etcdserver: request timed out; gpuvm.dev/warning left as it is"
	[ "$(patches | grep -c "$W" || true)" = 0 ]
	[ "$(annotation "$W")" = vfio-manager ]
	grep -qx "mode=vm-passthrough" "$CONF"
}

@test "operator: an absent label follows the ClusterPolicy's sandboxWorkloads.defaultWorkload, and says so" {
	node --absent
	cpol sandboxWorkloads.enabled=true 'sandboxWorkloads.defaultWorkload="vm-passthrough"'
	mirror --once
	assert_success
	assert_output --partial "label nvidia.com/gpu.workload.config absent, ClusterPolicy cluster-policy sandboxWorkloads.defaultWorkload=vm-passthrough: host config mode container -> vm-passthrough"
	grep -qx "mode=vm-passthrough" "$CONF"
	# ... and the vfio-manager the operator then runs there is warned about
	[ "$(annotation "$W")" = vfio-manager ]
	# sandboxWorkloads off: the operator treats every node as container, whatever defaultWorkload says
	cpol 'sandboxWorkloads.defaultWorkload="vm-passthrough"'
	mirror --once
	assert_success
	assert_output --partial "label nvidia.com/gpu.workload.config absent, ClusterPolicy cluster-policy sandboxWorkloads.enabled=false (every node container): host config mode vm-passthrough -> container"
	grep -qx "mode=container" "$CONF"
	[ "$(annotation "$W")" = absent ]
}

@test "operator: an absent label keeps the host config when the ClusterPolicy cannot be read, is not there, or GPUVM_LABEL_ABSENT=keep" {
	"$GPUVM" --root "$ROOT" config set mode=vm-passthrough >/dev/null
	node --absent
	cpol sandboxWorkloads.enabled=true
	rbac_without 'gpuvm-label-mirror-clusterpolicy'
	before=$(ident)
	mirror --once
	assert_success
	assert_output --partial "label nvidia.com/gpu.workload.config absent: host config left alone (mode vm-passthrough); the ClusterPolicy cannot be read, so GPUVM_LABEL_ABSENT=auto keeps the config"
	ln -sfn "$API/rbac.shipped.yaml" "$API/rbac.yaml"
	rm -r "$CPD"
	mirror --once
	assert_success
	assert_output --partial "label nvidia.com/gpu.workload.config absent: host config left alone (mode vm-passthrough); no ClusterPolicy to follow, so GPUVM_LABEL_ABSENT=auto keeps the config"
	cpol sandboxWorkloads.enabled=true
	GPUVM_LABEL_ABSENT=keep mirror --once
	assert_success
	assert_output --partial "label nvidia.com/gpu.workload.config absent: host config left alone (mode vm-passthrough); GPUVM_LABEL_ABSENT=keep"
	[ "$(ident)" = "$before" ]
}

@test "operator: of several ClusterPolicies the oldest is the operator's, as it chooses" {
	node --absent
	mkdir -p "$CPD"
	# the API lists them by name: the oldest is last
	jq -n '{metadata: {name: "b-newer", creationTimestamp: "2026-06-01T00:00:00Z"},
		spec: {sandboxWorkloads: {enabled: true, defaultWorkload: "vm-vgpu"}}}' >"$CPD/b-newer.json"
	jq -n '{metadata: {name: "z-oldest", creationTimestamp: "2026-01-01T00:00:00Z"},
		spec: {sandboxWorkloads: {enabled: true, defaultWorkload: "vm-passthrough"}}}' >"$CPD/z-oldest.json"
	jq -n '{metadata: {name: "a-newest", creationTimestamp: "2026-07-01T00:00:00Z"},
		spec: {sandboxWorkloads: {enabled: true, defaultWorkload: "container"}}}' >"$CPD/a-newest.json"
	mirror --once
	assert_success
	assert_output --partial "ClusterPolicy z-oldest sandboxWorkloads.defaultWorkload=vm-passthrough"
	grep -qx "mode=vm-passthrough" "$CONF"
}

@test "the watch loop survives an invalid label, follows it once fixed, is quiet when nothing changes, reads a rotated token" {
	node bogus
	menv
	env "${MENV[@]}" GPUVM_HEARTBEAT="$K/heartbeat" GPUVM_WATCH_TIMEOUT=1 "$MIRROR" --interval 1 \
		2>"$BATS_TEST_TMPDIR/log" >/dev/null 3>&- &
	pid=$!
	# a failed pass is tried again after --interval, at the next renewal of the watch
	for _ in $(seq 1 100); do
		[ "$(grep -c "='bogus' is not" "$BATS_TEST_TMPDIR/log")" -ge 2 ] && break
		sleep 0.1
	done
	[ "$(grep -c "='bogus' is not" "$BATS_TEST_TMPDIR/log")" -ge 2 ]
	kill -0 "$pid"
	grep -qx "mode=container" "$CONF"
	node vm-vgpu
	for _ in $(seq 1 100); do
		grep -qx "mode=vm-vgpu" "$CONF" && break
		sleep 0.1
	done
	grep -qx "mode=vm-vgpu" "$CONF"
	# three more renewals that find nothing new run no pass and log nothing
	n=$(watch_calls)
	for _ in $(seq 1 100); do
		[ "$(watch_calls)" -ge $((n + 3)) ] && break
		sleep 0.1
	done
	[ "$(watch_calls)" -ge $((n + 3)) ]
	# a host file touched: the next renewal runs a pass (a VM mode's: it reads the
	# ClusterPolicy), whose lines are the last pass's, so nothing is logged
	logged_n=$(wc -l <"$BATS_TEST_TMPDIR/log")
	cps() { requests '.path == "/apis/nvidia.com/v1/clusterpolicies"' | wc -l; }
	n=$(cps)
	touch "$ROOT/run/gpuvm/state.json"
	for _ in $(seq 1 100); do
		[ "$(cps)" -gt "$n" ] && break
		sleep 0.1
	done
	[ "$(cps)" -gt "$n" ]
	# that pass is over (and logged) once a window after it has ended
	m=$(watch_calls)
	for _ in $(seq 1 100); do
		[ "$(watch_calls)" -ge $((m + 2)) ] && break
		sleep 0.1
	done
	[ "$(watch_calls)" -ge $((m + 2)) ]
	[ "$(wc -l <"$BATS_TEST_TMPDIR/log")" = "$logged_n" ]
	# the change once, then at most one "already" line (the pass over the node its own patches
	# left)
	[ "$(grep -c 'host config mode container -> vm-vgpu' "$BATS_TEST_TMPDIR/log")" = 1 ]
	[ "$(grep -c 'workload.config=vm-vgpu' "$BATS_TEST_TMPDIR/log")" -le 2 ]
	# the node read once (a list of it), never with a GET: the watch says the rest
	[ "$(get_node_calls)" = 0 ]
	[ "$(list_calls)" = 1 ]
	# the heartbeat: this step's time, and the window (1 to 1 s), one API timeout (30 s) and
	# 3 intervals and one API timeout (33 s) to the next
	[ "$(cut -d' ' -f2 "$K/heartbeat")" -ge 64 ]
	run env GPUVM_HEARTBEAT="$K/heartbeat" "$MIRROR" --alive
	assert_success
	# every read or write of nodes names this one: RBAC cannot narrow the list and the watch,
	# the mirror does
	[ "$(requests '(.path | startswith("/api/v1/nodes")) and .path != "/api/v1/nodes/'"$NODE"'"
		and (.query | startswith("fieldSelector=metadata.name%3D'"$NODE"'&") | not)' | wc -l)" = 0 ]
	[ "$(requests '.path | startswith("/api/v1/nodes")' | wc -l)" -ge 4 ]
	# the token rotates (a bound token's kubelet refresh): the next watch reads the new one
	printf '%s\n' "rotated-token $SA_USER" >"$API/tokens"
	echo rotated-token >"$API/token"
	: >"$API/requests.jsonl"
	for _ in $(seq 1 100); do
		[ "$(requests '.code == 200 and .verb == "watch"' | wc -l)" -ge 3 ] && break
		sleep 0.1
	done
	[ "$(requests '.code == 200 and .verb == "watch"' | wc -l)" -ge 3 ]
	[ "$(requests '.code == 401' | wc -l)" -le 1 ] # at most the window that was under way
}

@test "TERM while the loop waits on its watch ends it at once, with status 0" {
	node container
	menv
	env "${MENV[@]}" GPUVM_HEARTBEAT="$K/heartbeat" GPUVM_WATCH_TIMEOUT=300 "$MIRROR" \
		2>"$BATS_TEST_TMPDIR/log" >/dev/null 3>&- &
	pid=$!
	for _ in $(seq 1 100); do
		grep -q 'host config already has mode container' "$BATS_TEST_TMPDIR/log" && break
		sleep 0.1
	done
	grep -q 'host config already has mode container' "$BATS_TEST_TMPDIR/log"
	sleep 0.5
	kill -TERM "$pid"
	for _ in $(seq 1 50); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		echo "still running 5 s after TERM"
		false
	fi
	rc=0
	wait "$pid" || rc=$?
	pid=
	[ "$rc" = 0 ]
	[ "$(list_calls)" = 1 ]
	# the watch's stream was cut (the API saw the client go), not left to its timeout
	for _ in $(seq 1 20); do
		[ "$(requests '.verb == "watch"' | jq -r .end)" = client ] && break
		sleep 0.1
	done
	[ "$(requests '.verb == "watch"' | jq -r .end)" = client ]
	# nothing left running that the loop started (the watch's curl and jq)
	run pgrep -f "$SERVER/api/v1/nodes.fieldSelector=metadata.name%3D$NODE&watch=1"
	assert_failure
	# the loop is gone: so is its heartbeat, and --alive says so
	[ ! -e "$K/heartbeat" ]
	run env GPUVM_HEARTBEAT="$K/heartbeat" "$MIRROR" --alive
	assert_failure 1
	assert_output --partial "not alive: no heartbeat in $K/heartbeat"
}

@test "usage errors exit 2 before touching anything" {
	node vm-passthrough
	run env PATH="$BIN:$PATH" GPUVM_HOST="$ROOT" GPUVM="$GPUVM" "$MIRROR" --once
	assert_failure 2
	assert_output --partial "NODE_NAME is not set"
	GPUVM_DOMAIN=Gpuvm.Dev mirror --once
	assert_failure 2
	assert_output --partial "GPUVM_DOMAIN must be a DNS subdomain"
	GPUVM_DOMAIN=-gpuvm.dev mirror --once
	assert_failure 2
	GPUVM_DOMAIN="gpuvm.dev/x" mirror --once
	assert_failure 2
	GPUVM_SET_LABEL=sometimes mirror --once
	assert_failure 2
	GPUVM_LABEL_ABSENT=vm mirror --once
	assert_failure 2
	mirror --interval 0
	assert_failure 2
	mirror --frob
	assert_failure 2
	run env PATH="$BIN:$PATH" NODE_NAME="$NODE" GPUVM_HOST="$ROOT/nowhere" GPUVM_API_SERVER="$SERVER" "$MIRROR" --once
	assert_failure 2
	NODE=../../apis/x mirror --once
	assert_failure 2
	assert_output --partial "NODE_NAME must be a node's name (a DNS subdomain), got '../../apis/x'"
	GPUVM_API_TIMEOUT=0 mirror --once
	assert_failure 2
	GPUVM_POLICY_RECHECK=1h mirror --once
	assert_failure 2
	assert_output --partial "GPUVM_POLICY_RECHECK must be a number of seconds, got '1h'"
	GPUVM_EVENTS=sometimes mirror --once
	assert_failure 2
	GPUVM_API_SERVER=127.0.0.1:6443 mirror --once
	assert_failure 2
	assert_output --partial "GPUVM_API_SERVER must be an https:// URL"
	# no GPUVM_API_SERVER and not in a pod (no KUBERNETES_SERVICE_HOST): said, exit 2
	run env -u GPUVM_API_SERVER -u KUBERNETES_SERVICE_HOST PATH="$BIN:$PATH" NODE_NAME="$NODE" GPUVM_HOST="$ROOT" "$MIRROR" --once
	assert_failure 2
	assert_output --partial "no API server: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set"
	[ ! -s "$API/requests.jsonl" ]
	grep -qx "mode=container" "$CONF"
	mirror --help
	assert_success
	assert_output --partial "Usage: gpuvm-label-mirror"
	# every variable the script reads is in its --help
	grep -o '[$][{]GPUVM_[A-Z_]*' "$MIRROR" | sed 's/^..//' | sort -u >"$K/vars"
	[ "$(wc -l <"$K/vars")" -gt 10 ]
	while read -r v; do
		case $v in GPUVM_REBUILD*) continue ;; esac
		assert_output --partial "$v"
	done <"$K/vars"
}

@test "in a pod: the API server from KUBERNETES_SERVICE_HOST and _PORT, as kubectl's in-cluster config" {
	node container
	menv
	run env -u GPUVM_API_SERVER "${MENV[@]/#GPUVM_API_SERVER=*/KUBERNETES_SERVICE_HOST=127.0.0.1}" \
		KUBERNETES_SERVICE_PORT="${SERVER##*:}" "$MIRROR" --once
	assert_success
	assert_output --partial "host config already has mode container"
	[ "$(get_node_calls)" = 1 ]
}

@test "the mirror is POSIX sh and shellcheck-clean" {
	head -n 1 "$MIRROR" | grep -qx '#!/bin/sh'
	shellcheck -s sh "$MIRROR"
}

@test "the manifests parse, and the DaemonSets match the ServiceAccount and the script" {
	# Debian's python3 and its python3-yaml (scripts/install-packages.sh), not another python3
	# that the PATH may put first.
	need python3-yaml /usr/bin/python3 -c 'import yaml'
	run /usr/bin/python3 - "$TOP/mirror/deploy" "$MIRROR" <<'EOF'
import glob, os, re, sys, yaml
deploy, script = sys.argv[1], open(sys.argv[2]).read()
# The objects of every file but the kustomizations (tests/bats/deploy.bats renders those).
docs = [d for f in sorted(glob.glob(os.path.join(deploy, "**", "*.yaml"), recursive=True))
        if os.path.basename(f) != "kustomization.yaml" for d in yaml.safe_load_all(open(f)) if d]
kinds = {}
for d in docs:
    assert d.get("apiVersion") and d.get("kind") and d["metadata"].get("name"), d
    kinds.setdefault(d["kind"], []).append(d)
sa = kinds["ServiceAccount"][0]["metadata"]
# Least privilege: get, list and watch (its node's watch) and patch on nodes; list on the GPU Operator's ClusterPolicies, in a role
# of its own that can be left out (the mirror then judges by node labels alone); on OpenShift
# (components/openshift), use of the mirror's own SCC and no other, bound in its namespace.
roles = {r["metadata"]["name"]: r["rules"] for r in kinds["ClusterRole"]}
assert roles == {
    "gpuvm-label-mirror": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch", "patch"]}],
    "gpuvm-label-mirror-clusterpolicy": [{"apiGroups": ["nvidia.com"], "resources": ["clusterpolicies"],
                                          "verbs": ["list"]}],
    "gpuvm-label-mirror-scc": [{"apiGroups": ["security.openshift.io"], "resources": ["securitycontextconstraints"],
                                "resourceNames": ["gpuvm-label-mirror"], "verbs": ["use"]}]}, roles
bound = {b["roleRef"]["name"]: b["subjects"] for b in kinds["ClusterRoleBinding"]}
assert set(bound) == set(roles) - {"gpuvm-label-mirror-scc"}, bound
for subjects in bound.values():
    assert subjects == [{"kind": "ServiceAccount", "name": sa["name"], "namespace": sa["namespace"]}]
# Events: create, and nothing more, in the namespace of node events (default), bound there.
nsroles = {(r["metadata"]["namespace"], r["metadata"]["name"]): r["rules"] for r in kinds["Role"]}
assert nsroles == {("default", "gpuvm-label-mirror-events"): [
    {"apiGroups": [""], "resources": ["events"], "verbs": ["create"]}]}, nsroles
rbs = sorted((b["metadata"]["namespace"], b["roleRef"]["kind"], b["roleRef"]["name"], b["subjects"]) for b in kinds["RoleBinding"])
me = [{"kind": "ServiceAccount", "name": sa["name"], "namespace": sa["namespace"]}]
assert rbs == [("default", "Role", "gpuvm-label-mirror-events", me),
               (sa["namespace"], "ClusterRole", "gpuvm-label-mirror-scc", me)], rbs
# The DaemonSets: the base's and the live one (the other files are patches of a few fields,
# which tests/bats/deploy.bats renders).
for ds in kinds["DaemonSet"]:
    if "selector" not in ds["spec"]:
        continue
    spec = ds["spec"]["template"]["spec"]
    assert ds["metadata"]["namespace"] == sa["namespace"]
    assert spec["serviceAccountName"] == sa["name"]
    sel = ds["spec"]["selector"]["matchLabels"]
    assert all(ds["spec"]["template"]["metadata"]["labels"].get(k) == v for k, v in sel.items())
    vols = {v["name"] for v in spec["volumes"]}
    c = spec["containers"][0]
    assert {m["name"] for m in c["volumeMounts"]} <= vols
    env = {e["name"]: e for e in c["env"]}
    assert env["NODE_NAME"]["valueFrom"]["fieldRef"]["fieldPath"] == "spec.nodeName"
    for name in env:
        assert re.search(r"\b%s\b" % name, script), name
    assert env["GPUVM_LABEL_ABSENT"]["value"] == "auto"
    # liveness: the script's own --alive, run in the container
    probe = c["livenessProbe"]
    assert probe["exec"]["command"] == ["/usr/bin/gpuvm-label-mirror", "--alive"], probe
    assert probe["periodSeconds"] * probe["failureThreshold"] >= 60, probe
    assert "\n\t--alive) alive_probe=true ;;" in script
    print(ds["metadata"]["name"], sorted(env))
print(len(docs), "documents")
EOF
	assert_success
	assert_line --regexp '^gpuvm-label-mirror'
	assert_line --regexp '^[1-9][0-9]* documents$'
}

# GPUVM_LIVE=auto : the change tried live with the host's gpuvm (`chroot HOST gpuvm
# apply --live`, here the real build/gpuvm on the tree); a GPU in use falls back to the reboot.
@test "GPUVM_LIVE=auto: a free GPU switches live, no reboot asked for, the state file says so" {
	mkdir -p "$ROOT/run/gpuvm-reboot"
	node vm-passthrough
	GPUVM_LIVE=auto mirror --once
	assert_success
	[ "$(cat "$K/lives")" = "$ROOT gpuvm apply --live" ]
	assert_output --partial "live switch to vm-passthrough done (chroot $ROOT gpuvm apply --live): no reboot needed"
	[ "$(annotation gpuvm.dev/reboot-required)" = absent ]
	[ ! -e "$ROOT/$SENT" ]
	[ "$(jq -r .mode "$ROOT/run/gpuvm/state.json")" = vm-passthrough ]
	[ "$(cat "$ROOT/sys/bus/pci/devices/0000:01:00.0/driver_override")" = vfio-pci ]
	events | grep -qx "Normal LiveSwitched: live switch to vm-passthrough done (chroot $ROOT gpuvm apply --live): no reboot needed"
	# the next pass: the running boot is in the mode; nothing more to do
	mirror --once
	assert_success
	assert_output --partial "reboot: none: this boot runs vm-passthrough already"
	[ "$(wc -l <"$K/lives")" -eq 1 ]
}

@test "GPUVM_LIVE=auto: a GPU in use refuses, the reboot is marked; once free, the next pass switches and clears it" {
	mkdir -p "$ROOT/run/gpuvm-reboot" "$ROOT/proc/4242/fd"
	mkdir -p "$ROOT/sys/bus/pci/devices/0000:01:00.0/drm/card1"
	printf '226:1\n' >"$ROOT/sys/bus/pci/devices/0000:01:00.0/drm/card1/dev"
	printf 'Xorg\n' >"$ROOT/proc/4242/comm"
	ln -s /dev/dri/card1 "$ROOT/proc/4242/fd/5"
	node vm-passthrough
	GPUVM_LIVE=auto mirror --once
	assert_success
	assert_output --partial "live switch to vm-passthrough refused, a GPU in use (exit 7: 0000:01:00.0: in use: /dev/dri/card1 (0000:01:00.0) held by pid 4242 (Xorg)"
	assert_output --partial "annotated gpuvm.dev/reboot-required=true"
	[ "$(annotation gpuvm.dev/reboot-required)" = true ]
	[ -e "$ROOT/$SENT" ]
	[ "$(cat "$ROOT/sys/bus/pci/devices/0000:01:00.0/driver_override")" = "(null)" ]
	# the state file keeps the mode the host is in: config set still asks for the reboot
	[ "$(jq -r .mode "$ROOT/run/gpuvm/state.json")" = container ]
	GPUVM_LIVE=auto mirror --once
	assert_success
	assert_output --partial "reboot: needed: this boot runs container, the file says vm-passthrough"
	assert_output --partial "refused, a GPU in use"
	[ "$(annotation gpuvm.dev/reboot-required)" = true ]
	# the holder is gone: switched live, the mark and the sentinel removed
	rm "$ROOT/proc/4242/fd/5"
	GPUVM_LIVE=auto mirror --once
	assert_success
	assert_output --partial "live switch to vm-passthrough done"
	assert_output --partial "removed annotation gpuvm.dev/reboot-required"
	assert_output --partial "removed the reboot sentinel $ROOT/$SENT"
	[ "$(annotation gpuvm.dev/reboot-required)" = absent ]
	[ ! -e "$ROOT/$SENT" ]
	[ "$(wc -l <"$K/lives")" -eq 3 ]
}

@test "GPUVM_LIVE=never (the default): no live switch; GPUVM_LIVE_CMD replaces the command; a bad value is a usage error" {
	node vm-passthrough
	mirror --once
	assert_success
	[ ! -e "$K/lives" ]
	[ "$(annotation gpuvm.dev/reboot-required)" = true ]
	[ "$(cat "$ROOT/sys/bus/pci/devices/0000:01:00.0/driver_override")" = "(null)" ]
	# a failing command: a warning, the reboot mark stays
	node vm-vgpu
	GPUVM_LIVE=auto GPUVM_LIVE_CMD='echo "gpuvm: error: stand-in failure" >&2; exit 1' mirror --once
	assert_success
	assert_output --partial "warning: live switch to vm-vgpu failed (exit 1: "
	assert_output --partial "stand-in failure): a reboot applies it"
	[ "$(annotation gpuvm.dev/reboot-required)" = true ]
	GPUVM_LIVE=sometimes mirror --once
	assert_failure 2
	assert_output --partial "GPUVM_LIVE must be auto or never, got 'sometimes'"
}

@test "label changed: config rewritten, the reboot asked for once (request, mark, sentinel), no rebuild" {
	mkdir -p "$ROOT/run/gpuvm-reboot"
	node vm-passthrough
	mirror --once
	assert_success
	assert_output --partial "label nvidia.com/gpu.workload.config=vm-passthrough: host config mode container -> vm-passthrough; reboot: needed: this boot runs container, the file says vm-passthrough"
	[ "$(cat "$CONF")" = "$(printf '# provisioned\nmode=vm-passthrough')" ]
	# the request first, then the mark, then the sentinel: JSON merge patches of the node
	[ "$(patches)" = "$(printf '%s\n' \
		'application/merge-patch+json {"metadata":{"annotations":{"gpuvm.dev/requested":"vm-passthrough@11111111-1111-1111-1111-111111111111"}}}' \
		'application/merge-patch+json {"metadata":{"annotations":{"gpuvm.dev/reboot-required":"true"}}}')" ]
	[ -e "$ROOT/$SENT" ]
	# each patch that changed the node gave it a new resourceVersion
	[ "$(jq -r .metadata.resourceVersion "$STORE/api/v1/nodes/$NODE.json")" = 102 ]
	# the decisions as Events on the node
	[ "$(events)" = "$(printf '%s\n' \
		"Normal ConfigWritten: label nvidia.com/gpu.workload.config=vm-passthrough: host config mode container -> vm-passthrough; reboot: needed: this boot runs container, the file says vm-passthrough" \
		"Normal RebootRequested: the next boot puts the GPUs in vm-passthrough (label nvidia.com/gpu.workload.config=vm-passthrough): gpuvm.dev/requested=vm-passthrough@11111111-1111-1111-1111-111111111111")" ]
	refute_output --partial initramfs
	[ "$(annotation node.alpha.kubernetes.io/ttl)" = 0 ]
	# the same boot, the next passes: nothing new
	: >"$API/requests.jsonl"
	mirror --once
	assert_success
	[ "$(annotate_calls)" = 0 ]
	[ "$(events)" = "" ]
}

@test "names: every old gpuvm.nvidia.com/ annotation read once and removed in one call; GPUVM_DOMAIN moves the new ones" {
	node vm-passthrough gpuvm.nvidia.com/reboot-required=true gpuvm.nvidia.com/initramfs-rebuild-required=true \
		gpuvm.nvidia.com/error=next-boot-without-gpuvm nvidia.com/gpu-driver-upgrade-enabled=true
	mirror --once
	assert_success
	assert_output --partial 'old annotation gpuvm.nvidia.com/reboot-required="true": removed'
	assert_output --partial 'old annotation gpuvm.nvidia.com/error="next-boot-without-gpuvm": removed'
	[ "$(patches | grep -c gpuvm.nvidia.com)" = 1 ]
	[ "$(patches | grep gpuvm.nvidia.com | cut -d' ' -f2- | jq -cS .)" = \
		'{"metadata":{"annotations":{"gpuvm.nvidia.com/error":null,"gpuvm.nvidia.com/initramfs-rebuild-required":null,"gpuvm.nvidia.com/reboot-required":null}}}' ]
	[ "$(jq '[.metadata.annotations | keys[] | select(startswith("gpuvm.nvidia.com/"))] | length' "$STORE/api/v1/nodes/$NODE.json")" = 0 ]
	[ "$(annotation nvidia.com/gpu-driver-upgrade-enabled)" = true ]
	[ "$(annotation gpuvm.dev/reboot-required)" = true ]
	: >"$API/requests.jsonl"
	mirror --once
	run ! grep -q gpuvm.nvidia.com "$API/requests.jsonl"
	# another domain
	node vm-vgpu
	GPUVM_DOMAIN=gpuvm.example.org mirror --once
	assert_success
	[ "$(annotation gpuvm.example.org/reboot-required)" = true ]
	[ "$(annotation gpuvm.example.org/requested)" = "vm-vgpu@$(cat "$BOOTID")" ]
	# the old domain itself: nothing is removed as old
	node vm-passthrough gpuvm.nvidia.com/reboot-required=true
	GPUVM_DOMAIN=gpuvm.nvidia.com mirror --once
	assert_success
	refute_output --partial "old annotation"
	[ "$(annotation gpuvm.nvidia.com/reboot-required)" = true ]
}

@test "desired mode: the annotation wins over the label and says so; an invalid one leaves the config alone" {
	node container gpuvm.dev/desired-mode=vm-vgpu
	label nvidia.com/gpu.workload.config=vm-passthrough
	GPUVM_SET_LABEL=never mirror --once
	assert_success
	assert_output --partial "annotation gpuvm.dev/desired-mode=vm-vgpu wins over label nvidia.com/gpu.workload.config='vm-passthrough'"
	assert_output --partial "GPUVM_SET_LABEL=never: set the label nvidia.com/gpu.workload.config=vm-vgpu yourself"
	grep -qx "mode=vm-vgpu" "$CONF"
	[ "$(jq -r '.metadata.labels["nvidia.com/gpu.workload.config"]' "$STORE/api/v1/nodes/$NODE.json")" = vm-passthrough ]
	before=$(ident)
	admin_annotate gpuvm.dev/desired-mode=vm-passthru
	mirror --once
	assert_failure 1
	assert_output --partial "error: annotation gpuvm.dev/desired-mode='vm-passthru' is not container, vm-passthrough or vm-vgpu: host config left alone"
	[ "$(ident)" = "$before" ]
}

@test "desired mode, from a VM mode: the label moves only once boot.json says the node runs the mode" {
	mkdir -p "$ROOT/run/gpuvm-reboot"
	"$GPUVM" --root "$ROOT" config set mode=vm-passthrough >/dev/null
	bootjson vm-passthrough ok conf
	node vm-passthrough gpuvm.dev/desired-mode=container
	mirror --once
	assert_success
	assert_output --partial "label nvidia.com/gpu.workload.config left at 'vm-passthrough' until the node runs container"
	grep -qx "mode=container" "$CONF"
	[ -e "$ROOT/$SENT" ]
	[ "$(label_calls)" = 0 ]
	reboot
	bootjson container noop conf
	mirror --once
	assert_success
	assert_output --partial "labelled nvidia.com/gpu.workload.config=container (this boot runs container"
	[ "$(jq -r '.metadata.labels["nvidia.com/gpu.workload.config"]' "$STORE/api/v1/nodes/$NODE.json")" = container ]
	[ "$(annotation gpuvm.dev/requested)" = absent ]
	[ "$(label_calls)" = 1 ]
	patches | grep -qx 'application/merge-patch+json {"metadata":{"labels":{"nvidia.com/gpu.workload.config":"container"}}}'
	events | grep -qx 'Normal LabelSet: nvidia.com/gpu.workload.config=container (this boot runs container (/run/gpuvm/boot.json))'
	events | grep -qx 'Normal ModeBrought: boot 22222222-2222-2222-2222-000000000001 brought mode container (requested in boot 11111111-1111-1111-1111-111111111111): request done'
	: >"$API/requests.jsonl"
	mirror --once
	assert_success
	refute_output --partial wins
	[ "$(patches | wc -l)" = 0 ]
}

@test "desired mode, from container to a VM mode: the label moves with the request, before the boot" {
	mkdir -p "$ROOT/run/gpuvm-reboot"
	node container gpuvm.dev/desired-mode=vm-passthrough
	mirror --once
	assert_success
	assert_output --partial "labelled nvidia.com/gpu.workload.config=vm-passthrough (the operator treats the node as container"
	[ -e "$ROOT/$SENT" ]
	patches | grep -e requested -e '"labels"' | head -n 1 | grep -q requested
	# a boot line pin: no request, so the label stays
	node container gpuvm.dev/desired-mode=vm-vgpu
	pin container /etc/kernel/cmdline
	: >"$API/requests.jsonl"
	mirror --once
	assert_failure 1
	[ "$(label_calls)" = 0 ]
}

@test "daemonset: /etc/gpuvm, /run/gpuvm and /usr (read-only), /run/gpuvm-reboot, none made; gpuvm nodes only" {
	need python3-yaml /usr/bin/python3 -c 'import yaml'
	run /usr/bin/python3 - "$TOP/mirror/deploy/base/daemonset.yaml" "$TOP/mirror/deploy/components/live/daemonset.yaml" <<'PY'
import sys, yaml
base, live = ([d for d in yaml.safe_load_all(open(f)) if d and d["kind"] == "DaemonSet"][0]
              for f in sys.argv[1:3])
spec = base["spec"]["template"]["spec"]
host = {v["name"]: v["hostPath"]["path"] for v in spec["volumes"] if "hostPath" in v}
assert sorted(host.values()) == ["/etc/gpuvm", "/run/gpuvm", "/run/gpuvm-reboot", "/usr"], host
assert all(k in ("emptyDir", "name") for v in spec["volumes"] if "hostPath" not in v for k in v)
c = spec["containers"][0]
mounts = {m["name"]: m for m in c["volumeMounts"]}
ro = {host[n]: mounts[n].get("readOnly", False) for n in host}
assert ro == {"/etc/gpuvm": False, "/run/gpuvm": True, "/run/gpuvm-reboot": False, "/usr": True}, ro
for n, p in host.items():
    assert mounts[n]["mountPath"] == "/host" + p, mounts[n]
sc = c["securityContext"]
assert not sc.get("privileged") and sc["capabilities"]["drop"] == ["ALL"] and sc["readOnlyRootFilesystem"]
assert not spec.get("hostPID") and not spec.get("hostNetwork")
assert not any(e["name"].startswith("GPUVM_REBUILD") for e in c["env"])
# The kubelet makes no host path, in either DaemonSet, and both land on gpuvm's nodes alone.
for ds in (base, live):
    s = ds["spec"]["template"]["spec"]
    types = {v["hostPath"]["path"]: v["hostPath"].get("type", "") for v in s["volumes"] if "hostPath" in v}
    assert set(types.values()) == {"Directory"}, types
    assert "nodeSelector" not in s, s["nodeSelector"]
    terms = s["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert terms == [
        {"matchExpressions": [{"key": "gpuvm.dev/installed", "operator": "In", "values": ["true"]}]},
        {"matchExpressions": [{"key": "feature.node.kubernetes.io/gpuvm-mode", "operator": "Exists"}]}], terms
print("four host paths")
PY
	assert_success
	assert_output "four host paths"
	[ ! -e "$TOP/mirror/deploy/rebuild" ]
	run grep -rl -e GPUVM_REBUILD -e initramfs-rebuild-required "$TOP/mirror/deploy"
	assert_failure
}

@test "admission policy: the mirror's own domain, removals of the old names, the label only to the desired mode" {
	p=$TOP/mirror/deploy/components/admission-policy/admission-policy.yaml
	grep -q "startsWith('gpuvm.dev/')" "$p"
	grep -q "startsWith('gpuvm.nvidia.com/')" "$p"
	grep -q "'gpuvm.dev/desired-mode'" "$p"
	grep -q "'nvidia.com/gpu.workload.config'" "$p"
	run grep -n "startsWith('gpuvm.nvidia.com/') ||" "$p"
	assert_failure # never a prefix that may be set: only removed
}

# running MODE: the running boot's last apply (state.json) says MODE, devices and all.
running() {
	jq --arg m "$1" '.mode = $m' "$BATS_FILE_TMPDIR/state.json" >"$ROOT/run/gpuvm/state.json"
}

kv_calls() {
	patches | grep -c 'gpuvm.dev/kubevirt' || true
}

@test "the node's KubeVirt entries: published while it runs a VM mode, patched on a change only, removed in container" {
	"$GPUVM" --root "$ROOT" config set mode=vm-passthrough >/dev/null
	node vm-passthrough
	running vm-passthrough
	mirror --once
	assert_success
	assert_output --partial "annotated gpuvm.dev/kubevirt: mode vm-passthrough, 1 PCI and 0 mediated entries (nvidia.com/1e87)"
	a=$(annotation gpuvm.dev/kubevirt)
	# gpuvm kubevirt's own entry, with the count of the ID's functions and its kind
	[ "$(jq -c '.pciHostDevices' <<<"$a")" = '[{"pciVendorSelector":"10DE:1E87","resourceName":"nvidia.com/1e87","externalResourceProvider":true,"count":1,"gpu":true,"vgpu":false}]' ]
	[ "$(jq -c '[.version, .mode, .mediatedDevices]' <<<"$a")" = '[1,"vm-passthrough",[]]' ]
	[ "$(kv_calls)" = 1 ]
	# the same entries: not patched again
	mirror --once
	assert_success
	refute_output --partial gpuvm.dev/kubevirt
	[ "$(kv_calls)" = 1 ]
	# the host's names change (a pci.ids installed): patched
	mkdir -p "$ROOT/usr/share/gpuvm"
	printf '10de  NVIDIA Corporation\n\t1e87  TU104 [GeForce RTX 2080 Rev. A]\n' >"$ROOT/usr/share/gpuvm/pci.ids"
	mirror --once
	assert_output --partial "(nvidia.com/TU104_GEFORCE_RTX_2080_REV__A)" # ". " is two _, as the plugin writes it
	[ "$(kv_calls)" = 2 ]
	# the node boots into container: the entries go
	node container "gpuvm.dev/kubevirt=$(annotation gpuvm.dev/kubevirt)"
	running container
	mirror --once
	assert_success
	assert_output --partial "removed annotation gpuvm.dev/kubevirt"
	[ "$(annotation gpuvm.dev/kubevirt)" = absent ]
}

@test "the node's KubeVirt entries: a failing gpuvm leaves the annotation as it was; GPUVM_KUBEVIRT=never publishes nothing" {
	node vm-passthrough 'gpuvm.dev/kubevirt={"version":1}'
	running vm-passthrough
	KV_CMD='echo "gpuvm: error: stand-in failure" >&2; exit 3' mirror --once
	assert_success
	assert_output --partial "warning: the KubeVirt entries for gpuvm.dev/kubevirt failed (exit 3: gpuvm: error: stand-in failure): annotation left as it is"
	KV_CMD='echo "[]"' mirror --once
	assert_output --partial "warning: the KubeVirt entries for gpuvm.dev/kubevirt are not gpuvm kubevirt's JSON ("
	[ "$(annotation gpuvm.dev/kubevirt)" = '{"version":1}' ]
	[ "$(kv_calls)" = 0 ]
	running container
	GPUVM_KUBEVIRT=never mirror --once
	assert_success
	[ "$(annotation gpuvm.dev/kubevirt)" = '{"version":1}' ]
	GPUVM_KUBEVIRT=sometimes mirror --once
	assert_failure 2
	assert_output --partial "GPUVM_KUBEVIRT must be auto or never, got 'sometimes'"
	# gpuvm kubevirt's warnings (an ID the sandbox plugin may name otherwise) reach the log,
	# masked, once while they hold
	running vm-passthrough
	printf '%s\n' "\"$GPUVM\" --root \"$ROOT\" --cmdline '' kubevirt --json" \
		"printf 'gpuvm: warning: 10DE:1E87: a stand-in warning\\033[31m\\n' >&2" >"$K/kvwarn.sh"
	KV_CMD="sh $K/kvwarn.sh" mirror --once
	assert_success
	assert_output --partial "note: gpuvm kubevirt: 10DE:1E87: a stand-in warning?[31m"
}

# One KubeVirt patch for a fleet: each node a fixture tree through the real chain (gpuvm apply
# writes its state.json, the mirror runs gpuvm kubevirt on it and publishes the annotation to
# the stand-in API), then gpuvm-kubevirt-patch on the list of the nodes as kubectl gives it.
PATCH="$TOP/mirror/gpuvm-kubevirt-patch"

# fleet_node NAME SCENARIO MODE CMDLINE [SETUP]: the node NAME of the fleet ($K/fleet/NAME.json),
# its tree built from SCENARIO, SETUP (a command, given the tree) run before the boot's apply.
fleet_node() {
	local name=$1 tree="$BATS_TEST_TMPDIR/fleet-$1"
	"$TOP/tests/fixture/mkfixture" "$tree" "$2" >/dev/null
	mkdir -p "$tree/etc/gpuvm" "$tree/usr/share/gpuvm" "$K/fleet" "$tree/proc/sys/kernel/random"
	printf 'mode=%s\n' "$3" >"$tree/etc/gpuvm/gpuvm.conf"
	printf '%s\n' '10de  NVIDIA Corporation' '	2330  GH100 [H100 SXM5 80GB]' \
		'	22a3  GH100 [H100 NVSwitch]' '	26b9  AD102GL [L40S]' >"$tree/usr/share/gpuvm/pci.ids"
	cat "$BOOTID" >"$tree/proc/sys/kernel/random/boot_id"
	[ -z "${5-}" ] || $5 "$tree"
	"$GPUVM" --root "$tree" --cmdline "$4" apply >/dev/null 2>&1 || true
	[ "$(jq -r .mode "$tree/run/gpuvm/state.json")" = "$3" ]
	NODE=$name ROOT=$tree node "$3"
	NODE=$name ROOT=$tree KV_CMD="'$GPUVM' --root '$tree' --cmdline '$4' kubevirt --json" \
		GPUVM_REBOOT_SENTINEL=none mirror --once
	assert_output --partial "annotated gpuvm.dev/kubevirt: mode $3"
	cp "$STORE/api/v1/nodes/$name.json" "$K/fleet/$name.json"
}

# h200 TREE: the H100 board's GPUs as H200s (10de:2335, which the trees' pci.ids lacks).
h200() {
	grep -rl 2330 "$1/sys" "$1/proc/bus" | xargs sed -i 's/2330/2335/g'
}
l40s_profiles() {
	fx_vgpu_types "$1" 0000:41:00.4 "1155 : NVIDIA L40S-1Q" "1157 : NVIDIA L40S-4C"
}
a10_mdev() {
	fx_mdev_type "$1" 0000:41:00.4 nvidia-592 "NVIDIA A10-4Q"
}

# capacity NAME RESOURCE=COUNT...: what the node's device plugins registered.
capacity() {
	local f="$K/fleet/$1.json" a
	shift
	for a in "$@"; do
		jq --arg k "${a%%=*}" --arg v "${a#*=}" '.status.capacity[$k] = $v' "$f" >"$f.new" && mv "$f.new" "$f"
	done
}

# The fleet as `kubectl get nodes -o json` gives it, and the patch of it.
fleet_list() {
	jq -s '{apiVersion: "v1", kind: "List", items: ., metadata: {resourceVersion: ""}}' "$K"/fleet/*.json >"$K/nodes.json"
}

build_fleet() {
	fleet_node hgx-h100 hgx8 vm-passthrough "gpuvm.nvswitch=vm"
	fleet_node hgx-h200-a hgx8 vm-passthrough "" h200
	fleet_node hgx-h200-b hgx8 vm-passthrough "" h200
	fleet_node l40s sriov vm-vgpu "" l40s_profiles
	fleet_node a10 sriov vm-vgpu "" a10_mdev
	# a container node: nothing published; one with an annotation that is not the mirror's
	jq -n '{kind: "Node", metadata: {name: "cpu-1"}, status: {capacity: {cpu: "64"}}}' >"$K/fleet/cpu-1.json"
	jq -n '{kind: "Node", metadata: {name: "odd", annotations: {"gpuvm.dev/kubevirt": "{\"version\":2}"}}}' >"$K/fleet/odd.json"
	# the sandbox plugin on one H200 node registered its pci.ids' name
	capacity hgx-h200-a nvidia.com/GH100_H200_SXM_141GB=8 nvidia.com/gpu=0 cpu=192
	fleet_list
}

@test "gpuvm-kubevirt-patch: every node's entries in one KubeVirt patch, the plugin's names, the gates they need" {
	build_fleet
	run --separate-stderr "$PATCH" --replace "$K/nodes.json"
	assert_success
	[ "$(jqr '[.spec.configuration.permittedHostDevices.pciHostDevices[] | "\(.pciVendorSelector) \(.resourceName) \(.externalResourceProvider)"] | join(",")')" = \
		"10DE:22A3 nvidia.com/GH100_H100_NVSWITCH true,10DE:2330 nvidia.com/GH100_H100_SXM5_80GB true,10DE:2335 nvidia.com/GH100_H200_SXM_141GB true,10DE:26B9 nvidia.com/AD102GL_L40S true,10DE:26B9 nvidia.com/NVIDIA_L40S-1Q true,10DE:26B9 nvidia.com/NVIDIA_L40S-4C true" ]
	[ "$(jqr '.spec.configuration.permittedHostDevices.mediatedDevices | map("\(.mdevNameSelector) \(.resourceName)") | join(",")')" = "NVIDIA A10-4Q nvidia.com/NVIDIA_A10-4Q" ]
	# NVSwitches go to VMIs as hostDevices: the gate; vGPU nodes: KubeVirt 1.8 leaves mdevs alone
	[ "$(jqr '.spec.configuration.developerConfiguration.featureGates | join(",")')" = HostDevices ]
	[ "$(jqr '.spec.configuration.mediatedDevicesConfiguration')" = '{
  "enabled": false
}' ]
	[[ "$stderr" == *"note: 10DE:2335: nvidia.com/2335 is nvidia.com/GH100_H200_SXM_141GB, as the sandbox device plugin registered it on hgx-h200-a"* ]]
	[[ "$stderr" == *"warning: node odd: gpuvm.dev/kubevirt left out: version 2, not 1"* ]]
	[[ "$stderr" == *"with --replace, the lists replace the CR's whole"*", and so are the feature gates but HostDevices"* ]]
	# Every key of the patch is one of KubeVirt's (KubeVirtSpec.configuration, from its API types).
	[ "$(jqr '[paths(type != "object" and type != "array") | map(select(type == "string")) | join(".")] | unique | join(" ")')" = \
		"metadata.annotations.gpuvm.dev/kubevirt-entries spec.configuration.developerConfiguration.featureGates spec.configuration.mediatedDevicesConfiguration.enabled spec.configuration.permittedHostDevices.mediatedDevices.externalResourceProvider spec.configuration.permittedHostDevices.mediatedDevices.mdevNameSelector spec.configuration.permittedHostDevices.mediatedDevices.resourceName spec.configuration.permittedHostDevices.pciHostDevices.externalResourceProvider spec.configuration.permittedHostDevices.pciHostDevices.pciVendorSelector spec.configuration.permittedHostDevices.pciHostDevices.resourceName" ]
	# Before KubeVirt 1.8: the feature gate instead of the field.
	run --separate-stderr "$PATCH" --replace --kubevirt-version v1.7.2 <"$K/nodes.json"
	assert_success
	[ "$(jqr '.spec.configuration.developerConfiguration.featureGates | join(",")')" = HostDevices,DisableMDEVConfiguration ]
	[ "$(jqr '.spec.configuration | has("mediatedDevicesConfiguration")')" = false ]
}

@test "gpuvm-kubevirt-patch --current: the CR's other devices and gates kept; --hco: HCO's names" {
	build_fleet
	jq -n '{apiVersion: "kubevirt.io/v1", kind: "KubeVirt", metadata: {name: "kubevirt", namespace: "kubevirt"},
		spec: {configuration: {developerConfiguration: {featureGates: ["LiveMigration", "HostDevices"]},
		permittedHostDevices: {pciHostDevices: [{pciVendorSelector: "8086:0D5C", resourceName: "intel.com/qat"},
			{pciVendorSelector: "10de:2330", resourceName: "nvidia.com/old-name"}],
		mediatedDevices: [{mdevNameSelector: "i915-GVTg_V5_4", resourceName: "intel.com/gvt"}]}}}}' >"$K/kv.json"
	run --separate-stderr "$PATCH" --current "$K/kv.json" "$K/nodes.json"
	assert_success
	[ "$(jqr '.spec.configuration.permittedHostDevices.pciHostDevices | map(.resourceName) | join(",")')" = \
		"intel.com/qat,nvidia.com/old-name,nvidia.com/GH100_H100_NVSWITCH,nvidia.com/GH100_H100_SXM5_80GB,nvidia.com/GH100_H200_SXM_141GB,nvidia.com/AD102GL_L40S,nvidia.com/NVIDIA_L40S-1Q,nvidia.com/NVIDIA_L40S-4C" ]
	[ "$(jqr '.spec.configuration.permittedHostDevices.mediatedDevices | map(.resourceName) | join(",")')" = "intel.com/gvt,nvidia.com/NVIDIA_A10-4Q" ]
	# the gates are there already: the patch leaves the list alone
	[ "$(jqr '.spec.configuration | has("developerConfiguration")')" = false ]
	[[ "$stderr" != *"the lists replace the CR's whole"* ]]
	# The HyperConverged CR: pciDeviceSelector, its own feature gate map.
	jq -n '{apiVersion: "hco.kubevirt.io/v1beta1", kind: "HyperConverged",
		spec: {permittedHostDevices: {pciHostDevices: [{pciDeviceSelector: "10DE:1EB8", resourceName: "nvidia.com/TU104GL_Tesla_T4"}]}}}' >"$K/hco.json"
	run --separate-stderr "$PATCH" --hco --current "$K/hco.json" "$K/nodes.json"
	assert_success
	[ "$(jqr '.spec.permittedHostDevices.pciHostDevices | map(.pciDeviceSelector) | join(",")')" = "10DE:1EB8,10DE:22A3,10DE:2330,10DE:2335,10DE:26B9,10DE:26B9,10DE:26B9" ]
	[ "$(jqr '.spec.featureGates')" = '{
  "disableMDevConfiguration": true
}' ]
	[[ "$stderr" == *"note: HCO enables the feature gate HostDevices itself"* ]]
	# Every key is one of HCO's (HyperConvergedSpec, its docs/api.md).
	[ "$(jqr '[paths(type != "object" and type != "array") | map(select(type == "string")) | join(".")] | unique | join(" ")')" = \
		"metadata.annotations.gpuvm.dev/kubevirt-entries spec.featureGates.disableMDevConfiguration spec.permittedHostDevices.mediatedDevices.externalResourceProvider spec.permittedHostDevices.mediatedDevices.mdevNameSelector spec.permittedHostDevices.mediatedDevices.resourceName spec.permittedHostDevices.pciHostDevices.externalResourceProvider spec.permittedHostDevices.pciHostDevices.pciDeviceSelector spec.permittedHostDevices.pciHostDevices.resourceName" ]
	# A CR of the other kind is refused.
	run --separate-stderr "$PATCH" --hco --current "$K/kv.json" "$K/nodes.json"
	assert_failure 1
	[[ "$stderr" == *"--current: not a HyperConverged object (kind KubeVirt)"* ]]
}

@test "gpuvm-kubevirt-patch --vmi: a VMI's devices for each kind of node, as YAML" {
	build_fleet
	run --separate-stderr "$PATCH" --vmi "$K/nodes.json"
	assert_success
	printf '%s\n' "$output" >"$K/vmi.yaml"
	# one document per kind of node: the two H200 nodes are one
	python3 -c 'import json, sys, yaml; print(json.dumps(list(yaml.safe_load_all(open(sys.argv[1])))))' "$K/vmi.yaml" >"$K/vmi.json"
	[ "$(jq length "$K/vmi.json")" = 4 ]
	[ "$(jq -r '.[0].gpus | length' "$K/vmi.json")" = 8 ]
	[ "$(jq -r '.[0].hostDevices | map(.deviceName) | unique | join(",")' "$K/vmi.json")" = nvidia.com/GH100_H100_NVSWITCH ]
	[ "$(jq -r '[.[] | .gpus[0].deviceName] | join(",")' "$K/vmi.json")" = "nvidia.com/GH100_H100_SXM5_80GB,nvidia.com/GH100_H200_SXM_141GB,nvidia.com/NVIDIA_A10-4Q,nvidia.com/NVIDIA_L40S-1Q" ]
	[ "$(jq -r '[.[] | .gpus | length] | join(",")' "$K/vmi.json")" = "8,8,1,1" ]
	assert_line "# hgx-h200-a, hgx-h200-b (vm-passthrough): spec.domain.devices of a VMI that takes all of one such node's devices"
	assert_line "# or another profile: nvidia.com/NVIDIA_L40S-4C"
}

@test "gpuvm-kubevirt-patch: nodes that disagree, no entries, bad input: exit 1 or 2, each said" {
	fleet_node own-plugin workstation vm-passthrough ""
	fleet_list
	"$PATCH" --replace "$K/nodes.json" >/dev/null
	# the same ID, two nodes, two device plugins
	jq '.metadata.name = "sandbox" | .metadata.annotations["gpuvm.dev/kubevirt"] |= (fromjson
		| del(.pciHostDevices[0].externalResourceProvider) | tojson)' "$K/fleet/own-plugin.json" >"$K/fleet/sandbox.json"
	fleet_list
	run --separate-stderr "$PATCH" --replace "$K/nodes.json"
	assert_failure 1
	[[ "$stderr" == *"error: 10DE:1E87 nvidia.com/1e87: externalResourceProvider true on own-plugin, false on sandbox"* ]]
	[ -z "$output" ]
	# no node publishes
	run --separate-stderr "$PATCH" --replace <<<'{"kind": "List", "items": [{"kind": "Node", "metadata": {"name": "n"}}]}'
	assert_failure 1
	[[ "$stderr" == *"error: no node has gpuvm.dev/kubevirt"* ]]
	run --separate-stderr "$PATCH" --replace <<<'[1, 2]'
	assert_failure 1
	[[ "$stderr" == *"not a Node or a list of nodes"* ]]
	run --separate-stderr "$PATCH" --kubevirt-version one "$K/nodes.json"
	assert_failure 2
	run --separate-stderr "$PATCH" --frobnicate
	assert_failure 2
	[[ "$stderr" == *"unknown option '--frobnicate' (see --help)"* ]]
	run "$PATCH" --help
	assert_success
	assert_output --partial "Usage: gpuvm-kubevirt-patch [OPTIONS] [NODES.json]"
}

# Events: each decision a core/v1 Event about the Node, created through the Role in default
# that mirror/deploy/base/rbac.yaml ships; the stand-in validates it as the API server does (the
# legacy form: no eventTime, so a cluster-scoped involvedObject only in default).
@test "Events: on the Node (its uid from the GET), in default, as the API takes them; none for a steady pass" {
	node vm-passthrough
	mirror --once
	assert_success
	[ "$(requests '.method == "POST"' | jq -r '"\(.path) \(.verb) \(.code) \(.content_type) \(.user)"' | sort -u)" = \
		"/api/v1/namespaces/default/events create 201 application/json $SA_USER" ]
	d=$STORE/api/v1/namespaces/default/events
	[ "$(find "$d" -name '*.json' | wc -l)" = 2 ]
	for f in "$d"/*.json; do
		jq -e --arg n "$NODE" '.metadata.namespace == "default" and (.metadata.name | startswith($n + ".gpuvm-"))
			and .involvedObject == {apiVersion: "v1", kind: "Node", name: $n, uid: "5f0c3a6e-9d1b-4c2e-8a7f-0123456789ab"}
			and .source == {component: "gpuvm-label-mirror", host: $n} and .type == "Normal" and .count == 1
			and (.firstTimestamp | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$"))
			and .lastTimestamp == .firstTimestamp and .reportingComponent == "gpuvm-label-mirror"
			and .reportingInstance == $n and (has("eventTime") | not)' "$f" >/dev/null
	done
	[ "$(jq -r .reason "$d"/*.json | sort | tr '\n' ' ')" = "ConfigWritten RebootRequested " ]
	: >"$API/requests.jsonl"
	mirror --once
	assert_success
	[ "$(requests '.method == "POST"' | wc -l)" = 0 ]
}

@test "Events: RBAC without the events Role: said once, the pass does its work; GPUVM_EVENTS=never makes none" {
	mkdir -p "$ROOT/run/gpuvm-reboot"
	rbac_without 'gpuvm-label-mirror-events'
	node vm-passthrough
	mirror --once
	assert_success
	assert_output --partial "warning: cannot record the Event ConfigWritten on node $NODE (POST /api/v1/namespaces/default/events: 403 Forbidden: events is forbidden: User \"$SA_USER\" cannot create resource \"events\" in API group \"\" in the namespace \"default\"): the mirror's decisions are in this log only"
	[ "$(grep -c 'cannot record the Event' <<<"$output")" = 1 ]
	# tried for both decisions, said once; the request, the mark and the sentinel all there
	[ "$(requests '.method == "POST" and .code == 403' | wc -l)" = 2 ]
	[ "$(annotation gpuvm.dev/requested)" = vm-passthrough@11111111-1111-1111-1111-111111111111 ]
	[ "$(annotation gpuvm.dev/reboot-required)" = true ]
	[ -e "$ROOT/$SENT" ]
	node vm-vgpu
	: >"$API/requests.jsonl"
	GPUVM_EVENTS=never mirror --once
	assert_success
	refute_output --partial "cannot record"
	[ "$(requests '.method == "POST"' | wc -l)" = 0 ]
	[ "$(annotation gpuvm.dev/requested)" = "vm-vgpu@11111111-1111-1111-1111-111111111111" ]
}

@test "liveness: --alive passes while the loop's steps come, fails while a pass hangs, passes again after" {
	node vm-passthrough
	running vm-passthrough
	hb=$K/heartbeat
	run env GPUVM_HEARTBEAT="$hb" "$MIRROR" --alive
	assert_failure 1
	assert_output --partial "not alive: no heartbeat in $hb (no pass has started)"
	# each pass hangs 3 s in its last step (the node's KubeVirt entries), past GPUVM_ALIVE_MAX=1
	menv
	env "${MENV[@]}" GPUVM_HEARTBEAT="$hb" GPUVM_ALIVE_MAX=1 GPUVM_KUBEVIRT_CMD='sleep 3; exit 3' \
		"$MIRROR" --interval 1 2>"$BATS_TEST_TMPDIR/log" >/dev/null 3>&- &
	pid=$!
	for _ in $(seq 1 50); do
		[ -s "$hb" ] && break
		sleep 0.1
	done
	[ "$(cut -d' ' -f2 "$hb")" = 1 ]
	for _ in $(seq 1 50); do
		run env GPUVM_HEARTBEAT="$hb" "$MIRROR" --alive
		[ "$status" = 0 ] || break
		sleep 0.1
	done
	assert_failure 1
	assert_output --regexp "not alive: the loop's last step was [0-9]+s ago, more than 1s: a pass hangs"
	# the step ends, the next pass begins: alive again
	for _ in $(seq 1 60); do
		run env GPUVM_HEARTBEAT="$hb" "$MIRROR" --alive
		[ "$status" != 0 ] || break
		sleep 0.1
	done
	assert_success
	grep -q 'KubeVirt entries for gpuvm.dev/kubevirt failed (exit 3' "$BATS_TEST_TMPDIR/log"
	# The wall clock steps a day (NTP, by hand): the probe, on the time since boot, does not
	# fail a healthy loop for a step forward (a loop whose heartbeat is fresh, 60 s allowed),
	# nor pass a heartbeat 100 s old (30 s allowed) for a step back.
	kill "$pid"
	wait "$pid" || true
	rm -f "$hb"
	env "${MENV[@]}" GPUVM_HEARTBEAT="$hb" GPUVM_ALIVE_MAX=60 GPUVM_KUBEVIRT_CMD='sleep 30' \
		"$MIRROR" --interval 1 2>/dev/null >/dev/null 3>&- &
	pid=$!
	for _ in $(seq 1 50); do
		[ -s "$hb" ] && break
		sleep 0.1
	done
	stepped() {
		# shellcheck disable=SC2016 # the stand-in's own expansions, in its text
		printf '#!/bin/sh\nexec /bin/date -d @$(($(/bin/date +%%s) %s)) "$@"\n' "$1" >"$BIN/date"
		chmod +x "$BIN/date"
		run env PATH="$BIN:$PATH" GPUVM_HEARTBEAT="$hb" "$MIRROR" --alive
	}
	stepped +86400
	assert_success
	kill "$pid"
	wait "$pid" || true
	pid=''
	read -r up _ </proc/uptime
	printf '%s 30\n' "$((${up%%.*} - 100))" >"$hb"
	stepped -86400
	assert_failure 1
	assert_output --regexp "not alive: the loop's last step was 10[0-9]s ago, more than 30s: a pass hangs"
	rm "$BIN/date"
	run env GPUVM_HEARTBEAT="$K/nothing" "$MIRROR" --alive
	assert_failure 1
	echo "12 x" >"$K/bad"
	run env GPUVM_HEARTBEAT="$K/bad" "$MIRROR" --alive
	assert_failure 1
	assert_output --partial "is not a heartbeat"
}

@test "version drift: the host booted another gpuvm: logged, an Event, gpuvm-version-differs; cleared when they agree" {
	node container
	jq '.version = "0.0.9"' "$ROOT/run/gpuvm/boot.json" >"$K/b" && mv "$K/b" "$ROOT/run/gpuvm/boot.json"
	mirror --once
	assert_success
	assert_output --partial "warning: this mirror's gpuvm is $GV, the host booted with gpuvm 0.0.9 (/run/gpuvm/boot.json): config set and kubevirt here may follow rules the host's boot does not"
	[ "$(annotation "$W")" = gpuvm-version-differs ]
	events | grep -qx "Warning GpuvmVersionDiffers: gpuvm.dev/warning=gpuvm-version-differs: this mirror's gpuvm is $GV, the host booted with gpuvm 0.0.9 (/run/gpuvm/boot.json): .*"
	# with the operator's warnings: after them; an Event for the new token only
	cpol sandboxWorkloads.enabled=true
	node vm-passthrough "$W=gpuvm-version-differs"
	: >"$API/requests.jsonl"
	mirror --once
	assert_success
	[ "$(annotation "$W")" = vfio-manager,gpuvm-version-differs ]
	[ "$(events | grep -c '^Warning ')" = 1 ]
	events | grep -q '^Warning VfioManager: '
	# no boot.json: state.json says what the host runs
	rm "$ROOT/run/gpuvm/boot.json"
	jq '.version = "0.0.8"' "$ROOT/run/gpuvm/state.json" >"$K/s" && mv "$K/s" "$ROOT/run/gpuvm/state.json"
	mirror --once
	assert_output --partial "the host booted with gpuvm 0.0.8 (/run/gpuvm/state.json)"
	# the same version: the token goes, and an Event says so
	jq --arg v "$GV" '.version = $v' "$ROOT/run/gpuvm/state.json" >"$K/s" && mv "$K/s" "$ROOT/run/gpuvm/state.json"
	: >"$API/requests.jsonl"
	mirror --once
	assert_success
	refute_output --partial "gpuvm-version-differs"
	[ "$(annotation "$W")" = vfio-manager ]
	[ "$(events)" = "Normal WarningCleared: gpuvm.dev/warning: gpuvm-version-differs no longer holds" ]
}

@test "selection: a value gpuvm refuses writes nothing, mode neither: gpuvm.dev/error=gpus-invalid and one Event; fixed, it goes" {
	mkdir -p "$ROOT/run/gpuvm-reboot"
	node vm-passthrough gpuvm.dev/desired-gpus=0000:01:00.0,bogus
	before=$(snap "$ROOT")
	mirror --once
	assert_failure
	assert_output --partial "error: annotation gpuvm.dev/desired-gpus='0000:01:00.0,bogus' refused by gpuvm (gpuvm: error: config set: gpus: invalid value"
	[ "$(snap "$ROOT")" = "$before" ]
	[ "$(annotation gpuvm.dev/error)" = gpus-invalid ]
	[ "$(annotation gpuvm.dev/requested)" = absent ]
	[ "$(events | grep -c '^Warning GpusInvalid: gpuvm.dev/error=gpus-invalid: ')" = 1 ]
	# again: said in the log, no new mark nor Event
	: >"$API/requests.jsonl"
	mirror --once
	assert_failure
	[ "$(annotate_calls)" = 0 ]
	[ "$(events)" = "" ]
	# fixed: written, the error gone, the reboot asked for
	admin_annotate gpuvm.dev/desired-gpus=0000:01:00.0
	mirror --once
	assert_success
	grep -qx 'gpus=0000:01:00.0' "$CONF"
	[ "$(annotation gpuvm.dev/error)" = absent ]
	[ "$(annotation gpuvm.dev/requested)" = vm-passthrough+0000:01:00.0@11111111-1111-1111-1111-111111111111 ]
	# GPUVM_WRITE_CONFIG=never: another selection is reported, never written
	admin_annotate gpuvm.dev/desired-gpus=numa:0
	run env "${MENV[@]}" GPUVM_WRITE_CONFIG=never "$MIRROR" --once
	assert_success
	assert_output --partial "warning: gpuvm.dev/desired-gpus='numa:0', but the host config has gpus='0000:01:00.0': GPUVM_WRITE_CONFIG=never"
	grep -qx 'gpus=0000:01:00.0' "$CONF"
	# no annotation: the owner's gpus= is its own, no warning
	admin_annotate gpuvm.dev/desired-gpus-
	run env "${MENV[@]}" GPUVM_WRITE_CONFIG=never "$MIRROR" --once
	assert_success
	refute_output --partial gpus=
	grep -qx 'gpus=0000:01:00.0' "$CONF"
}

@test "the pinned set: gpuvm.dev/pinned from /run/gpuvm/pinned, patched when it changes only, empty when none" {
	node container
	mirror --once
	assert_success
	# nothing pinned, no annotation: no request
	[ "$(annotate_calls)" = 0 ]
	[ "$(annotation gpuvm.dev/pinned)" = absent ]
	# a real apply of a VM mode pins the GPU
	printf 'mode=vm-passthrough\ngpus=0000:01:00.0\n' >"$CONF"
	"$GPUVM" --root "$ROOT" --cmdline "" apply >/dev/null 2>&1
	[ -f "$ROOT/run/gpuvm/pinned/0000:01:00.0" ]
	node vm-passthrough gpuvm.dev/desired-gpus=0000:01:00.0
	mirror --once
	assert_success
	[ "$(annotation gpuvm.dev/pinned)" = 0000:01:00.0 ]
	assert_output --partial "annotated gpuvm.dev/pinned=0000:01:00.0"
	: >"$API/requests.jsonl"
	mirror --once
	assert_success
	[ "$(patches | grep -c gpuvm.dev/pinned)" = 0 ]
	# a record for another address (and a file that is none) join in order
	touch "$ROOT/run/gpuvm/pinned/0000:00:02.0" "$ROOT/run/gpuvm/pinned/.tmp123"
	mirror --once
	[ "$(annotation gpuvm.dev/pinned)" = 0000:00:02.0,0000:01:00.0 ]
	# back to container: the records go, the annotation is empty
	rm "$ROOT/run/gpuvm/pinned/0000:00:02.0"
	printf 'mode=container\n' >"$CONF"
	"$GPUVM" --root "$ROOT" --cmdline "" apply >/dev/null 2>&1
	node container gpuvm.dev/pinned=0000:01:00.0
	: >"$API/requests.jsonl"
	mirror --once
	assert_success
	[ "$(annotation gpuvm.dev/pinned)" = "" ]
	[ "$(patches | grep -c gpuvm.dev/pinned)" = 1 ]
	: >"$API/requests.jsonl"
	mirror --once
	[ "$(patches | grep -c gpuvm.dev/pinned)" = 0 ]
}
