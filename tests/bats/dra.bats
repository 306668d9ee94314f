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

U1=6f1c2a9e-5b7d-4c1e-9a8f-000000000001

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
	dra_vars
	mkfx vfio-stale
	vfio_nodes 2
}

teardown() {
	dra_stop
	[ -n "${BATS_TEST_COMPLETED-}" ] || [ ! -s "$PLOG" ] || { echo "# the plugin's log:"; sed 's/^/# /' "$PLOG"; } >&3
}

@test "registration: GetInfo names the driver, its DRA socket and v1.DRAPlugin; the status is logged" {
	dra_start
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

@test "an unknown method is UNIMPLEMENTED, a message that is no protobuf INVALID_ARGUMENT; garbage closes only its connection" {
	dra_start
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
