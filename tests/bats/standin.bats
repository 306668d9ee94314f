#!/usr/bin/env bats
# shellcheck disable=SC2154 # $stderr and $output are set by bats' run
# The API stand-in's watches and its resource.k8s.io/v1 (DRA) resources, which the label
# mirror's watch and a DRA kubelet plugin need: checked with curl against what the Kubernetes
# API server answers (the stream's lines, resourceVersion, the history's 410 Gone, bookmarks,
# RBAC's watch verb, faults; ResourceSlice's validation, ResourceClaim's status subresource),
# and with real kubectl clients (Debian's and, where the PATH has another, that one too):
# `get -w` sees a change a test makes to the store, `get`, `apply` and `delete --field-selector`
# of ResourceSlices. kubeapi.bats checks the rest of the stand-in (tests/api/README.md).

load helpers
load ../api/standin

NODE=gpu-node-1

setup_file() {
	# bookmarks every 0.3 s, five changes kept for watches, no watch longer than 20 s
	standin_start --bookmark-seconds 0.3 --watch-history 5 --watch-max-seconds 20
}

teardown_file() {
	standin_stop
}

setup() {
	standin_vars
	standin_reset
	K=$BATS_TEST_TMPDIR
	NODES=$STORE/api/v1/nodes
	NODEF=$NODES/$NODE.json
	node "$NODE" 7 '{"a": "1"}'
}

teardown() {
	if [ -n "${WPID-}" ]; then
		kill "$WPID" 2>/dev/null || true
	fi
}

# node NAME RV LABELS: a Node file in the store, Ready, its resourceVersion RV.
node() {
	jq -n --arg n "$1" --arg rv "$2" --argjson l "$3" '{apiVersion: "v1", kind: "Node", metadata: {name: $n,
		resourceVersion: $rv, creationTimestamp: "2026-01-01T00:00:00Z", labels: $l},
		status: {conditions: [{type: "Ready", status: "True"}], nodeInfo: {kubeletVersion: "v1.34.0"}}}' >"$NODES/$1.json"
}

# edit FILE JQ: a test's own change to a store file (a new file put in place, as jq > tmp; mv).
edit() {
	jq "$2" "$1" >"$K/edit.json" && mv "$K/edit.json" "$1"
}

# watch_bg OUT PATH: a watch with curl in the background ($WPID, its exit status `wait`'s), as
# the admin: its body in OUT, its headers in OUT.hdr.
watch_bg() {
	curl -sS -N --cacert "$API/tls/ca.crt" -H 'Authorization: Bearer admin-token' -D "$1.hdr" \
		-o "$1" "$SERVER$2" 3>&- &
	WPID=$!
}

# lines_at_least N FILE: wait (5 s at most) until FILE has N lines.
lines_at_least() {
	local n=0
	while [ "$n" -lt 100 ]; do
		[ -e "$2" ] && [ "$(wc -l <"$2")" -ge "$1" ] && return 0
		sleep 0.05
		n=$((n + 1))
	done
	echo "$2 has not $1 lines: $(cat "$2" 2>/dev/null)"
	return 1
}

# events FILE: the watch events of FILE, one "TYPE NAME RV LABEL-a" a line, bookmarks left out.
events() {
	jq -r 'select(.type != "BOOKMARK") | "\(.type) \(.object.metadata.name) \(.object.metadata.resourceVersion) \(.object.metadata.labels.a)"' "$1"
}

# ---- watch ---------------------------------------------------------------------------------------

@test "watch: a chunked stream, one event a chunk and a line: the nodes there, a test's edit of the file, a patch, a deletion" {
	watch_bg "$K/w" '/api/v1/nodes?watch=1&timeoutSeconds=2'
	lines_at_least 1 "$K/w"
	# a test's own edit of the file (it keeps resourceVersion 7 in it): the next one, 8
	edit "$NODEF" '.metadata.labels.a = "2"'
	call admin-token PATCH "/api/v1/nodes/$NODE" application/merge-patch+json '{"metadata": {"labels": {"a": "3"}}}'
	[ "$(jqr .metadata.resourceVersion)" = 9 ]
	rm "$NODEF"
	wait "$WPID"
	[ "$(events "$K/w")" = "$(printf '%s\n' "ADDED $NODE 7 1" "MODIFIED $NODE 8 2" "MODIFIED $NODE 9 3" "DELETED $NODE 10 3")" ]
	# the lines as the API server writes them: type and the whole object
	[ "$(head -n 1 "$K/w")" = '{"type":"ADDED","object":{"apiVersion":"v1","kind":"Node","metadata":{"name":"gpu-node-1","resourceVersion":"7","creationTimestamp":"2026-01-01T00:00:00Z","labels":{"a":"1"},"uid":"'"$(jq -r .object.metadata.uid "$K/w" | head -n 1)"'"},"status":{"conditions":[{"type":"Ready","status":"True"}],"nodeInfo":{"kubeletVersion":"v1.34.0"}}}}' ]
	grep -qix 'content-type: application/json.' "$K/w.hdr"
	grep -qix 'transfer-encoding: chunked.' "$K/w.hdr"
	# one request in the log, written when the stream ended: events and bytes sent
	[ "$(requests '.verb == "watch"' | jq -r '"\(.method) \(.path) \(.code) \(.events) \(.bytes) \(.end)"')" = \
		"GET /api/v1/nodes 200 4 $(wc -c <"$K/w") timeout" ]
}

@test "watch: each event its own chunk; a new store (standin_reset) ends the watches, unrecorded" {
	curl -sS --raw --cacert "$API/tls/ca.crt" -H 'Authorization: Bearer admin-token' \
		"$SERVER/api/v1/nodes?watch=1&timeoutSeconds=1" >"$K/raw"
	# "SIZE\r", the line, "\r" (the chunk's end), then the last chunk "0\r", "\r"
	tr -d '\r' <"$K/raw" >"$K/lf"
	[ "$(sed -n 1p "$K/lf")" = "$(printf '%x' "$(sed -n 2p "$K/lf" | wc -c)")" ]
	[ "$(sed -n '3,$p' "$K/lf" | tr '\n' ' ')" = " 0  " ]
	# a watch open while the test starts over with a new store: it ends at once
	watch_bg "$K/w" '/api/v1/nodes?watch=1&timeoutSeconds=10'
	lines_at_least 1 "$K/w"
	standin_reset
	node "$NODE" 7 '{}'
	SECONDS=0
	wait "$WPID"
	[ "$SECONDS" -lt 5 ]
	# (a look of the server's while rm -rf was emptying the old store saw the node deleted)
	[ "$(events "$K/w" | sed 's/ .*//' | tr '\n' ' ')" = "ADDED " ] || [ "$(events "$K/w" | sed 's/ .*//' | tr '\n' ' ')" = "ADDED DELETED " ]
	call admin-token GET "/api/v1/nodes/$NODE"
	[ "$(jqr .metadata.resourceVersion)" = 7 ]
	[ "$(requests '.verb == "watch"')" = "" ]
	# a client that hangs up: seen, its watch ended and written to the log
	watch_bg "$K/w2" '/api/v1/nodes?watch=1&timeoutSeconds=10'
	lines_at_least 1 "$K/w2"
	kill "$WPID"
	SECONDS=0
	until [ -n "$(requests '.verb == "watch"')" ] || [ "$SECONDS" -ge 3 ]; do
		sleep 0.05
	done
	[ "$(requests '.verb == "watch"' | jq -r '"\(.events) \(.end)"')" = "1 client" ]
}

@test "watch from a resourceVersion: the changes after it; older than the history: ERROR 410 Expired; newer: ERROR 504" {
	for v in 2 3 4 5 6 7; do
		call admin-token PATCH "/api/v1/nodes/$NODE" application/merge-patch+json "{\"metadata\": {\"labels\": {\"a\": \"$v\"}}}"
	done
	[ "$(jqr .metadata.resourceVersion)" = 13 ]
	# a file a test writes with a resourceVersion higher than any: that one
	node cpu-1 100 '{"a": "x"}'
	call admin-token GET /api/v1/nodes
	[ "$(jqr '"\(.kind) \(.metadata.resourceVersion) \([.items[].metadata.resourceVersion] | join(","))"')" = "NodeList 100 100,13" ]
	# the five changes kept: 10, 11, 12, 13 and 100; from 10 on
	call admin-token GET '/api/v1/nodes?watch=1&resourceVersion=10&timeoutSeconds=1'
	[ "$code" = 200 ]
	printf '%s\n' "$output" >"$K/w"
	[ "$(events "$K/w")" = "$(printf '%s\n' "MODIFIED $NODE 11 5" "MODIFIED $NODE 12 6" "MODIFIED $NODE 13 7" "ADDED cpu-1 100 x")" ]
	# 8 is older than what is kept (9 and before are not): one ERROR event, a Status 410
	# Expired, and the stream's end
	call admin-token GET '/api/v1/nodes?watch=1&resourceVersion=8'
	[ "$code" = 200 ]
	[ "$output" = '{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 8 (9)","reason":"Expired","code":410}}' ]
	call admin-token GET '/api/v1/nodes?watch=1&resourceVersion=101'
	[ "$(jqr '"\(.type) \(.object.code) \(.object.reason) \(.object.message) \(.object.details.retryAfterSeconds)"')" = \
		"ERROR 504 Timeout Too large resource version: 101, current: 100 1" ]
	# a list of an exact resourceVersion the store no longer has: 410; of one it has not yet: 504
	call admin-token GET '/api/v1/nodes?resourceVersion=13&resourceVersionMatch=Exact'
	status_is 410 Expired "The resourceVersion for the provided list is too old."
	call admin-token GET '/api/v1/nodes?resourceVersion=101'
	status_is 504 Timeout "Too large resource version: 101, current: 100"
	[ "$(requests '.verb == "watch"' | jq -r '"\(.events) \(.end)"' | tr '\n' ' ')" = "4 timeout 1 error 1 error " ]
	# Events count on their own, as in an etcd of their own: the nodes' numbers do not move
	ev='{"apiVersion": "v1", "kind": "Event", "metadata": {"generateName": "n."}, "type": "Normal", "reason": "R", "involvedObject": {"kind": "Node", "name": "gpu-node-1"}}'
	call admin-token POST /api/v1/namespaces/default/events application/json "$ev"
	[ "$(jqr .metadata.resourceVersion)" = 1 ]
	call admin-token PATCH "/api/v1/nodes/$NODE" application/merge-patch+json '{"metadata": {"labels": {"a": "8"}}}'
	[ "$(jqr .metadata.resourceVersion)" = 101 ]
	call admin-token GET '/api/v1/namespaces/default/events?watch=1&resourceVersion=2'
	[ "$(jqr '"\(.type) \(.object.message)"')" = "ERROR Too large resource version: 2, current: 1" ]
}

@test "watch: bookmarks (allowWatchBookmarks), sendInitialEvents' last bookmark, selectors' ADDED and DELETED" {
	node cpu-1 20 '{}'
	watch_bg "$K/w" '/api/v1/nodes?watch=1&labelSelector=a%20in%20(1,2)&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=2'
	watch_bg "$K/f" '/api/v1/nodes?watch=1&fieldSelector=metadata.name%3Dcpu-1&timeoutSeconds=2'
	watch_bg "$K/n" '/api/v1/nodes?watch=1&sendInitialEvents=false&resourceVersionMatch=NotOlderThan&timeoutSeconds=2'
	lines_at_least 2 "$K/w"
	lines_at_least 1 "$K/f"
	# (its headers: it has started, at the store as it is)
	SECONDS=0
	until [ -s "$K/n.hdr" ] || [ "$SECONDS" -ge 5 ]; do
		sleep 0.05
	done
	# cpu-1 comes into the label selector, gpu-node-1 leaves it
	edit "$NODES/cpu-1.json" '.metadata.labels.a = "2"'
	call admin-token PATCH "/api/v1/nodes/$NODE" application/merge-patch+json '{"metadata": {"labels": {"a": "9"}}}'
	wait
	# what was there, the end of the initial events, the changes; the node that left: as it was
	[ "$(sed -n 2p "$K/w")" = '{"type":"BOOKMARK","object":{"kind":"Node","apiVersion":"v1","metadata":{"resourceVersion":"20","annotations":{"k8s.io/initial-events-end":"true"}}}}' ] ||
		{ cat "$K/w"; return 1; }
	[ "$(events "$K/w")" = "$(printf '%s\n' "ADDED $NODE 7 1" "ADDED cpu-1 21 2" "DELETED $NODE 22 1")" ]
	# a bookmark every 0.3 s (--bookmark-seconds) of the resourceVersion the watch is at
	[ "$(grep -c '"BOOKMARK"' "$K/w")" -ge 3 ]
	[ "$(grep '"BOOKMARK"' "$K/w" | tail -n 1)" = '{"type":"BOOKMARK","object":{"kind":"Node","apiVersion":"v1","metadata":{"resourceVersion":"22"}}}' ]
	# the field selector: one node; no bookmarks unasked
	[ "$(events "$K/f")" = "$(printf '%s\n' "ADDED cpu-1 20 null" "MODIFIED cpu-1 21 2")" ]
	# sendInitialEvents=false: the changes only
	[ "$(events "$K/n")" = "$(printf '%s\n' "MODIFIED cpu-1 21 2" "MODIFIED $NODE 22 9")" ]
}

@test "watch: RBAC without it refuses it (403, the name of the field selector); selectors and options the API refuses" {
	u=$SA_USER
	# the shipped rules grant list and watch on nodes (the mirror watches its node): a copy
	# without them
	rbac_sed 's/verbs: \["get", "list", "watch", "patch"\]/verbs: ["get", "patch"]/'
	call mirror-token GET '/api/v1/nodes?watch=1&fieldSelector=metadata.name%3Dgpu-node-1'
	status_is 403 Forbidden "nodes \"$NODE\" is forbidden: User \"$u\" cannot watch resource \"nodes\" in API group \"\" at the cluster scope"
	call mirror-token GET '/api/v1/nodes?watch=true'
	status_is 403 Forbidden "nodes is forbidden: User \"$u\" cannot watch resource \"nodes\" in API group \"\" at the cluster scope"
	# granted watch on that one node (resourceNames): allowed, its stream (here at once the
	# ERROR event of a resourceVersion the store has not reached)
	rbac_sed 's/verbs: \["get", "list", "watch", "patch"\]/verbs: ["get", "patch", "list", "watch"]\n    resourceNames: ["gpu-node-1"]/'
	call mirror-token GET '/api/v1/nodes?watch=1&fieldSelector=metadata.name%3Dgpu-node-1&resourceVersion=99'
	[ "$code" = 200 ]
	[ "$(jqr '"\(.type) \(.object.code)"')" = "ERROR 504" ]
	call mirror-token GET '/api/v1/nodes?watch=1&timeoutSeconds=1'
	[ "$code" = 403 ]
	[ "$(requests | jq -r '"\(.verb) \(.code)"' | tr '\n' ' ')" = "watch 403 watch 403 watch 200 watch 403 " ]
	call admin-token GET '/api/v1/nodes?watch=1&fieldSelector=spec.providerID%3Dx'
	status_is 400 BadRequest "field label not supported: spec.providerID"
	call admin-token GET '/api/v1/nodes?fieldSelector=metadata.name%3Dgpu-node-1,spec.unschedulable%3Dfalse'
	[ "$(jqr '[.items[].metadata.name] | join(",")')" = "$NODE" ]
	# label selectors: cpu-1 has b (empty) and no a; a key not there is not in a set and not V
	node cpu-1 8 '{"b": ""}'
	for sel in 'a' '!b' 'a%20notin%20(2)' 'a!%3D1' 'a%3D%3D1' 'b,a%20in%20(1,2)' 'a%3D1,!b' 'b%3D,!a'; do
		call admin-token GET "/api/v1/nodes?labelSelector=$sel"
		printf '%s %s\n' "$sel" "$(jqr '[.items[].metadata.name] | join(",")')"
	done >"$K/sel"
	[ "$(cat "$K/sel")" = "$(printf '%s\n' "a $NODE" "!b $NODE" "a%20notin%20(2) cpu-1,$NODE" "a!%3D1 cpu-1" \
		"a%3D%3D1 $NODE" "b,a%20in%20(1,2) " "a%3D1,!b $NODE" "b%3D,!a cpu-1")" ]
	call admin-token GET '/api/v1/nodes?labelSelector=a%3E1'
	[ "$code" = 400 ]
	call admin-token GET '/api/v1/nodes?watch=1&sendInitialEvents=true'
	status_is 422 Invalid 'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan'
	call admin-token GET '/api/v1/nodes?resourceVersionMatch=Exact'
	status_is 422 Invalid 'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided'
}

@test "faults on a watch: 429 with Retry-After (once), an ERROR event, a connection cut after N events, 503" {
	fault '{"path": "/api/v1/nodes", "verb": "watch", "code": 429, "reason": "TooManyRequests", "message": "Too many requests, please try again later.", "details": {"retryAfterSeconds": 1}, "headers": {"Retry-After": "1"}, "times": 1}'
	run curl -sS -i --cacert "$API/tls/ca.crt" -H 'Authorization: Bearer admin-token' "$SERVER/api/v1/nodes?watch=1"
	assert_success
	[ "$(head -n 1 <<<"$output" | tr -d '\r')" = "HTTP/1.1 429 Too Many Requests" ]
	grep -qx 'Retry-After: 1.' <<<"$output"
	[ "$(tail -n 1 <<<"$output" | jq -r '"\(.code) \(.reason) \(.details.retryAfterSeconds)"')" = "429 TooManyRequests 1" ]
	# a list of the same path is another verb; and the fault answered its one time
	call admin-token GET /api/v1/nodes
	[ "$code" = 200 ]
	call admin-token GET '/api/v1/nodes?watch=1&resourceVersion=100'
	[ "$code" = 200 ]
	fault '{"path": "/api/v1/nodes", "verb": "watch", "code": 410, "reason": "Expired", "message": "too old resource version: 1 (5)", "error_event": true}'
	call admin-token GET '/api/v1/nodes?watch=1'
	[ "$code" = 200 ]
	[ "$output" = '{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1 (5)","reason":"Expired","code":410}}' ]
	# cut after the first event: no last chunk, curl's error 18
	fault '{"path": "/api/v1/nodes", "verb": "watch", "drop_after_events": 1}'
	run --separate-stderr curl -sS --cacert "$API/tls/ca.crt" -H 'Authorization: Bearer admin-token' "$SERVER/api/v1/nodes?watch=1&timeoutSeconds=5"
	assert_failure 18
	[ "${#lines[@]}" = 1 ]
	[ "$(jq -r .type <<<"${lines[0]}")" = ADDED ]
	[ "$(requests '.verb == "watch"' | tail -n 1 | jq -r '"\(.events) \(.end)"')" = "1 dropped" ]
	# or after S seconds
	fault '{"path": "/api/v1/nodes", "verb": "watch", "drop_after_seconds": 0.3}'
	SECONDS=0
	run --separate-stderr curl -sS --cacert "$API/tls/ca.crt" -H 'Authorization: Bearer admin-token' "$SERVER/api/v1/nodes?watch=1&timeoutSeconds=5"
	assert_failure 18
	[ "$SECONDS" -lt 3 ]
	fault '{"path": "/api/v1/nodes", "verb": "watch", "code": 503, "reason": "ServiceUnavailable", "message": "later"}'
	call admin-token GET '/api/v1/nodes?watch=1'
	status_is 503 ServiceUnavailable later
}

# ---- resource.k8s.io/v1 --------------------------------------------------------------------------

# slice NAME NODE DRIVER [JQ]: a valid ResourceSlice's JSON of NODE's pool, JQ applied.
slice() {
	jq -cn --arg n "$1" --arg node "$2" --arg d "$3" '{apiVersion: "resource.k8s.io/v1", kind: "ResourceSlice",
		metadata: {name: $n}, spec: {driver: $d, nodeName: $node, pool: {name: $node, generation: 1, resourceSliceCount: 1},
		devices: [{name: "gpu-0", attributes: {model: {string: "A100"}, "gpu.example.com/index": {int: 0},
		driverVersion: {version: "1.0.0"}}, capacity: {memory: {value: "80Gi"}}}]}} | '"${4:-.}"
}

@test "resource.k8s.io/v1: discovery, ResourceSlices by spec.nodeName and spec.driver, deletecollection as the kubelet's" {
	call mirror-token GET /apis/resource.k8s.io/v1
	[ "$(jqr '[.resources[] | "\(.name):\(.kind):\(.namespaced)"] | join(" ")')" = \
		"deviceclasses:DeviceClass:false resourceclaims:ResourceClaim:true resourceclaims/status:ResourceClaim:true resourceslices:ResourceSlice:false" ]
	[ "$(jqr '.resources[] | select(.name == "resourceslices") | .verbs | join(",")')" = create,delete,deletecollection,get,list,patch,update,watch ]
	call mirror-token GET /apis/resource.k8s.io
	[ "$(jqc '[.kind, .name, .preferredVersion.groupVersion]')" = '["APIGroup","resource.k8s.io","resource.k8s.io/v1"]' ]
	# a DeviceClass: its selectors' CEL expressions present (not compiled)
	dc='{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu.example.com"}, "spec": {"selectors": [{"cel": {"expression": "device.driver == \"gpu.example.com\""}}]}}'
	call admin-token POST /apis/resource.k8s.io/v1/deviceclasses application/json "$dc"
	[ "$code" = 201 ]
	call admin-token POST /apis/resource.k8s.io/v1/deviceclasses application/json "$(jq -c '.metadata.name = "x" | .spec.selectors[0].cel = {}' <<<"$dc")"
	status_is 422 Invalid 'DeviceClass.resource.k8s.io "x" is invalid: spec.selectors[0].cel.expression: Required value'
	# a create with a resourceVersion: the storage's refusal
	call admin-token POST /apis/resource.k8s.io/v1/deviceclasses application/json "$(jq -c '.metadata.name = "y" | .metadata.resourceVersion = "3"' <<<"$dc")"
	[ "$(jqr '"\(.code) \(.message)"')" = "500 resourceVersion should not be set on objects to be created" ]
	R=/apis/resource.k8s.io/v1/resourceslices
	for s in "n1-a n1 a.example.com" "n1-b n1 b.example.com" "n2-a n2 a.example.com"; do
		# shellcheck disable=SC2086 # the three words
		call admin-token POST "$R" application/json "$(slice $s)"
		[ "$code" = 201 ]
	done
	[ "$(jqr '"\(.apiVersion) \(.kind) \(.metadata.resourceVersion)"')" = "resource.k8s.io/v1 ResourceSlice 11" ]
	call admin-token GET "$R?fieldSelector=spec.nodeName%3Dn1"
	[ "$(jqr '"\(.kind) \([.items[].metadata.name] | join(","))"')" = "ResourceSliceList n1-a,n1-b" ]
	call admin-token GET "$R?fieldSelector=spec.pool.name%3Dn1"
	status_is 400 BadRequest "field label not supported: spec.pool.name"
	# the kubelet's: a node's slices of one driver; then a driver's on every node
	call admin-token DELETE "$R?fieldSelector=spec.nodeName%3Dn1,spec.driver%3Da.example.com"
	[ "$(jqr '"\(.kind) \([.items[].metadata.name] | join(","))"')" = "ResourceSliceList n1-a" ]
	call admin-token DELETE "$R?fieldSelector=spec.driver%3Da.example.com"
	[ "$(jqr '[.items[].metadata.name] | join(",")')" = n2-a ]
	[ "$(cd "$STORE/apis/resource.k8s.io/v1/resourceslices" && echo *)" = n1-b.json ]
	call admin-token DELETE "$R/n1-b"
	[ "$(jqr '"\(.kind) \(.status) \(.details.name) \(.details.group) \(.details.kind)"')" = "Status Success n1-b resource.k8s.io resourceslices" ]
	call admin-token GET "$R/n1-b"
	status_is 404 NotFound 'resourceslices.resource.k8s.io "n1-b" not found'
	# the label mirror's ServiceAccount may not
	call mirror-token GET "$R"
	status_is 403 Forbidden "resourceslices.resource.k8s.io is forbidden: User \"$SA_USER\" cannot list resource \"resourceslices\" in API group \"resource.k8s.io\" at the cluster scope"
}

@test "resource.k8s.io/v1: a ResourceSlice the API server would refuse: 422 Invalid, the field and its message" {
	R=/apis/resource.k8s.io/v1/resourceslices
	label="a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
	cid="a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for validation is '[A-Za-z_][A-Za-z0-9_]*')"
	while IFS='%' read -r change want; do
		call admin-token POST "$R" application/json "$(slice s n1 gpu.example.com "$change")"
		[ "$code" = 422 ] || { echo "$change: $code $output"; return 1; }
		[ "$(jqr '[.details.causes[] | "\(.field): \(.message)"] | join("; ")')" = "$want" ] || {
			echo "$change: $(jqr .message)"
			return 1
		}
	done <<EOF
.spec.driver = "$(printf 'd%.0s' {1..60}).example"%spec.driver: Too long: may not be more than 63 bytes
.spec.pool.name = ""%spec.pool.name: Required value
.spec.pool.generation = -1%spec.pool.generation: Invalid value: -1: must be greater than or equal to zero
.spec.pool.resourceSliceCount = 0%spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero
del(.spec.nodeName)%spec: Required value: exactly one of \`nodeName\`, \`nodeSelector\`, \`allNodes\`, \`perDeviceNodeSelection\` is required
.spec.allNodes = true%spec: Invalid value: "{\`nodeName\`, \`allNodes\`}": exactly one of \`nodeName\`, \`nodeSelector\`, \`allNodes\`, \`perDeviceNodeSelection\` is required, but multiple fields are set
.spec.devices += [.spec.devices[0]]%spec.devices[1].name: Duplicate value: "gpu-0"
.spec.devices[0].name = "GPU_0"%spec.devices[0].name: Invalid value: "GPU_0": $label
.spec.devices = [null]%spec.devices[0].name: Invalid value: "": $label
.spec.devices = [range(129) | {name: "gpu-\(.)"}]%spec.devices: Too many: 129: must have at most 128 items
.spec.devices[0].attributes = ([range(32) | {key: "a\(.)", value: {int: .}}] | from_entries)%spec.devices[0]: Invalid value: 33: the total number of attributes and capacities must not exceed 32
.spec.devices[0].attributes.model = {string: "A100", int: 1}%spec.devices[0].attributes[model]: Invalid value: {"string":"A100","int":1}: exactly one value must be specified
.spec.devices[0].attributes.model = {}%spec.devices[0].attributes[model]: Required value: exactly one value must be specified
.spec.devices[0].attributes.model.string = "$(printf 'x%.0s' {1..65})"%spec.devices[0].attributes[model].string: Too long: may not be more than 64 bytes
.spec.devices[0].attributes["1st"] = {int: 1}%spec.devices[0].attributes[1st]: Invalid value: "1st": $cid
.spec.devices[0].attributes["gpu.example.com/$(printf 'x%.0s' {1..33})"] = {int: 1}%spec.devices[0].attributes[gpu.example.com/$(printf 'x%.0s' {1..33})]: Too long: may not be more than 32 bytes
.spec.perDeviceNodeSelection = true | del(.spec.nodeName)%spec.devices[0]: Required value: exactly one of \`nodeName\`, \`nodeSelector\`, or \`allNodes\` is required when \`perDeviceNodeSelection\` is set to true in the ResourceSlice spec
.spec.devices[0].nodeName = "n1"%spec.devices[0]: Invalid value: "{\`nodeName\`}": \`nodeName\`, \`nodeSelector\` and \`allNodes\` can only be set if \`perDeviceNodeSelection\` is set to true in the ResourceSlice spec
del(.spec.nodeName) | .spec.nodeSelector = {nodeSelectorTerms: []}%spec.nodeSelector.nodeSelectorTerms: Invalid value: []: must have exactly one node selector term
.spec.devices[0].attributes.driverVersion.version = "1.0"%spec.devices[0].attributes[driverVersion].version: Invalid value: "1.0": must be a string compatible with semver.org spec 2.0.0
EOF
	# the Status: the kind with its group, every cause in the message
	call admin-token POST "$R" application/json "$(slice s n1 gpu.example.com '.spec.pool.resourceSliceCount = 0 | .spec.pool.generation = -1')"
	status_is 422 Invalid 'ResourceSlice.resource.k8s.io "s" is invalid: [spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero, spec.pool.generation: Invalid value: -1: must be greater than or equal to zero]'
	[ "$(jqr '"\(.details.kind) \(.details.group) \(.details.name)"')" = "ResourceSlice resource.k8s.io s" ]
	call admin-token POST "$R" application/json "$(slice s n1 gpu.example.com '.spec.pool.generation = "1"')"
	[ "$code" = 400 ]
	# valid; then the driver, the pool and the node may not change
	call admin-token POST "$R" application/json "$(slice s n1 gpu.example.com)"
	[ "$code" = 201 ]
	call admin-token PATCH "$R/s" application/merge-patch+json '{"spec": {"nodeName": "n2"}}'
	status_is 422 Invalid 'ResourceSlice.resource.k8s.io "s" is invalid: spec.nodeName: Invalid value: "n2": field is immutable'
	call admin-token PATCH "$R/s" application/merge-patch+json '{"spec": {"pool": {"generation": 2}}}'
	[ "$code" = 200 ]
}

@test "resource.k8s.io/v1: a ResourceClaim's status only through its status subresource; the results checked" {
	C=/apis/resource.k8s.io/v1/namespaces/default/resourceclaims
	result='{"request": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0"}'
	claim='{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c"}, "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}, "status": {"allocation": {"devices": {"results": ['"$result"']}}}}'
	# create: the status left out, the request's defaults
	call admin-token POST "$C" application/json "$claim"
	[ "$code" = 201 ]
	[ "$(jqc '[.metadata.namespace, .spec.devices.requests[0].exactly, .status]')" = '["default",{"deviceClassName":"gpu.example.com","allocationMode":"ExactCount","count":1},null]' ]
	# a patch of the object does not write the status; of the status, only the status
	call admin-token PATCH "$C/c" application/merge-patch+json '{"metadata": {"labels": {"l": "v"}}, "status": {"allocation": {"devices": {"results": ['"$result"']}}}}'
	[ "$(jqc '[.metadata.labels, .status]')" = '[{"l":"v"},null]' ]
	call admin-token PATCH "$C/c/status" application/merge-patch+json '{"metadata": {"labels": {"l": "w"}}, "status": {"allocation": {"devices": {"results": ['"$result"']}}, "reservedFor": [{"resource": "pods", "name": "p", "uid": "u1"}]}}'
	[ "$code" = 200 ]
	[ "$(jqc '[.metadata.labels, .status.allocation.devices.results[0].device, .metadata.resourceVersion]')" = '[{"l":"v"},"gpu-0","10"]' ]
	# what a DRA kubelet plugin reads
	call admin-token GET "$C/c"
	[ "$(jqr '.status.allocation.devices.results[] | "\(.request) \(.driver) \(.pool) \(.device)"')" = "gpu gpu.example.com n1 gpu-0" ]
	run curl -sS --cacert "$API/tls/ca.crt" -H 'Authorization: Bearer admin-token' \
		-H 'Accept: application/json;as=Table;v=v1;g=meta.k8s.io' "$SERVER$C"
	[ "$(jq -c '.rows[0].cells[0:2]' <<<"$output")" = '["c","allocated,reserved"]' ]
	# an allocation stays as it is; results of a request that is not the claim's, a bad device
	call admin-token PATCH "$C/c/status" application/json-patch+json '[{"op": "replace", "path": "/status/allocation/devices/results/0/device", "value": "gpu-1"}]'
	status_is 422 Invalid 'ResourceClaim.resource.k8s.io "c" is invalid: status.allocation: Invalid value: {"devices":{"results":[{"request":"gpu","driver":"gpu.example.com","pool":"n1","device":"gpu-1"}]}}: field is immutable'
	call admin-token PUT "$C/c/status" application/json "$(jq -c '.metadata.resourceVersion = "10" | .status = {allocation: {devices: {results: [{request: "cpu", driver: "gpu.example.com", pool: "n1", device: "GPU"}]}}}' <<<"$claim")"
	[ "$(jqr '[.details.causes[] | "\(.field): \(.message)"] | join("; ")')" = "status.allocation.devices.results[0].request: Invalid value: \"cpu\": must be the name of a request in the claim or the name of a request and a subrequest separated by '/'; status.allocation.devices.results[0].device: Invalid value: \"GPU\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?'); status.allocation: Invalid value: {\"devices\":{\"results\":[{\"request\":\"cpu\",\"driver\":\"gpu.example.com\",\"pool\":\"n1\",\"device\":\"GPU\"}]}}: field is immutable" ]
	# a request: exactly one of exactly and firstAvailable; the class named
	call admin-token POST "$C" application/json "$(jq -c '.metadata.name = "d" | .spec.devices.requests = [{name: "a"}, {name: "b", exactly: {}}]' <<<"$claim")"
	# shellcheck disable=SC2016 # the backquotes of the API's message
	[ "$(jqr '[.details.causes[] | "\(.field): \(.message)"] | join("; ")')" = 'spec.devices.requests[0]: Required value: exactly one of `exactly` or `firstAvailable` is required; spec.devices.requests[1].exactly.deviceClassName: Required value' ]
	# the spec does not change after create
	call admin-token PATCH "$C/c" application/json-patch+json '[{"op": "replace", "path": "/spec/devices/requests/0/name", "value": "gpu2"}]'
	[ "$(jqr '[.details.causes[] | "\(.field) \(.message | sub(".*: "; ""))"] | join("; ")')" = "spec field is immutable" ]
	# the status subresource as a resource of its own in RBAC
	call mirror-token GET "$C/c/status"
	status_is 403 Forbidden "resourceclaims.resource.k8s.io \"c\" is forbidden: User \"$SA_USER\" cannot get resource \"resourceclaims/status\" in API group \"resource.k8s.io\" in the namespace \"default\""
	call admin-token DELETE "$C/c/status"
	status_is 404 NotFound "the server could not find the requested resource"
}

# ---- real kubectl clients ------------------------------------------------------------------------

@test "kubectl get nodes -w and -w -o json: the change a test makes to the store's file (Debian's kubectl, and the PATH's)" {
	ks=$(kubectls)
	need "Debian's kubernetes-client (or DEBIAN_KUBECTL: tests/api/README.md)" test -n "$(debian_kubectl)"
	kubeconfig
	# each watch cut after its first event: kubectl then ends (as when the server ends it)
	fault '{"path": "/api/v1/nodes", "verb": "watch", "drop_after_events": 1}'
	n=0
	for k in $ks; do
		for o in table json; do
			n=$((n + 1))
			args=(get nodes -w)
			[ "$o" = table ] || args+=(-o json)
			timeout 10 "$k" --kubeconfig "$KC" --cache-dir "$K/kcache" --context admin "${args[@]}" >"$K/out" 2>"$K/err" &
			pid=$!
			lines_at_least 2 "$K/out"
			# after the list: the node not Ready, in the file
			edit "$NODEF" ".status.conditions[0].status = \"False\" | .metadata.labels.a = \"$n\""
			wait "$pid" || {
				echo "$k ${args[*]}: exit $?: $(cat "$K/out" "$K/err")"
				requests 'true' | tail -n 3
				return 1
			}
			if [ "$o" = table ]; then
				[[ "$(sed -n 2p "$K/out")" =~ ^gpu-node-1\ +Ready\  ]]
				[[ "$(sed -n 3p "$K/out")" =~ ^gpu-node-1\ +NotReady\  ]] || { echo "$k: $(cat "$K/out")"; return 1; }
			else
				[ "$(jq -sr 'map("\(.kind) \(.metadata.labels.a) \(.status.conditions[0].status)") | join(",")' "$K/out")" = \
					"Node $((n - 1)) True,Node $n False" ] || { echo "$k: $(cat "$K/out")"; return 1; }
			fi
			edit "$NODEF" '.status.conditions[0].status = "True"'
		done
	done
	[ "$(requests '.verb == "watch"' | jq -r '"\(.events) \(.end)"' | sort -u)" = "1 dropped" ]
	[[ "$(requests '.verb == "watch"' | head -n 1 | jq -r .query)" == resourceVersion=*watch=true* ]]
}

@test "kubectl get, apply, delete --field-selector of ResourceSlices; an invalid slice refused with the API's message" {
	ks=$(kubectls)
	need "Debian's kubernetes-client (or DEBIAN_KUBECTL: tests/api/README.md)" test -n "$(debian_kubectl)"
	kubeconfig
	for k in $ks; do
		kc() {
			run --separate-stderr "$k" --kubeconfig "$KC" --cache-dir "$K/kcache" --context admin "$@"
		}
		slice n1-gpu n1 gpu.example.com >"$K/s1.json"
		slice n2-gpu n2 gpu.example.com >"$K/s2.json"
		# no OpenAPI here: apply's own validation off (the API server's is what is checked)
		kc apply --validate=false -f "$K/s1.json" -f "$K/s2.json"
		assert_success
		[ "$output" = "$(printf '%s\n' "resourceslice.resource.k8s.io/n1-gpu created" "resourceslice.resource.k8s.io/n2-gpu created")" ]
		slice n1-gpu n1 gpu.example.com '.spec.pool.generation = 2' >"$K/s1.json"
		kc apply --validate=false -f "$K/s1.json"
		assert_success
		[ "$output" = "resourceslice.resource.k8s.io/n1-gpu configured" ]
		kc get resourceslices
		assert_success
		[[ "${lines[0]}" =~ ^NAME\ +NODE\ +DRIVER\ +POOL\ +AGE$ ]]
		[[ "${lines[1]}" =~ ^n1-gpu\ +n1\ +gpu\.example\.com\ +n1\ +[0-9]+s$ ]]
		[ "${#lines[@]}" = 3 ]
		slice bad n1 Gpu_Example '.spec.pool.resourceSliceCount = 0' >"$K/bad.json"
		kc apply --validate=false -f "$K/bad.json"
		assert_failure
		[ "$stderr" = "$(printf '%s\n' 'The ResourceSlice "bad" is invalid: ' \
			"* spec.driver: Invalid value: \"Gpu_Example\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')" \
			'* spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero')" ] || { echo "$stderr"; return 1; }
		kc delete resourceslices --field-selector spec.nodeName=n1
		assert_success
		[ "$output" = 'resourceslice.resource.k8s.io "n1-gpu" deleted' ]
		kc get resourceslices --field-selector spec.foo=n1
		assert_failure
		[[ "$stderr" == *"field label not supported: spec.foo" ]]
		kc delete resourceslices n2-gpu
		assert_success
	done
	[ "$(requests '.method == "DELETE"' | jq -r .path | sort -u)" = "$(printf '%s\n' /apis/resource.k8s.io/v1/resourceslices/n1-gpu /apis/resource.k8s.io/v1/resourceslices/n2-gpu)" ]
}
