#!/usr/bin/env bats
# shellcheck disable=SC2154 # $stderr and $output are set by bats' run
# gpuvm-dra, the DRA kubelet plugin (dra/, doc/dra.md): the real plugin on fixture trees,
# called as the kubelet calls it (tests/dra/kubelet.py: Debian's grpcio over unix sockets, the
# stubs made from dra/proto at test time), its claims read from the API stand-in
# (tests/api). The registration, the gRPC server's errors, NodePrepareResources' CDI spec and
# device metadata, idempotence, a restart between prepare and unprepare, the claims it refuses.

load helpers
load ../api/standin
load ../dra/dra

GPU=0000:01:00.0
DEV=gpu-0000-01-00-0
U1=6f1c2a9e-5b7d-4c1e-9a8f-000000000001
U2=6f1c2a9e-5b7d-4c1e-9a8f-000000000002
MD=/var/run/kubernetes.io/dra-device-attributes

setup_file() {
	need "Debian's python3-grpcio and python3-grpc-tools" /usr/bin/python3 -c 'import grpc, grpc_tools'
	[ -x "$DRA" ] || fail "no $DRA: make build/gpuvm-dra"
	dra_gen
	standin_start
}

teardown_file() {
	standin_stop
}

setup() {
	standin_vars
	standin_reset
	dra_rbac
	dra_vars
	mkfx vfio-stale
	pin $GPU
	vfio_nodes 2
}

teardown() {
	dra_stop
	[ -n "${BATS_TEST_COMPLETED-}" ] || [ ! -s "$PLOG" ] || { echo "# the plugin's log:"; sed 's/^/# /' "$PLOG"; } >&3
}

@test "registration: GetInfo names the driver, its DRA socket and v1.DRAPlugin; the status is logged" {
	dra_start --slices never
	run kubelet register "$REG"
	assert_success
	assert_equal "$(jqr '[.type, .name, .endpoint, (.supported_versions | join(","))] | join(" ")')" \
		"DRAPlugin $DRIVER $SOCK v1.DRAPlugin"
	run grep -c 'the kubelet registered vfio.gpuvm.dev' "$PLOG"
	assert_output 1
	# The sockets are the owner's only, and go with the plugin.
	assert_equal "$(stat -c %a "$REG") $(stat -c %a "$SOCK")" "600 600"
	dra_stop
	[ ! -e "$REG" ] && [ ! -e "$SOCK" ]
}

@test "--alive (the liveness probe): the serving plugin answers; stopped (SIGSTOP) or gone, it fails" {
	dra_start --slices never
	run "$DRA" --alive --plugin-socket "$SOCK"
	assert_success
	# A hung loop still has its socket, whose backlog still takes the connection: the probe
	# must wait for the server's SETTINGS frame, not for connect().
	kill -STOP "$DPID"
	run timeout 20 "$DRA" --alive --plugin-socket "$SOCK"
	kill -CONT "$DPID"
	assert_failure 1
	assert_output --partial 'Connection timed out'
	run "$DRA" --alive --plugin-socket "$SOCK"
	assert_success
	dra_stop
	run "$DRA" --alive --plugin-socket "$SOCK"
	assert_failure 1
	assert_output --partial 'No such file or directory'
}

@test "an unknown method is UNIMPLEMENTED, a message that is no protobuf INVALID_ARGUMENT, one past 4 MiB RESOURCE_EXHAUSTED; garbage closes only its connection" {
	dra_start --slices never
	run kubelet raw "$SOCK" /k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodeGetInfo ''
	assert_failure 3
	assert_output '{"code": "UNIMPLEMENTED", "details": "unknown method /k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodeGetInfo"}'
	# the registration's methods are not the DRA socket's
	run kubelet raw "$SOCK" /pluginregistration.Registration/GetInfo ''
	assert_output --partial UNIMPLEMENTED
	# field 1 says 255 bytes follow, and none do
	run kubelet raw "$SOCK" /k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources 0aff01
	assert_failure 3
	assert_output '{"code": "INVALID_ARGUMENT", "details": "the NodePrepareResourcesRequest cannot be decoded"}'
	# a message past the bound (4 MiB), read to its end and refused; one at the bound is decoded
	# (4 MiB of zeros: no protobuf)
	run kubelet raw "$SOCK" /k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources zeros:4194305
	assert_failure 3
	assert_output '{"code": "RESOURCE_EXHAUSTED", "details": "the message is larger than the server takes"}'
	run kubelet raw "$SOCK" /k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodeUnprepareResources zeros:4194304
	assert_output '{"code": "INVALID_ARGUMENT", "details": "the NodeUnprepareResourcesRequest cannot be decoded"}'
	run kubelet garbage "$SOCK"
	assert_success
	assert_output --partial '"closed": true'
	grep -q 'a client broke HTTP/2: its connection closed' "$PLOG"
	# still serving, both sockets
	run kubelet register "$REG"
	assert_success
	run kubelet unprepare "$SOCK" "default/$U1/c1"
	assert_success
	assert_output "{\"claims\": {\"$U1\": {}}}"
}

# files: what the plugin wrote, one a line (paths under $D).
files() {
	(cd "$D" && find cdi state -type f 2>/dev/null | LC_ALL=C sort)
}

@test "prepare: a GPU on vfio-pci is a CDI spec of its group's nodes and a metadata file, the same again, and gone after a restart and unprepare" {
	claim c1 "$U1" "[$(result $DEV)]"
	# another claim's spec and a file of another's: unprepare leaves them
	mkdir -p "$CDI"
	echo '{}' >"$CDI/$DRIVER-$U2.json"
	echo '{}' >"$CDI/other-vendor.json"
	dra_start --slices never
	run kubelet prepare "$SOCK" "default/$U1/c1"
	assert_success
	local first=$output
	assert_equal "$(jqr ".claims[\"$U1\"].devices | length")" 1
	assert_equal "$(jqr ".claims[\"$U1\"].devices[0] | [.pool_name, .device_name, (.request_names | join(\",\")), (.cdi_device_ids | join(\" \"))] | join(\" \")")" \
		"gpu-node-1 $DEV gpu $DRIVER/gpu=$U1-$DEV $DRIVER/gpu=$U1-metadata-gpu"
	assert_equal "$(jqr ".claims[\"$U1\"].error // \"\"")" ""
	# The spec: 0.5.0 (Debian 12's podman reads no later), the legacy group's nodes only.
	local spec=$CDI/$DRIVER-$U1.json
	run jq -r '.cdiVersion, .kind, (.devices | length), .devices[0].name,
		([.devices[0].containerEdits.deviceNodes[] | "\(.path)=\(.hostPath):\(.permissions)"] | join(" ")),
		.devices[1].name, (.devices[1].containerEdits.mounts[0] | .hostPath, .containerPath, (.options | join(",")))' "$spec"
	assert_output "0.5.0
$DRIVER/gpu
2
$U1-$DEV
/dev/vfio/2=/dev/vfio/2:rw /dev/vfio/vfio=/dev/vfio/vfio:rw
$U1-metadata-gpu
$STATE/claims/$U1/gpu/$DRIVER-metadata.json
$MD/resourceclaims/c1/gpu/$DRIVER-metadata.json
ro,bind"
	# The metadata: v1beta1's object, then v1alpha1's (KubeVirt 1.9.0's reader), the same.
	local meta=$STATE/claims/$U1/gpu/$DRIVER-metadata.json
	run jq -sc 'map(.apiVersion)' "$meta"
	assert_output '["metadata.resource.k8s.io/v1beta1","metadata.resource.k8s.io/v1alpha1"]'
	run jq -sc 'map(del(.apiVersion)) | unique | length' "$meta"
	assert_output 1
	run jq -r '.kind, (.metadata | "\(.namespace)/\(.name) \(.uid) \(.generation)"), (.requests | length),
		.requests[0].name, (.requests[0].devices[0] | .driver, .pool, .name,
		(.attributes | ."resource.kubernetes.io/pciBusID".string, ."resource.kubernetes.io/pcieRoot".string,
		."vfio.gpuvm.dev/iommuGroup".int, ."vfio.gpuvm.dev/driver".string,
		."vfio.gpuvm.dev/vendorID".string, ."vfio.gpuvm.dev/iommufd".bool))' <(head -n 1 "$meta")
	assert_output "DeviceMetadata
default/c1 $U1 1
1
gpu
$DRIVER
gpu-node-1
$DEV
$GPU
pci0000:00
2
vfio-pci
0x10de
false"
	assert_equal "$(files)" "cdi/other-vendor.json
cdi/$DRIVER-$U1.json
cdi/$DRIVER-$U2.json
state/claims/$U1/gpu/$DRIVER-metadata.json"
	# Again: the same answer, nothing rewritten.
	local before
	before=$(stat -c '%i %y' "$spec" "$meta")
	run kubelet prepare "$SOCK" "default/$U1/c1"
	assert_success
	assert_equal "$output" "$first"
	assert_equal "$(stat -c '%i %y' "$spec" "$meta")" "$before"
	grep -q "CDI spec $CDI/$DRIVER-$U1.json already right" "$PLOG"
	# A new plugin (its state is the files) unprepares what the old one prepared, and no more.
	dra_stop
	dra_start --slices never
	run kubelet unprepare "$SOCK" "default/$U1/c1"
	assert_success
	assert_output "{\"claims\": {\"$U1\": {}}}"
	assert_equal "$(files)" "cdi/other-vendor.json
cdi/$DRIVER-$U2.json"
	[ ! -e "$STATE/claims/$U1" ]
	run kubelet unprepare "$SOCK" "default/$U1/c1"
	assert_success
	assert_output "{\"claims\": {\"$U1\": {}}}"
}

# tree: every file, link and folder of $ROOT with its content's checksum, its target or its mode.
tree() {
	(cd "$ROOT" && find . -printf '%y %m %p %l\n' | LC_ALL=C sort &&
		find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)
}

@test "it never binds or unbinds: registration, slices, prepare and unprepare leave the --root tree as it was, and open nothing of it to write" {
	command -v strace >/dev/null || skip "no strace (Debian's strace)"
	node gpu-node-1
	claim c1 "$U1" "[$(result $DEV)]"
	tree >"$D/tree.before"
	grep -q "/$GPU/driver_override$" "$D/tree.before"
	DRA_TRACE=$D/trace dra_start --slices auto --slice-interval 1
	kubelet register "$REG" >/dev/null
	wait_for "slice" 5 grep -q 'slices: pool gpu-node-1, generation 1' "$PLOG"
	run kubelet prepare "$SOCK" "default/$U1/c1"
	assert_success
	assert_equal "$(jqr ".claims[\"$U1\"].error // \"\"")" ""
	[ -s "$CDI/$DRIVER-$U1.json" ]
	run kubelet unprepare "$SOCK" "default/$U1/c1"
	assert_success
	assert_output "{\"claims\": {\"$U1\": {}}}"
	dra_stop
	tree >"$D/tree.after"
	run diff "$D/tree.before" "$D/tree.after"
	assert_success
	# The trace saw the plugin read the tree (the device's files), and open no file of a
	# driver's binding to write; whatever it opened to write is its own (CDI specs, state).
	grep -q "openat([0-9]*, \"sys/bus/pci/devices/$GPU/" "$D/trace"
	run grep -E '(driver_override|/bind|unbind|new_id|remove_id|drivers_probe)", [^)]*O_(WRONLY|RDWR)' "$D/trace"
	assert_failure
	run grep -E 'O_(WRONLY|RDWR|CREAT)' "$D/trace"
	run grep -v -e "\"$CDI/" -e "\"$STATE/" <<<"$output"
	assert_output ""
}

@test "prepare: each claim it refuses gets its own error, the others are prepared" {
	U3=6f1c2a9e-5b7d-4c1e-9a8f-000000000003 U4=6f1c2a9e-5b7d-4c1e-9a8f-000000000004
	U5=6f1c2a9e-5b7d-4c1e-9a8f-000000000005 U6=6f1c2a9e-5b7d-4c1e-9a8f-000000000006
	claim c1 "$U1" "[$(result $DEV)]"
	claim c2 "6f1c2a9e-5b7d-4c1e-9a8f-0000000000ff" "[$(result $DEV)]"
	claim c3 "$U3" none
	claim c4 "$U4" "[$(result gpu-0 gpu gpu.nvidia.com)]"
	claim c6 "$U6" "[$(result $DEV gpu "$DRIVER" gpu-node-2)]"
	U8=6f1c2a9e-5b7d-4c1e-9a8f-000000000008
	claim c8 "$U8" "[$(result $DEV)]" '{"resource.kubernetes.io/pod-claim-name": "../../etc"}'
	dra_start --slices never
	run kubelet prepare "$SOCK" "default/$U1/c1" "default/$U2/c2" "default/$U3/c3" "default/$U4/c4" \
		"default/$U5/c5" "default/$U6/c6" "default/../c7" "default/$U8/c8"
	assert_success
	assert_equal "$(jqr ".claims[\"$U1\"] | [(.devices | length), .error // \"\"] | join(\" \")")" "1 "
	assert_equal "$(jqr ".claims[\"$U2\"].error")" \
		"ResourceClaim default/c2 has UID 6f1c2a9e-5b7d-4c1e-9a8f-0000000000ff, not $U2: not the claim the kubelet prepares"
	assert_equal "$(jqr ".claims[\"$U3\"].error")" "ResourceClaim default/c3 is not allocated"
	# another driver's devices only: prepared, nothing to do
	assert_equal "$(jqr ".claims[\"$U4\"]")" "{}"
	assert_equal "$(jqr ".claims[\"$U5\"].error")" \
		'GET /apis/resource.k8s.io/v1/namespaces/default/resourceclaims/c5: 404: resourceclaims.resource.k8s.io "c5" not found'
	assert_equal "$(jqr ".claims[\"$U6\"].error")" \
		"device gpu-node-2/$DEV is in pool gpu-node-2, not this node's (gpu-node-1)"
	assert_equal "$(jqr '.claims[".."].error')" "claim default/c7 (..): not a namespace, name and UID the API makes"
	assert_equal "$(jqr ".claims[\"$U8\"].error")" \
		"ResourceClaim default/c8: its pod claim name (resource.kubernetes.io/pod-claim-name) is not a DNS label"
	assert_equal "$(files)" "cdi/$DRIVER-$U1.json
state/claims/$U1/gpu/$DRIVER-metadata.json"
	# The claims were read as the admin's token reads them, with the plugin's user agent.
	run requests '.path | startswith("/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/")'
	assert_equal "${#lines[@]}" 7
	run requests '.user_agent != "gpuvm-dra/0.1.0" or .method != "GET"'
	assert_output ''
}

@test "prepare: a GPU that is not on vfio, or whose group is not viable, is refused and nothing is written" {
	claim c1 "$U1" "[$(result $DEV)]"
	setdriver 0000:01:00.1 snd_hda_intel
	dra_start --slices never
	run kubelet prepare "$SOCK" "default/$U1/c1"
	assert_success
	assert_equal "$(jqr ".claims[\"$U1\"].error")" \
		"device $DEV: IOMMU group 2 is not viable: 0000:01:00.1 is on snd_hda_intel, not on vfio; gpuvm-dra binds nothing: the GPU must be on vfio since boot (gpuvm)"
	assert_equal "$(files)" ""
	dra_stop
	mkfx workstation
	vfio_nodes 2
	dra_start --slices never
	run kubelet prepare "$SOCK" "default/$U1/c1"
	assert_success
	assert_equal "$(jqr ".claims[\"$U1\"].error")" \
		"device $DEV: $GPU is on nouveau, not on vfio; gpuvm-dra binds nothing: the GPU must be on vfio since boot (gpuvm)"
	assert_equal "$(files)" ""
	# nothing under the root was written either
	run find "$ROOT" -newer "$D/token" -type f
	assert_output ''
}

@test "prepare: the iommufd backend is the device's cdev and /dev/iommu, never the group's node" {
	mkdir -p "$ROOT/sys/bus/pci/devices/$GPU/vfio-dev/vfio0" "$ROOT/dev/vfio/devices"
	: >"$ROOT/dev/vfio/devices/vfio0"
	: >"$ROOT/dev/iommu"
	claim c1 "$U1" "[$(result $DEV)]"
	dra_start --slices never --vfio-backend iommufd
	run kubelet prepare "$SOCK" "default/$U1/c1"
	assert_success
	local spec=$CDI/$DRIVER-$U1.json meta=$STATE/claims/$U1/gpu/$DRIVER-metadata.json
	run jq -r '[.devices[0].containerEdits.deviceNodes[].path] | join(" ")' "$spec"
	assert_output "/dev/vfio/devices/vfio0 /dev/iommu"
	run jq -r '.requests[0].devices[0].attributes | "\(."vfio.gpuvm.dev/vfioCdev".bool) \(."vfio.gpuvm.dev/iommufd".bool)"' <(head -n 1 "$meta")
	assert_output "true true"
	dra_stop
	# auto: legacy where the group's node is there, else iommufd
	rm -rf "$CDI" "$STATE"
	dra_start --slices never
	kubelet prepare "$SOCK" "default/$U1/c1" >/dev/null
	run jq -r '[.devices[0].containerEdits.deviceNodes[].path] | join(" ")' "$spec"
	assert_output "/dev/vfio/2 /dev/vfio/vfio"
	dra_stop
	rm -rf "$CDI" "$STATE" "$ROOT/dev/vfio/2"
	dra_start --slices never
	kubelet prepare "$SOCK" "default/$U1/c1" >/dev/null
	run jq -r '[.devices[0].containerEdits.deviceNodes[].path] | join(" ")' "$spec"
	assert_output "/dev/vfio/devices/vfio0 /dev/iommu"
	dra_stop
	# legacy asked for, and its node not there: refused
	rm -rf "$CDI" "$STATE"
	dra_start --slices never --vfio-backend legacy
	run kubelet prepare "$SOCK" "default/$U1/c1"
	assert_equal "$(jqr ".claims[\"$U1\"].error")" \
		"$GPU: /dev/vfio/2 or /dev/vfio/vfio is not there (the legacy vfio backend)"
	assert_equal "$(files)" ""
}

@test "prepare: a claim made from a template is mounted at its pod claim name's path, and says it" {
	claim c1-gpus-x7k2p "$U1" "[$(result $DEV)]" '{"resource.kubernetes.io/pod-claim-name": "gpus"}'
	dra_start --slices never
	run kubelet prepare "$SOCK" "default/$U1/c1-gpus-x7k2p"
	assert_success
	run jq -r '.devices[1].containerEdits.mounts[0].containerPath' "$CDI/$DRIVER-$U1.json"
	assert_output "$MD/resourceclaimtemplates/gpus/gpu/$DRIVER-metadata.json"
	run jq -sr '.[] | "\(.podClaimName) \(.metadata.name)"' "$STATE/claims/$U1/gpu/$DRIVER-metadata.json"
	assert_output "gpus c1-gpus-x7k2p
gpus c1-gpus-x7k2p"
}

# gen: the pool's generation and devices of the one slice in $output, "GEN DEV,DEV".
gen() {
	jqr '.items | if length == 1 then "\(.[0].spec.pool.generation) \([.[0].spec.devices[].name] | join(","))" else "\(length) slices" end'
}

@test "prepare: a device two requests share (admin access) is one device of the spec, its ID in each" {
	claim c1 "$U1" "[$(result $DEV gpu), $(result $DEV watch)]"
	dra_start --slices never
	run kubelet prepare "$SOCK" "default/$U1/c1"
	assert_success
	run jq -r '.claims[].devices[] | "\(.request_names[0]) \(.cdi_device_ids | join(" "))"' <<<"$output"
	assert_output "gpu $DRIVER/gpu=$U1-$DEV $DRIVER/gpu=$U1-metadata-gpu
watch $DRIVER/gpu=$U1-$DEV $DRIVER/gpu=$U1-metadata-watch"
	run jq -r '[.devices[].name] | join(" ")' "$CDI/$DRIVER-$U1.json"
	assert_output "$U1-$DEV $U1-metadata-gpu $U1-metadata-watch"
	run jq -sr '.[0].requests[0] | "\(.name) \(.devices | length)"' "$STATE/claims/$U1/watch/$DRIVER-metadata.json"
	assert_output "watch 1"
}

@test "slices: the GPUs on vfio are published at the start, owned by the Node, and again after the kubelet deleted them" {
	node gpu-node-1
	dra_start --slices auto --slice-interval 1
	wait_for "slice" 5 grep -q 'slices: pool gpu-node-1, generation 1' "$PLOG"
	slices
	assert_equal "$(gen)" "1 $DEV"
	run jq -r '.items[0] | .metadata.name, (.metadata.ownerReferences[0] | "\(.kind) \(.name) \(.uid) \(.controller)"),
		(.spec | .driver, .nodeName, .pool.name, .pool.resourceSliceCount,
		(.devices[0].attributes | ."resource.kubernetes.io/pciBusID".string, ."resource.kubernetes.io/pcieRoot".string,
		."vfio.gpuvm.dev/deviceID".string, ."vfio.gpuvm.dev/iommuGroup".int,
		."vfio.gpuvm.dev/pinnedBy".string, ."vfio.gpuvm.dev/mode".string, (keys | length)))' <<<"$output"
	assert_output "gpu-node-1-$DRIVER-0
Node gpu-node-1 0b7e4c1d-0000-4000-8000-00000000000a true
$DRIVER
gpu-node-1
gpu-node-1
1
$GPU
pci0000:00
0x2204
2
gpus
vm
10"
	# At rest: no request after the start's (the GPUs are read from sysfs only).
	local n
	n=$(grep -c . "$API/requests.jsonl")
	sleep 2.5
	assert_equal "$(grep -c . "$API/requests.jsonl")" "$n"
	# The kubelet deletes them at its start, then registers the plugin again.
	call admin-token DELETE "/apis/resource.k8s.io/v1/resourceslices/gpu-node-1-$DRIVER-0"
	kubelet register "$REG" >/dev/null
	wait_for "slice again" 5 grep -q 'slices: pool gpu-node-1, generation 2' "$PLOG"
	slices
	assert_equal "$(gen)" "2 $DEV"
}

@test "slices: a GPU that leaves vfio is taken out, the generation bumped, the reason logged" {
	node gpu-node-1
	dra_start --slices auto --slice-interval 1
	wait_for "slice" 5 grep -q 'generation 1' "$PLOG"
	setdriver 0000:01:00.1 snd_hda_intel
	wait_for "new generation" 5 grep -q 'slices: pool gpu-node-1, generation 2: 0 devices in 1 slices' "$PLOG"
	slices
	assert_equal "$(gen)" "2 "
	grep -q "slices: $DEV ($GPU) not published: IOMMU group 2 is not viable: 0000:01:00.1 is on snd_hda_intel, not on vfio" "$PLOG"
	# a node whose GPU was never on vfio publishes an empty pool
	dra_stop
	call admin-token DELETE "/apis/resource.k8s.io/v1/resourceslices/gpu-node-1-$DRIVER-0"
	mkfx workstation
	dra_start --slices auto
	wait_for "slice" 5 grep -q 'slices: pool gpu-node-1, generation 1: 0 devices' "$PLOG"
	grep -q "slices: $DEV ($GPU) not published: $GPU is on nouveau, not on vfio" "$PLOG"
}

# boot_state JSON_DEVICES: /run/gpuvm/state.json of $ROOT with these devices (the fields
# src/boot/report.c writes that the plugin reads: address, result, error, reason).
boot_state() {
	jq -n --argjson d "$1" '{version: "x", command: "apply", result: "partial", devices: $d}' \
		>"$ROOT/run/gpuvm/state.json"
}

@test "slices: only what gpuvm pinned is published; a vfio GPU without a record, a record without vfio, a failed boot bind are left out, the metrics file and the log say why" {
	mkfx hgx8
	# 03: pinned by ids, on vfio: published. 23: on vfio, no record (someone else bound it).
	# 43: pinned, but on nvidia. 63: pinned, on vfio, its bind did not verify at boot.
	# 0001:03: pinned, its bind failed at boot, on nvidia.
	setdriver 0000:03:00.0 vfio-pci
	pin 0000:03:00.0 ids
	setdriver 0000:23:00.0 vfio-pci
	pin 0000:43:00.0
	setdriver 0000:43:00.0 nvidia
	setdriver 0000:63:00.0 vfio-pci
	pin 0000:63:00.0
	pin 0001:03:00.0
	boot_state '[{"address": "0000:03:00.0", "result": "ok", "error": null},
		{"address": "0000:63:00.0", "result": "unverified", "error": "vfio-pci did not take it within 2000 ms"},
		{"address": "0001:03:00.0", "result": "failed", "error": "bind: No such device"},
		{"address": "0001:23:00.0", "result": "refused", "error": "in use by pid 4242 (qemu)"}]'
	# 0001:23: pinned, on vfio, the last apply --live refused to move it (in use): published
	setdriver 0001:23:00.0 vfio-pci
	pin 0001:23:00.0
	node gpu-node-1
	dra_start --slices auto --slice-interval 1 --metrics-dir "$D/metrics"
	wait_for "slices" 5 grep -q 'slices: pool gpu-node-1, generation 1: 2 devices in 1 slices' "$PLOG"
	slices
	run jq -r '.items[].spec.devices[] | "\(.name) \(.attributes."vfio.gpuvm.dev/pinnedBy".string) \(.attributes."vfio.gpuvm.dev/mode".string)"' <<<"$output"
	assert_output "gpu-0000-03-00-0 ids vm
gpu-0001-23-00-0 gpus vm"
	grep -q "slices: gpu-0000-23-00-0 (0000:23:00.0) not published: 0000:23:00.0 is on vfio-pci, but gpuvm did not pin it (no /run/gpuvm/pinned/0000:23:00.0): not gpuvm's to offer" "$PLOG"
	grep -q "slices: gpu-0000-43-00-0 (0000:43:00.0) not published: 0000:43:00.0 is on nvidia, not on vfio" "$PLOG"
	grep -q "slices: gpu-0000-63-00-0 (0000:63:00.0) not published: the boot's bind of 0000:63:00.0: unverified: vfio-pci did not take it within 2000 ms (/run/gpuvm/state.json)" "$PLOG"
	grep -q "slices: gpu-0001-03-00-0 (0001:03:00.0) not published: 0001:03:00.0 is on nvidia, not on vfio; the boot's bind of 0001:03:00.0: failed: bind: No such device" "$PLOG"
	run grep '^gpuvm_dra' "$D/metrics/gpuvm-dra.prom"
	assert_output 'gpuvm_dra_devices{state="published"} 2
gpuvm_dra_devices{state="unpublished"} 6
gpuvm_dra_device_published{address="0000:03:00.0",device="gpu-0000-03-00-0",pinned_by="ids"} 1
gpuvm_dra_device_published{address="0001:23:00.0",device="gpu-0001-23-00-0",pinned_by="gpus"} 1
gpuvm_dra_device_unpublished{address="0000:23:00.0",device="gpu-0000-23-00-0",reason="not_pinned"} 1
gpuvm_dra_device_unpublished{address="0000:43:00.0",device="gpu-0000-43-00-0",reason="not_vfio"} 1
gpuvm_dra_device_unpublished{address="0000:63:00.0",device="gpu-0000-63-00-0",reason="boot_failed"} 1
gpuvm_dra_device_unpublished{address="0001:03:00.0",device="gpu-0001-03-00-0",reason="boot_failed"} 1
gpuvm_dra_device_unpublished{address="0001:43:00.0",device="gpu-0001-43-00-0",reason="not_vfio"} 1
gpuvm_dra_device_unpublished{address="0001:63:00.0",device="gpu-0001-63-00-0",reason="not_vfio"} 1'
	# and each that is gpuvm's business is a Warning Event on the Node (not 0001:43, 63:
	# on nvidia without a record, the normal state of a GPU left to containers)
	call admin-token GET /api/v1/namespaces/default/events
	run jq -r '.items | sort_by(.message)[] | "\(.involvedObject.kind)/\(.involvedObject.name) \(.type) \(.reason) \(.source.component): \(.message | split(":")[0])"' <<<"$output"
	assert_output "Node/gpu-node-1 Warning GPUNotPublished gpuvm-dra: gpu-0000-23-00-0 (0000
Node/gpu-node-1 Warning GPUNotPublished gpuvm-dra: gpu-0000-43-00-0 (0000
Node/gpu-node-1 Warning GPUNotPublished gpuvm-dra: gpu-0000-63-00-0 (0000
Node/gpu-node-1 Warning GPUNotPublished gpuvm-dra: gpu-0001-03-00-0 (0001"
	call admin-token GET /api/v1/namespaces/default/events
	run jq -r '[.items[].message | select(startswith("gpu-0000-63-00-0"))] | .[0]' <<<"$output"
	assert_output "gpu-0000-63-00-0 (0000:63:00.0) not published (boot_failed): the boot's bind of 0000:63:00.0: unverified: vfio-pci did not take it within 2000 ms (/run/gpuvm/state.json)"
	# what is not published is not prepared either
	claim c1 "$U1" "[$(result gpu-0000-23-00-0)]"
	run kubelet prepare "$SOCK" "default/$U1/c1"
	assert_success
	assert_equal "$(jqr ".claims[\"$U1\"].error")" \
		"device gpu-0000-23-00-0: 0000:23:00.0 is on vfio-pci, but gpuvm did not pin it (no /run/gpuvm/pinned/0000:23:00.0): not gpuvm's to offer; gpuvm-dra binds nothing: the GPU must be on vfio since boot (gpuvm)"
	# gpuvm pins the stranger (an apply with gpus=): it is published, the metrics follow
	pin 0000:23:00.0
	wait_for "new generation" 5 grep -q 'slices: pool gpu-node-1, generation 2: 3 devices in 1 slices' "$PLOG"
	wait_for "metrics" 5 grep -q 'gpuvm_dra_device_published{address="0000:23:00.0",device="gpu-0000-23-00-0",pinned_by="gpus"} 1' "$D/metrics/gpuvm-dra.prom"
	# a record that is a link is none of gpuvm's (the root's door refuses it)
	rm "$ROOT/run/gpuvm/pinned/0000:23:00.0"
	ln -s 0000:03:00.0 "$ROOT/run/gpuvm/pinned/0000:23:00.0"
	wait_for "back out" 5 grep -q 'slices: pool gpu-node-1, generation 3: 2 devices in 1 slices' "$PLOG"
}

@test "slices: another vendor's GPU is offered only when gpuvm pinned it, and is not counted otherwise" {
	mkfx workstation
	setdriver 0000:00:02.0 vfio-pci
	node gpu-node-1
	dra_start --slices auto --slice-interval 1 --metrics-dir "$D/metrics"
	wait_for "slices" 5 grep -q 'slices: pool gpu-node-1, generation 1: 0 devices' "$PLOG"
	# the Intel GPU on vfio without a record is none of gpuvm's, and not an NVIDIA GPU: unlisted
	run grep '^gpuvm_dra_device_' "$D/metrics/gpuvm-dra.prom"
	assert_output 'gpuvm_dra_device_unpublished{address="0000:01:00.0",device="gpu-0000-01-00-0",reason="not_vfio"} 1'
	pin 0000:00:02.0 ids
	wait_for "new generation" 5 grep -q 'slices: pool gpu-node-1, generation 2: 1 devices' "$PLOG"
	slices
	run jq -r '.items[].spec.devices[] | "\(.name) \(.attributes."vfio.gpuvm.dev/vendorID".string) \(.attributes."vfio.gpuvm.dev/pinnedBy".string)"' <<<"$output"
	assert_output "gpu-0000-00-02-0 0x8086 ids"
}

@test "slices: eight GPUs in slices of three, each with its NUMA node and PCIe root; fewer, and a slice is deleted" {
	mkfx hgx8
	local gpus="0000:03:00.0 0000:23:00.0 0000:43:00.0 0000:63:00.0 0001:03:00.0 0001:23:00.0 0001:43:00.0 0001:63:00.0" a
	for a in $gpus; do
		setdriver "$a" vfio-pci
		pin "$a"
	done
	node gpu-node-1
	dra_start --slices auto --slice-interval 1 --slice-devices 3
	wait_for "slices" 5 grep -q 'slices: pool gpu-node-1, generation 1: 8 devices in 3 slices' "$PLOG"
	slices
	run jq -r '.items | sort_by(.metadata.name)[] | "\(.metadata.name) \(.spec.pool.generation)/\(.spec.pool.resourceSliceCount): \([.spec.devices[].name] | join(" "))"' <<<"$output"
	assert_output "gpu-node-1-$DRIVER-0 1/3: gpu-0000-03-00-0 gpu-0000-23-00-0 gpu-0000-43-00-0
gpu-node-1-$DRIVER-1 1/3: gpu-0000-63-00-0 gpu-0001-03-00-0 gpu-0001-23-00-0
gpu-node-1-$DRIVER-2 1/3: gpu-0001-43-00-0 gpu-0001-63-00-0"
	slices
	run jq -r '[.items[].spec.devices[] | .attributes | "\(."vfio.gpuvm.dev/numaNode".int)@\(."resource.kubernetes.io/pcieRoot".string)"] | join(" ")' <<<"$output"
	assert_output "0@pci0000:00 0@pci0000:20 0@pci0000:40 0@pci0000:60 1@pci0001:00 1@pci0001:20 1@pci0001:40 1@pci0001:60"
	# two GPUs back on nvidia: six devices in two slices, the third deleted
	setdriver 0000:03:00.0 nvidia
	setdriver 0001:63:00.0 nvidia
	wait_for "new generation" 5 grep -q 'slices: pool gpu-node-1, generation 2: 6 devices in 2 slices' "$PLOG"
	slices
	run jq -r '.items | sort_by(.metadata.name)[] | "\(.metadata.name) \(.spec.pool.generation)/\(.spec.pool.resourceSliceCount): \([.spec.devices[].name] | join(" "))"' <<<"$output"
	assert_output "gpu-node-1-$DRIVER-0 2/2: gpu-0000-23-00-0 gpu-0000-43-00-0 gpu-0000-63-00-0
gpu-node-1-$DRIVER-1 2/2: gpu-0001-03-00-0 gpu-0001-23-00-0 gpu-0001-43-00-0"
}

# stale_slices: two slices of the pool in the store: -0 with no device at generation 3 (to be
# updated), -1 (no longer needed: to be deleted).
stale_slices() {
	local dir=$STORE/apis/resource.k8s.io/v1/resourceslices i
	mkdir -p "$dir"
	for i in 0 1; do
		jq -n --arg n "gpu-node-1-$DRIVER-$i" --arg d "$DRIVER" '{apiVersion: "resource.k8s.io/v1",
			kind: "ResourceSlice", metadata: {name: $n}, spec: {driver: $d, nodeName: "gpu-node-1",
			pool: {name: "gpu-node-1", generation: 3, resourceSliceCount: 2}, devices: []}}' >"$dir/gpu-node-1-$DRIVER-$i.json"
	done
}

@test "RBAC: dra/deploy/component/rbac.yaml is enough for the plugin, and each of its verbs is needed" {
	node gpu-node-1
	claim c1 "$U1" "[$(result $DEV)]"
	stale_slices
	dra_start --slices auto
	wait_for "slices" 5 grep -q 'slices: pool gpu-node-1, generation 4: 1 devices in 1 slices' "$PLOG"
	run kubelet prepare "$SOCK" "default/$U1/c1"
	assert_equal "$(jqr ".claims[\"$U1\"].devices | length")" 1
	run requests '.user != "system:serviceaccount:gpuvm-system:gpuvm-dra" or .code >= 300'
	assert_output ''
	dra_stop
	local user='User "system:serviceaccount:gpuvm-system:gpuvm-dra"'
	# each verb taken away, the call that needs it is refused
	local rule stale want
	while IFS='|' read -r rule stale want; do
		: >"$PLOG"
		rm -rf "$STORE/apis/resource.k8s.io/v1/resourceslices"
		[ "$stale" = no ] || stale_slices
		dra_rbac "$rule"
		dra_start --slices auto
		wait_for "the refusal of $rule: $want" 5 grep -qF "$want" "$PLOG"
		dra_stop
	done <<EOF2
/resourceslices/{n;s/"list", //}|stale|slices: GET /apis/resource.k8s.io/v1/resourceslices?fieldSelector=spec.nodeName%3Dgpu-node-1,spec.driver%3D$DRIVER: 403
/resourceslices/{n;s/"create", //}|no|slices: POST /apis/resource.k8s.io/v1/resourceslices: 403
/resourceslices/{n;s/"update", //}|stale|slices: PUT /apis/resource.k8s.io/v1/resourceslices/gpu-node-1-$DRIVER-0: 403
/resourceslices/{n;s/, "delete"//}|stale|slices: DELETE /apis/resource.k8s.io/v1/resourceslices/gpu-node-1-$DRIVER-1: 403
/"nodes"/{n;s/"get"/"list"/}|stale|slices: GET /api/v1/nodes/gpu-node-1: 403
EOF2
	# the Event's create (a GPU on vfio without gpuvm's record: a Warning); the slices go on
	: >"$PLOG"
	rm "$ROOT/run/gpuvm/pinned/$GPU"
	dra_rbac '/"events"/{n;s/"create"/"get"/}'
	dra_start --slices auto
	wait_for "the refusal of the Event" 5 grep -qF 'slices: POST /api/v1/namespaces/default/events: 403' "$PLOG"
	wait_for "the slices anyway" 5 grep -q 'slices: pool gpu-node-1, generation .*: 0 devices' "$PLOG"
	dra_stop
	pin $GPU
	# the claim's get
	dra_rbac '/resourceclaims/{n;s/"get"/"list"/}'
	dra_start --slices never
	run kubelet prepare "$SOCK" "default/$U1/c1"
	assert_equal "$(jqr ".claims[\"$U1\"].error")" \
		"GET /apis/resource.k8s.io/v1/namespaces/default/resourceclaims/c1: 403: resourceclaims.resource.k8s.io \"c1\" is forbidden: $user cannot get resource \"resourceclaims\" in API group \"resource.k8s.io\" in the namespace \"default\""
}

@test "podman (Debian 12's) runs a container with a prepared claim's CDI devices: its vfio nodes and its metadata" {
	need podman command -v podman
	need "busybox-static" sh -c 'file -L /bin/busybox | grep -q "statically linked"'
	claim c1 "$U1" "[$(result $DEV)]"
	dra_start --slices never
	run kubelet prepare "$SOCK" "default/$U1/c1"
	assert_success
	local dev=() id w
	for id in $(jqr ".claims[\"$U1\"].devices[].cdi_device_ids[]"); do
		dev+=(--device "$id")
	done
	assert_equal "${#dev[@]}" 4
	# podman's storage in a short folder (conmon's sockets), removed after
	w=$(mktemp -d /tmp/dra-podman.XXXXXX)
	run timeout 120 sh "$TOP/tests/dra/podman-cdi.sh" "$w" "$CDI" "/dev/vfio/2 /dev/vfio/vfio" \
		"${dev[@]}" localhost/gpuvm-dra-test:1 \
		sh -c "stat -c '%n %F' /dev/vfio/2 /dev/vfio/vfio; cat $MD/resourceclaims/c1/gpu/$DRIVER-metadata.json"
	rm -rf "$w" || true
	assert_success
	assert_equal "$(sed -n 1,2p <<<"$output")" "/dev/vfio/2 character special file
/dev/vfio/vfio character special file"
	assert_equal "$(sed -n '3,$p' <<<"$output")" "$(cat "$STATE/claims/$U1/gpu/$DRIVER-metadata.json")"
	assert_equal "$(sed -n 4p <<<"$output" | jq -r '.requests[0].devices[0].attributes."resource.kubernetes.io/pciBusID".string')" "$GPU"
}
