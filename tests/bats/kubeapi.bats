#!/usr/bin/env bats
# shellcheck disable=SC2154 # $stderr and $output are set by bats' run
# The API stand-in (tests/api/kube-api-standin) that mirror.bats runs the label mirror against:
# what it answers, checked with curl against what the Kubernetes API server answers (its
# Status objects, RBAC's verbs and messages, PATCH's media types, resourceVersion, Events), and
# real kubectl clients against it: Debian's kubernetes-client and, where the PATH has another
# (newer) kubectl, that one too. A kubectl that works against the stand-in as against a cluster
# (discovery, tables, annotate, label, its Forbidden message) is the proof that the stand-in
# answers as Kubernetes does, for what the mirror asks.

load helpers
load ../api/standin

NODE=gpu-node-1

setup_file() {
	standin_start
}

teardown_file() {
	standin_stop
}

setup() {
	standin_vars
	standin_reset
	K=$BATS_TEST_TMPDIR
	NODEF=$STORE/api/v1/nodes/$NODE.json
	jq -n --arg n "$NODE" '{apiVersion: "v1", kind: "Node", metadata: {name: $n,
		uid: "5f0c3a6e-9d1b-4c2e-8a7f-0123456789ab", resourceVersion: "7",
		creationTimestamp: "2026-01-01T00:00:00Z", labels: {"kubernetes.io/hostname": $n},
		annotations: {"node.alpha.kubernetes.io/ttl": "0"}},
		status: {conditions: [{type: "Ready", status: "True"}], nodeInfo: {kubeletVersion: "v1.32.1"}}}' >"$NODEF"
}

# Real kubectl clients (the tests at the end).

# The fixture host of a node that runs vm-passthrough (its state.json), for the mirror to
# publish its KubeVirt entries from.
vm_host() {
	HOST=$K/root
	"$TOP/tests/fixture/mkfixture" "$HOST" workstation >/dev/null
	mkdir -p "$HOST/etc/gpuvm" "$HOST/proc/sys/kernel/random"
	printf 'mode=vm-passthrough\n' >"$HOST/etc/gpuvm/gpuvm.conf"
	echo 11111111-1111-1111-1111-111111111111 >"$HOST/proc/sys/kernel/random/boot_id"
	"$GPUVM" --root "$HOST" --cmdline "" apply >/dev/null 2>&1
	[ "$(jq -r .mode "$HOST/run/gpuvm/state.json")" = vm-passthrough ]
}

# kubectl_checks KUBECTL: what the mirror's calls are, made by kubectl, as the mirror's
# ServiceAccount; a refused verb; the fleet's KubeVirt patch from `kubectl get nodes -o json`.
kubectl_checks() {
	local k=$1
	kubeconfig
	kc() {
		run --separate-stderr "$k" --kubeconfig "$KC" --cache-dir "$K/kcache" "$@"
	}
	kc version --client
	echo "# $k: $(head -n 1 <<<"$output")" >&3
	# get node: discovery, then the Node as the server's Table
	kc get node "$NODE"
	assert_success
	[[ "${lines[0]}" =~ ^NAME\ +STATUS\ +ROLES\ +AGE\ +VERSION$ ]]
	[[ "${lines[1]}" =~ ^gpu-node-1\ +Ready\ +\<none\>\ +[0-9]+[smhd]\ +v1\.32\.1$ ]]
	# annotate and label: a GET and a merge patch each, allowed by the shipped RBAC
	kc annotate node "$NODE" gpuvm.dev/requested=vm-passthrough@b1 --overwrite
	assert_success
	[ "$output" = "node/$NODE annotated" ]
	[ "$(jq -r '.metadata.annotations["gpuvm.dev/requested"]' "$NODEF")" = vm-passthrough@b1 ]
	kc label node "$NODE" nvidia.com/gpu.workload.config=vm-passthrough --overwrite
	assert_success
	[ "$output" = "node/$NODE labeled" ]
	[ "$(jq -r '.metadata.labels["nvidia.com/gpu.workload.config"]' "$NODEF")" = vm-passthrough ]
	kc annotate node "$NODE" gpuvm.dev/requested-
	assert_success
	[ "$(jq -r '.metadata.annotations | has("gpuvm.dev/requested")' "$NODEF")" = false ]
	[ "$(requests '.method == "PATCH"' | jq -r '"\(.content_type) \(.code) \(.user)"' | sort -u)" = \
		"application/merge-patch+json 200 $SA_USER" ]
	[ "$(jq -r .metadata.resourceVersion "$NODEF")" = 10 ]
	# refused: the mirror's ServiceAccount may not list events or delete nodes; kubectl prints
	# the Status
	kc get events -n default
	assert_failure
	[ "$stderr" = "Error from server (Forbidden): events is forbidden: User \"$SA_USER\" cannot list resource \"events\" in API group \"\" in the namespace \"default\"" ]
	kc delete node "$NODE"
	assert_failure
	[ "$stderr" = "Error from server (Forbidden): nodes \"$NODE\" is forbidden: User \"$SA_USER\" cannot delete resource \"nodes\" in API group \"\" at the cluster scope" ]
	kc annotate node nowhere a.b/c=d --overwrite
	assert_failure
	[ "$stderr" = 'Error from server (NotFound): nodes "nowhere" not found' ]
	kc --token=wrong get node "$NODE"
	assert_failure
	[[ "$stderr" == *"error: You must be logged in to the server (Unauthorized)"* ]]
	# the fleet: the mirror publishes this node's KubeVirt entries through the stand-in; kubectl
	# lists the nodes (as an admin); gpuvm-kubevirt-patch makes the KubeVirt CR's patch of it
	vm_host
	jq -n '{apiVersion: "v1", kind: "Node", metadata: {name: "cpu-1"}}' >"$STORE/api/v1/nodes/cpu-1.json"
	run env NODE_NAME="$NODE" GPUVM_HOST="$HOST" GPUVM="$GPUVM" GPUVM_API_SERVER="$SERVER" \
		GPUVM_API_TOKEN_FILE="$API/token" GPUVM_API_CA_FILE="$API/tls/ca.crt" \
		GPUVM_BOOT_ID_FILE="$HOST/proc/sys/kernel/random/boot_id" GPUVM_REBOOT_SENTINEL=none \
		GPUVM_KUBEVIRT_CMD="'$GPUVM' --root '$HOST' --cmdline '' kubevirt --json" \
		"$TOP/mirror/gpuvm-label-mirror" --once
	assert_success
	assert_output --partial "annotated gpuvm.dev/kubevirt: mode vm-passthrough, 1 PCI and 0 mediated entries (nvidia.com/1e87)"
	run --separate-stderr "$k" --kubeconfig "$KC" --cache-dir "$K/kcache" --context admin get nodes -o json
	assert_success
	printf '%s\n' "$output" >"$K/nodes.json"
	[ "$(jq -r '[.kind, (.items | map("\(.kind) \(.metadata.name)") | join(","))] | join(" ")' "$K/nodes.json")" = "List Node cpu-1,Node $NODE" ]
	run --separate-stderr "$TOP/mirror/gpuvm-kubevirt-patch" --replace "$K/nodes.json"
	assert_success
	[ "$(jqc '.spec.configuration.permittedHostDevices.pciHostDevices')" = \
		'[{"pciVendorSelector":"10DE:1E87","resourceName":"nvidia.com/1e87","externalResourceProvider":true}]' ]
}

# ---- the stand-in, with curl ---------------------------------------------------------------------

@test "stand-in: a bearer token it knows, else 401 Unauthorized (none, a wrong one)" {
	call none GET "/api/v1/nodes/$NODE"
	status_is 401 Unauthorized Unauthorized
	call wrong-token GET "/api/v1/nodes/$NODE"
	status_is 401 Unauthorized Unauthorized
	call mirror-token GET "/api/v1/nodes/$NODE"
	[ "$code" = 200 ]
	# what the server adds to an object: uid, resourceVersion as stored, omitempty
	[ "$(jqr '"\(.kind) \(.metadata.name) \(.metadata.uid) \(.metadata.resourceVersion)"')" = \
		"Node $NODE 5f0c3a6e-9d1b-4c2e-8a7f-0123456789ab 7" ]
	# the recorded request
	[ "$(requests | jq -r '"\(.method) \(.path) \(.code) \(.user // "-")"')" = "$(printf '%s\n' \
		"GET /api/v1/nodes/$NODE 401 -" "GET /api/v1/nodes/$NODE 401 -" "GET /api/v1/nodes/$NODE 200 $SA_USER")" ]
}

@test "stand-in: RBAC from mirror/deploy's rules, verbs as the API maps them, the API's Forbidden Status" {
	u=$SA_USER
	# list and watch on nodes: granted (the mirror watches its own node; RBAC cannot name it)
	call mirror-token GET /api/v1/nodes
	[ "$code" = 200 ]
	call mirror-token GET '/api/v1/nodes?watch=1&timeoutSeconds=1'
	[ "$code" = 200 ]
	rbac_sed 's/verbs: \["get", "list", "watch", "patch"\]/verbs: ["get", "patch"]/'
	call mirror-token GET /api/v1/nodes
	status_is 403 Forbidden "nodes is forbidden: User \"$u\" cannot list resource \"nodes\" in API group \"\" at the cluster scope"
	[ "$(jq -c .details <<<"$output")" = '{"kind":"nodes"}' ]
	call mirror-token GET '/api/v1/nodes?watch=1'
	status_is 403 Forbidden "nodes is forbidden: User \"$u\" cannot watch resource \"nodes\" in API group \"\" at the cluster scope"
	ln -sfn "$API/rbac.shipped.yaml" "$API/rbac.yaml"
	call mirror-token DELETE "/api/v1/nodes/$NODE"
	status_is 403 Forbidden "nodes \"$NODE\" is forbidden: User \"$u\" cannot delete resource \"nodes\" in API group \"\" at the cluster scope"
	[ "$(jq -c .details <<<"$output")" = "{\"kind\":\"nodes\",\"name\":\"$NODE\"}" ]
	call mirror-token DELETE /api/v1/nodes
	status_is 403 Forbidden "nodes is forbidden: User \"$u\" cannot deletecollection resource \"nodes\" in API group \"\" at the cluster scope"
	call mirror-token PUT "/api/v1/nodes/$NODE" application/json '{}'
	status_is 403 Forbidden "nodes \"$NODE\" is forbidden: User \"$u\" cannot update resource \"nodes\" in API group \"\" at the cluster scope"
	call mirror-token POST /api/v1/nodes application/json '{}'
	status_is 403 Forbidden "nodes is forbidden: User \"$u\" cannot create resource \"nodes\" in API group \"\" at the cluster scope"
	call mirror-token PATCH "/api/v1/nodes/$NODE/status" application/merge-patch+json '{}'
	status_is 403 Forbidden "nodes \"$NODE\" is forbidden: User \"$u\" cannot patch resource \"nodes/status\" in API group \"\" at the cluster scope"
	call mirror-token GET /apis/nvidia.com/v1/clusterpolicies/cluster-policy
	status_is 403 Forbidden "clusterpolicies.nvidia.com \"cluster-policy\" is forbidden: User \"$u\" cannot get resource \"clusterpolicies\" in API group \"nvidia.com\" at the cluster scope"
	# granted: get and patch on nodes, list on clusterpolicies (404: no CRD), create on events in default
	call mirror-token GET /apis/nvidia.com/v1/clusterpolicies
	status_is 404 NotFound "the server could not find the requested resource"
	ev='{"apiVersion": "v1", "kind": "Event", "metadata": {"generateName": "n."}, "reason": "R", "involvedObject": {"kind": "Node", "name": "n"}}'
	call mirror-token POST /api/v1/namespaces/kube-system/events application/json "$ev"
	status_is 403 Forbidden "events is forbidden: User \"$u\" cannot create resource \"events\" in API group \"\" in the namespace \"kube-system\""
	call mirror-token GET /api/v1/namespaces/default/events
	status_is 403 Forbidden "events is forbidden: User \"$u\" cannot list resource \"events\" in API group \"\" in the namespace \"default\""
	# the verbs recorded as the API's authorizer sees them
	[ "$(requests | jq -r .verb | tr '\n' ' ')" = "list watch list watch delete deletecollection update create patch get list create list " ]
	# discovery: every authenticated user (system:discovery)
	call mirror-token GET /api/v1
	[ "$code" = 200 ]
	[ "$(jqr '[.resources[].name] | join(",")')" = events,namespaces,nodes ]
}

@test "stand-in: resourceNames, a binding to a role that is not there, the rules of an edited copy" {
	rbac_sed 's/verbs: \["get", "list", "watch", "patch"\]/verbs: ["get", "patch"]\n    resourceNames: ["other-node"]/'
	call mirror-token GET "/api/v1/nodes/$NODE"
	status_is 403 Forbidden "nodes \"$NODE\" is forbidden: User \"$SA_USER\" cannot get resource \"nodes\" in API group \"\" at the cluster scope"
	cp "$NODEF" "$STORE/api/v1/nodes/other-node.json"
	call mirror-token GET /api/v1/nodes/other-node
	[ "$code" = 200 ]
	# the ClusterRole gone, its binding left: the RBAC authorizer's reason is appended
	awk '/^---$/ { n++ } !(n == 1)' "$API/rbac.shipped.yaml" >"$API/rbac.copy.yaml"
	[ "$(/usr/bin/python3 "$TOP/tests/api/kube-api-standin" --yaml "$API/rbac.copy.yaml" |
		jq -r '[.[] | select(.kind == "ClusterRole") | .metadata.name] | join(",")')" = gpuvm-label-mirror-clusterpolicy ]
	ln -sfn "$API/rbac.copy.yaml" "$API/rbac.yaml"
	call mirror-token GET "/api/v1/nodes/$NODE"
	status_is 403 Forbidden "nodes \"$NODE\" is forbidden: User \"$SA_USER\" cannot get resource \"nodes\" in API group \"\" at the cluster scope: RBAC: clusterrole.rbac.authorization.k8s.io \"gpuvm-label-mirror\" not found"
}

@test "stand-in: PATCH as the API takes it: merge, strategic merge (core types), JSON patch; 415 otherwise" {
	call mirror-token PATCH "/api/v1/nodes/$NODE" application/merge-patch+json \
		'{"metadata": {"annotations": {"gpuvm.dev/a": "1", "node.alpha.kubernetes.io/ttl": null}}}'
	[ "$code" = 200 ]
	[ "$(jqc '[.metadata.annotations, .metadata.resourceVersion]')" = '[{"gpuvm.dev/a":"1"},"8"]' ]
	[ "$(jq -c .metadata.annotations "$NODEF")" = '{"gpuvm.dev/a":"1"}' ]
	# the same again: nothing changed, no new resourceVersion
	call mirror-token PATCH "/api/v1/nodes/$NODE" application/merge-patch+json '{"metadata": {"annotations": {"gpuvm.dev/a": "1"}}}'
	[ "$(jqr .metadata.resourceVersion)" = 8 ]
	call mirror-token PATCH "/api/v1/nodes/$NODE" 'application/strategic-merge-patch+json; charset=utf-8' '{"metadata": {"labels": {"l": "v"}}}'
	[ "$code" = 200 ]
	[ "$(jqr .metadata.labels.l)" = v ]
	call mirror-token PATCH "/api/v1/nodes/$NODE" application/json-patch+json \
		'[{"op": "test", "path": "/metadata/labels/l", "value": "v"}, {"op": "add", "path": "/metadata/annotations/gpuvm.dev~1b", "value": "2"}, {"op": "remove", "path": "/metadata/labels/l"}]'
	[ "$code" = 200 ]
	[ "$(jqc '[.metadata.annotations["gpuvm.dev/b"], (.metadata.labels | has("l")), .metadata.resourceVersion]')" = '["2",false,"10"]' ]
	call mirror-token PATCH "/api/v1/nodes/$NODE" application/json-patch+json '[{"op": "test", "path": "/metadata/name", "value": "x"}]'
	[ "$code" = 422 ]
	for t in application/json application/apply-patch+yaml text/plain ''; do
		call mirror-token PATCH "/api/v1/nodes/$NODE" "$t" '{"metadata": {"annotations": {"gpuvm.dev/c": "3"}}}'
		status_is 415 UnsupportedMediaType "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json"
	done
	# a custom resource takes no strategic merge patch
	mkdir -p "$STORE/apis/nvidia.com/v1/clusterpolicies"
	echo '{"metadata": {"name": "cluster-policy"}, "spec": {}}' >"$STORE/apis/nvidia.com/v1/clusterpolicies/cluster-policy.json"
	call admin-token PATCH /apis/nvidia.com/v1/clusterpolicies/cluster-policy application/strategic-merge-patch+json '{"spec": {"x": 1}}'
	status_is 415 UnsupportedMediaType "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json"
	[ "$(jq -c .metadata.annotations "$NODEF")" = '{"gpuvm.dev/a":"1","gpuvm.dev/b":"2"}' ]
}

@test "stand-in: what a patch may not leave: a stale resourceVersion (409), a bad label (422), a number for a string (400), another name" {
	call mirror-token PATCH "/api/v1/nodes/$NODE" application/merge-patch+json '{"metadata": {"resourceVersion": "3", "labels": {"a": "b"}}}'
	status_is 409 Conflict "Operation cannot be fulfilled on nodes \"$NODE\": the object has been modified; please apply your changes to the latest version and try again"
	call mirror-token PATCH "/api/v1/nodes/$NODE" application/merge-patch+json '{"metadata": {"resourceVersion": "7", "labels": {"a": "b"}}}'
	[ "$code" = 200 ]
	call mirror-token PATCH "/api/v1/nodes/$NODE" application/merge-patch+json '{"metadata": {"labels": {"nvidia.com/gpu.workload.config": "vm passthrough"}}}'
	[ "$code" = 422 ]
	[ "$(jqr '"\(.reason) \(.details.causes[0].field)"')" = "Invalid metadata.labels" ]
	call mirror-token PATCH "/api/v1/nodes/$NODE" application/merge-patch+json '{"metadata": {"annotations": {"Bad Key/x": "1"}}}'
	[ "$code" = 422 ]
	call mirror-token PATCH "/api/v1/nodes/$NODE" application/merge-patch+json '{"metadata": {"annotations": {"gpuvm.dev/n": 1}}}'
	[ "$code" = 400 ]
	call mirror-token PATCH "/api/v1/nodes/$NODE" application/merge-patch+json '{"metadata": {"name": "other"}}'
	status_is 400 BadRequest "the name of the object (other) does not match the name on the URL ($NODE)"
	call mirror-token PATCH "/api/v1/nodes/$NODE" application/merge-patch+json 'not json'
	[ "$code" = 400 ]
	call mirror-token PATCH /api/v1/nodes/nowhere application/merge-patch+json '{}'
	status_is 404 NotFound 'nodes "nowhere" not found'
	[ "$(jq -c '[.metadata.labels.a, .metadata.resourceVersion]' "$NODEF")" = '["b","8"]' ]
}

@test "stand-in: Events as core/v1 takes them: generateName, the namespace of a Node's events, 201" {
	ev='{"apiVersion": "v1", "kind": "Event", "metadata": {"generateName": "gpu-node-1.gpuvm-"}, "type": "Normal", "reason": "R", "message": "m", "involvedObject": {"apiVersion": "v1", "kind": "Node", "name": "gpu-node-1"}}'
	call mirror-token POST /api/v1/namespaces/default/events application/json "$ev"
	[ "$code" = 201 ]
	[[ "$(jqr .metadata.name)" =~ ^gpu-node-1\.gpuvm-[bcdfghjklmnpqrstvwxz2456789]{5}$ ]]
	[ -e "$STORE/api/v1/namespaces/default/events/$(jqr .metadata.name).json" ]
	[ "$(jqr .metadata.namespace)" = default ]
	# a cluster-scoped object's Event in another namespace: invalid (an admin may try)
	call admin-token POST /api/v1/namespaces/kube-system/events application/json "$ev"
	[ "$code" = 422 ]
	[ "$(jqr '"\(.reason) \(.details.causes[0].field)"')" = "Invalid involvedObject.namespace" ]
	call mirror-token POST /api/v1/namespaces/default/events application/json '{"apiVersion": "v1", "kind": "Event", "metadata": {}, "involvedObject": {"kind": "Node", "name": "n"}}'
	[ "$code" = 422 ]
	[ "$(jqr .details.causes[0].message)" = "Required value: name or generateName is required" ]
	call mirror-token POST /api/v1/namespaces/default/events application/json "$(jq -c '.metadata.namespace = "kube-system"' <<<"$ev")"
	status_is 400 BadRequest "the namespace of the provided object does not match the namespace sent on the request"
	call mirror-token POST /api/v1/namespaces/default/events application/merge-patch+json "$ev"
	[ "$code" = 415 ]
	call admin-token POST /api/v1/namespaces/nowhere/events application/json "$ev"
	status_is 404 NotFound 'namespaces "nowhere" not found'
	# the request log has what was sent
	[ "$(requests '.method == "POST"' | head -n 1 | jq -r '"\(.content_type) \(.body | fromjson | .reason)"')" = "application/json R" ]
}

@test "stand-in: faults a test asks for (a status, a delay, a body that is not JSON); a CRD served while its folder is there" {
	fault '{"path": "/api/v1/nodes/gpu-node-1", "code": 503, "reason": "ServiceUnavailable", "message": "later"}'
	call mirror-token GET "/api/v1/nodes/$NODE"
	status_is 503 ServiceUnavailable later
	fault '{"path": "/api/v1/nodes/gpu-node-1", "text": "<html>"}'
	call mirror-token GET "/api/v1/nodes/$NODE"
	[ "$code" = 200 ] && [ "$output" = "<html>" ]
	fault '{"path": "/api/v1/nodes/gpu-node-1", "delay": 2}'
	run curl -sS --max-time 1 --cacert "$API/tls/ca.crt" -H 'Authorization: Bearer mirror-token' "$SERVER/api/v1/nodes/$NODE"
	assert_failure 28
	rm "$API/faults.json"
	# the built-in groups first (resource.k8s.io), then the CRDs'
	call admin-token GET /apis
	[ "$(jqr '[.groups[].name] | join(",")')" = resource.k8s.io ]
	mkdir -p "$STORE/apis/nvidia.com/v1/clusterpolicies"
	call admin-token GET /apis
	[ "$(jqr '[.groups[].preferredVersion.groupVersion] | join(",")')" = resource.k8s.io/v1,nvidia.com/v1 ]
	call mirror-token GET /apis/nvidia.com/v1/clusterpolicies
	[ "$code" = 200 ]
	[ "$(jqc '[.kind, .items]')" = '["ClusterPolicyList",[]]' ]
}

@test "stand-in: its YAML reader reads the shipped manifests as PyYAML does, and refuses what it does not know" {
	need python3-yaml /usr/bin/python3 -c 'import yaml'
	for f in "$TOP"/mirror/deploy/base/*.yaml "$TOP"/mirror/deploy/components/gpu-operator/rbac.yaml \
		"$TOP"/mirror/deploy/components/live/daemonset.yaml; do
		[ "${f##*/}" != kustomization.yaml ] || continue
		a=$(/usr/bin/python3 "$TOP/tests/api/kube-api-standin" --yaml "$f" | jq -S .)
		b=$(/usr/bin/python3 -c 'import json, sys, yaml; print(json.dumps([d for d in yaml.safe_load_all(open(sys.argv[1])) if d is not None]))' "$f" | jq -S .)
		[ "$a" = "$b" ] || { echo "$f differs"; return 1; }
	done
	printf 'a: |\n  text\n' >"$K/block.yaml"
	run /usr/bin/python3 "$TOP/tests/api/kube-api-standin" --yaml "$K/block.yaml"
	assert_failure
	assert_output --partial "block.yaml:1: unsupported YAML ('|')"
}

# ---- real kubectl clients ------------------------------------------------------------------------

@test "kubectl of Debian's kubernetes-client against the stand-in: get, annotate, label, Forbidden, the fleet's patch" {
	k=$(debian_kubectl)
	need "Debian's kubernetes-client (or DEBIAN_KUBECTL: tests/api/README.md)" test -x "${k:-/nonexistent}"
	kubectl_checks "$k"
}

@test "kubectl on PATH (a newer client) against the stand-in: the same" {
	k=$(command -v kubectl) || skip "no kubectl on PATH but Debian's, if any"
	d=$(debian_kubectl)
	if [ -n "$d" ] && [ "$(readlink -f "$k")" = "$(readlink -f "$d")" ]; then
		skip "the kubectl on PATH is Debian's, checked by the test before"
	fi
	kubectl_checks "$k"
}
