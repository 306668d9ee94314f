#!/usr/bin/env bats
# shellcheck disable=SC2154 # $stderr and $output are set by bats' run
# mirror/gpuvm-label-mirror: the node label into the host config, through the real build/gpuvm,
# against a fixture root standing for the host's /, with a stand-in kubectl that serves the node
# object from a file and applies annotate calls to it, and a stand-in chroot that records rebuilds.

load helpers

MIRROR="${MIRROR:-$TOP/mirror/gpuvm-label-mirror}"
NODE=gpu-node-1

# One fixture for the file: the workstation tree with mode=container applied, so its
# /run/gpuvm/state.json says the running boot is in container.
setup_file() {
	local base="$BATS_FILE_TMPDIR/base"
	"$TOP/tests/fixture/mkfixture" "$base" workstation >/dev/null
	mkdir -p "$base/etc/gpuvm"
	printf '# provisioned\nmode=container\n' >"$base/etc/gpuvm/gpuvm.conf"
	"$GPUVM" --root "$base" --cmdline "" apply >/dev/null 2>&1
	[ "$(jq -r .mode "$base/run/gpuvm/state.json")" = container ]
}

setup() {
	ROOT="$BATS_TEST_TMPDIR/root"
	cp -a "$BATS_FILE_TMPDIR/base" "$ROOT"
	CONF="$ROOT/etc/gpuvm/gpuvm.conf"
	K="$BATS_TEST_TMPDIR/k8s"
	BIN="$BATS_TEST_TMPDIR/bin"
	mkdir -p "$K" "$BIN"
	: >"$K/calls"
	: >"$K/rebuilds"
	echo 0 >"$K/chroot-rc"

	# kubectl: `get node NAME -o json` serves $K/node.json; `annotate node NAME K=V --overwrite`
	# and `annotate node NAME K-` edit it. Every call is logged in $K/calls. $K/fail makes every
	# call fail with its text; $K/fail-annotate only the annotate calls.
	cat >"$BIN/kubectl" <<'EOF'
#!/bin/sh
printf '%s\n' "$*" >>"$K/calls"
if [ -e "$K/fail" ]; then cat "$K/fail" >&2; exit 1; fi
case "$1 $2" in
"get node")
	[ "$4 $5" = "-o json" ] || { echo "stand-in kubectl: unexpected: $*" >&2; exit 3; }
	if [ "$3" != "$(jq -r '.metadata.name?' "$K/node.json" 2>/dev/null)" ]; then
		echo "Error from server (NotFound): nodes \"$3\" not found" >&2
		exit 1
	fi
	cat "$K/node.json"
	;;
"annotate node")
	if [ -e "$K/fail-annotate" ]; then cat "$K/fail-annotate" >&2; exit 1; fi
	case $4 in
	*=*)
		[ "$5" = --overwrite ] || { echo "stand-in kubectl: no --overwrite: $*" >&2; exit 3; }
		jq --arg k "${4%%=*}" --arg v "${4#*=}" '.metadata.annotations[$k] = $v' "$K/node.json"
		;;
	*-) jq --arg k "${4%-}" 'del(.metadata.annotations[$k])' "$K/node.json" ;;
	*) echo "stand-in kubectl: unexpected: $*" >&2; exit 3 ;;
	esac >"$K/node.new" && mv "$K/node.new" "$K/node.json"
	echo "node/$3 annotated"
	;;
*) echo "stand-in kubectl: unexpected: $*" >&2; exit 3 ;;
esac
EOF
	# chroot: records the rebuild it was asked to run, exits with $K/chroot-rc.
	cat >"$BIN/chroot" <<'EOF'
#!/bin/sh
printf '%s\n' "$*" >>"$K/rebuilds"
echo "dracut: stand-in output"
exit "$(cat "$K/chroot-rc")"
EOF
	chmod +x "$BIN/kubectl" "$BIN/chroot"
	export K
}

# A loop left running by a failed test must not outlive it (bats would wait for it).
teardown() {
	if [ -n "${pid-}" ]; then
		kill "$pid" 2>/dev/null || true
	fi
}

# node VALUE|--absent [ANNOTATION=VALUE...]: the node object the stand-in kubectl serves.
node() {
	local v=$1 a
	shift
	jq -n --arg name "$NODE" --arg v "$v" '{apiVersion: "v1", kind: "Node",
		metadata: {name: $name, labels: {"kubernetes.io/hostname": $name,
		"nvidia.com/gpu.present": "true"}, annotations: {"node.alpha.kubernetes.io/ttl": "0"}}}
		| if $v == "--absent" then . else .metadata.labels["nvidia.com/gpu.workload.config"] = $v end' \
		>"$K/node.json"
	for a in "$@"; do
		jq --arg k "${a%%=*}" --arg v "${a#*=}" '.metadata.annotations[$k] = $v' "$K/node.json" >"$K/n" &&
			mv "$K/n" "$K/node.json"
	done
}

# mirror ARGS...: the mirror against $ROOT with the stand-ins first on PATH, under `run`.
mirror() {
	run env PATH="$BIN:$PATH" NODE_NAME="$NODE" GPUVM_HOST="$ROOT" GPUVM="$GPUVM" "$MIRROR" "$@"
}

# annotation KEY: its value on the served node, "absent" when it is not there.
annotation() {
	jq -r --arg k "$1" '.metadata.annotations[$k] // "absent"' "$K/node.json"
}

annotate_calls() {
	grep -c '^annotate ' "$K/calls" || true
}

with_dracut_module() {
	mkdir -p "$ROOT/usr/lib/dracut/modules.d/90gpuvm"
}

# The file's identity and content, to prove it was not rewritten.
ident() {
	stat -c '%i %Y %s' "$CONF"
	cat "$CONF"
}

@test "label changed: config rewritten, initramfs rebuilt in the host, reboot marked" {
	with_dracut_module
	node vm-passthrough
	GPUVM_REBUILD=auto mirror --once
	assert_success
	assert_output --partial "label nvidia.com/gpu.workload.config=vm-passthrough: host config mode container -> vm-passthrough; reboot needed: this boot runs container, the next one vm-passthrough"
	assert_output --partial "initramfs rebuilt (chroot $ROOT dracut -f --regenerate-all)"
	assert_output --partial "annotated gpuvm.nvidia.com/reboot-required=true"
	# comments and order kept, the value changed
	[ "$(cat "$CONF")" = "$(printf '# provisioned\nmode=vm-passthrough')" ]
	# the rebuild ran once, chrooted into the host root
	[ "$(cat "$K/rebuilds")" = "$ROOT dracut -f --regenerate-all" ]
	[ "$(annotation gpuvm.nvidia.com/reboot-required)" = true ]
	# noted before the rebuild, cleared after it succeeded
	[ "$(annotation gpuvm.nvidia.com/initramfs-rebuild-required)" = absent ]
	grep -qx "annotate node $NODE gpuvm.nvidia.com/initramfs-rebuild-required=true --overwrite --request-timeout=30s" "$K/calls"
	grep -qx "annotate node $NODE gpuvm.nvidia.com/initramfs-rebuild-required- --request-timeout=30s" "$K/calls"
	# other annotations untouched
	[ "$(annotation node.alpha.kubernetes.io/ttl)" = 0 ]
}

@test "label changed, GPUVM_REBUILD=never (the default): no rebuild, the node says the initramfs is stale" {
	with_dracut_module
	node vm-vgpu
	mirror --once
	assert_success
	assert_output --partial "GPUVM_REBUILD=never: run dracut -f on the node before rebooting"
	grep -qx "mode=vm-vgpu" "$CONF"
	[ ! -s "$K/rebuilds" ]
	[ "$(annotation gpuvm.nvidia.com/initramfs-rebuild-required)" = true ]
	[ "$(annotation gpuvm.nvidia.com/reboot-required)" = true ]
	# a second pass finds both marks in place: no call but the read
	: >"$K/calls"
	mirror --once
	assert_success
	[ "$(annotate_calls)" = 0 ]
	[ ! -s "$K/rebuilds" ]
}

@test "label changed on a host without the dracut module: no rebuild, no rebuild mark" {
	node vm-passthrough
	GPUVM_REBUILD=auto mirror --once
	assert_success
	grep -qx "mode=vm-passthrough" "$CONF"
	[ ! -s "$K/rebuilds" ]
	refute_output --partial initramfs
	[ "$(annotation gpuvm.nvidia.com/initramfs-rebuild-required)" = absent ]
	[ "$(annotation gpuvm.nvidia.com/reboot-required)" = true ]
}

@test "a failed rebuild stays marked and is retried at the next pass, though the config is unchanged" {
	with_dracut_module
	node vm-passthrough
	echo 1 >"$K/chroot-rc"
	GPUVM_REBUILD=auto mirror --once
	assert_failure 1
	assert_output --partial "error: initramfs rebuild failed (exit 1: chroot $ROOT dracut -f --regenerate-all): dracut: stand-in output; retried at the next pass"
	grep -qx "mode=vm-passthrough" "$CONF"
	[ "$(annotation gpuvm.nvidia.com/initramfs-rebuild-required)" = true ]
	[ "$(annotation gpuvm.nvidia.com/reboot-required)" = true ]
	echo 0 >"$K/chroot-rc"
	GPUVM_REBUILD=auto mirror --once
	assert_success
	assert_output --partial "host config already has mode vm-passthrough"
	assert_output --partial "initramfs rebuilt"
	[ "$(wc -l <"$K/rebuilds")" = 2 ]
	[ "$(annotation gpuvm.nvidia.com/initramfs-rebuild-required)" = absent ]
	[ "$(annotation gpuvm.nvidia.com/reboot-required)" = true ]
}

@test "label unchanged: the file is not rewritten, no annotate call, no rebuild" {
	with_dracut_module
	node container
	before=$(ident)
	GPUVM_REBUILD=auto mirror --once
	assert_success
	assert_output --partial "host config already has mode container; the running boot is already in container"
	[ "$(ident)" = "$before" ]
	[ "$(cat "$K/calls")" = "get node $NODE -o json --request-timeout=30s" ]
	[ ! -s "$K/rebuilds" ]
}

@test "label unchanged and the boot already in that mode: a stale reboot mark is cleared" {
	node container gpuvm.nvidia.com/reboot-required=true
	before=$(ident)
	mirror --once
	assert_success
	assert_output --partial "removed annotation gpuvm.nvidia.com/reboot-required"
	[ "$(annotation gpuvm.nvidia.com/reboot-required)" = absent ]
	[ "$(ident)" = "$before" ]
}

@test "label back to the running mode: config rewritten, reboot mark cleared" {
	"$GPUVM" --root "$ROOT" config set mode=vm-passthrough >/dev/null
	node container gpuvm.nvidia.com/reboot-required=true
	mirror --once
	assert_success
	assert_output --partial "host config mode vm-passthrough -> container; the running boot is already in container"
	grep -qx "mode=container" "$CONF"
	[ "$(annotation gpuvm.nvidia.com/reboot-required)" = absent ]
}

@test "no state file (gpuvm did not run at boot): a change is marked for reboot, no change is not" {
	rm -f "$ROOT/run/gpuvm/state.json"
	node container
	mirror --once
	assert_success
	assert_output --partial "takes effect at the next boot"
	[ "$(annotate_calls)" = 0 ]
	node vm-passthrough
	mirror --once
	assert_success
	[ "$(annotation gpuvm.nvidia.com/reboot-required)" = true ]
}

@test "label absent: the host config is left alone, no file is made, no annotate call" {
	"$GPUVM" --root "$ROOT" config set mode=vm-passthrough >/dev/null
	node --absent gpuvm.nvidia.com/reboot-required=true
	before=$(ident)
	mirror --once
	assert_success
	assert_output --partial "label nvidia.com/gpu.workload.config absent: host config left alone (mode vm-passthrough)"
	[ "$(ident)" = "$before" ]
	[ "$(annotate_calls)" = 0 ]
	[ "$(annotation gpuvm.nvidia.com/reboot-required)" = true ]
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
	node vm-passthrough gpuvm.nvidia.com/reboot-required=true
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

@test "kubectl failing, or serving something else: logged, nothing changed, exit 1" {
	node vm-passthrough
	before=$(ident)
	echo "error: You must be logged in to the server (Unauthorized)" >"$K/fail"
	mirror --once
	assert_failure 1
	assert_output --partial "error: cannot read node $NODE: error: You must be logged in to the server (Unauthorized); host config left alone"
	rm "$K/fail"
	echo '{"kind": "Status", "metadata": {"name": "gpu-node-1"}}' >"$K/node.json"
	mirror --once
	assert_failure 1
	assert_output --partial "error: kubectl gave no Node object named $NODE"
	echo 'not json at all' >"$K/node.json"
	mirror --once
	assert_failure 1
	assert_output --partial "host config left alone"
	[ "$(ident)" = "$before" ]
	[ "$(annotate_calls)" = 0 ]
}

@test "an annotate call that fails is logged and fails the pass; the config is still written" {
	node vm-passthrough
	echo 'Error from server (Forbidden): nodes "gpu-node-1" is forbidden' >"$K/fail-annotate"
	mirror --once
	assert_failure 1
	assert_output --partial "error: cannot annotate gpuvm.nvidia.com/reboot-required=true: Error from server (Forbidden)"
	grep -qx "mode=vm-passthrough" "$CONF"
}

@test "a kernel command line that sets gpuvm.mode is warned about" {
	echo "intel_iommu=on iommu=pt gpuvm.mode=container" >"$ROOT/proc/cmdline"
	node vm-passthrough
	mirror --once
	assert_success
	assert_output --partial "warning: the kernel command line sets gpuvm.mode, which overrides the host config"
	# gpuvm judges by the mode in force: the boot is already in it, no reboot mark
	assert_output --partial "the running boot is already in container"
	[ "$(annotation gpuvm.nvidia.com/reboot-required)" = absent ]
}

@test "the loop survives an invalid label, follows it once fixed, is quiet when nothing changes" {
	node bogus
	env PATH="$BIN:$PATH" NODE_NAME="$NODE" GPUVM_HOST="$ROOT" GPUVM="$GPUVM" \
		"$MIRROR" --interval 1 2>"$BATS_TEST_TMPDIR/log" >/dev/null 3>&- &
	pid=$!
	for _ in $(seq 1 100); do
		[ "$(grep -c "='bogus' is not" "$BATS_TEST_TMPDIR/log")" -ge 2 ] && break
		sleep 0.1
	done
	# an error is logged at every pass; the loop goes on
	[ "$(grep -c "='bogus' is not" "$BATS_TEST_TMPDIR/log")" -ge 2 ]
	kill -0 "$pid"
	grep -qx "mode=container" "$CONF"
	node vm-vgpu
	for _ in $(seq 1 100); do
		grep -qx "mode=vm-vgpu" "$CONF" && break
		sleep 0.1
	done
	grep -qx "mode=vm-vgpu" "$CONF"
	# three more passes that find nothing new log nothing new
	n=$(grep -c '^get ' "$K/calls")
	for _ in $(seq 1 100); do
		[ "$(grep -c '^get ' "$K/calls")" -ge $((n + 3)) ] && break
		sleep 0.1
	done
	[ "$(grep -c '^get ' "$K/calls")" -ge $((n + 3)) ]
	# the change once, then at most one "already" line
	[ "$(grep -c 'host config mode container -> vm-vgpu' "$BATS_TEST_TMPDIR/log")" = 1 ]
	[ "$(grep -c 'workload.config=vm-vgpu' "$BATS_TEST_TMPDIR/log")" = 2 ]
}

@test "TERM while the loop sleeps ends it at once, with status 0" {
	node container
	env PATH="$BIN:$PATH" NODE_NAME="$NODE" GPUVM_HOST="$ROOT" GPUVM="$GPUVM" \
		"$MIRROR" --interval 300 2>"$BATS_TEST_TMPDIR/log" >/dev/null 3>&- &
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
	[ "$(grep -c '^get ' "$K/calls")" = 1 ]
}

@test "usage errors exit 2 before touching anything" {
	node vm-passthrough
	run env PATH="$BIN:$PATH" GPUVM_HOST="$ROOT" GPUVM="$GPUVM" "$MIRROR" --once
	assert_failure 2
	assert_output --partial "NODE_NAME is not set"
	GPUVM_REBUILD=always mirror --once
	assert_failure 2
	GPUVM_LABEL_ABSENT=vm mirror --once
	assert_failure 2
	mirror --interval 0
	assert_failure 2
	mirror --frob
	assert_failure 2
	run env PATH="$BIN:$PATH" NODE_NAME="$NODE" GPUVM_HOST="$ROOT/nowhere" "$MIRROR" --once
	assert_failure 2
	[ ! -s "$K/calls" ]
	grep -qx "mode=container" "$CONF"
	mirror --help
	assert_success
	assert_output --partial "Usage: gpuvm-label-mirror"
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
docs = [d for f in sorted(glob.glob(os.path.join(deploy, "**", "*.yaml"), recursive=True))
        for d in yaml.safe_load_all(open(f)) if d]
kinds = {}
for d in docs:
    assert d.get("apiVersion") and d.get("kind") and d["metadata"].get("name"), d
    kinds.setdefault(d["kind"], []).append(d)
sa = kinds["ServiceAccount"][0]["metadata"]
rules = kinds["ClusterRole"][0]["rules"]
assert rules == [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "patch"]}], rules
for ds in kinds["DaemonSet"]:
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
    print(ds["metadata"]["name"], sorted(env))
print(len(docs), "documents")
EOF
	assert_success
	assert_line --regexp '^gpuvm-label-mirror'
	assert_line --regexp '^[1-9][0-9]* documents$'
}
