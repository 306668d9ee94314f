# shellcheck shell=bash
# shellcheck disable=SC2154 # $stderr and $output are set by bats' run
# The label mirror's suites (mirror.bats, mirror-guard.bats): the fixture, the API stand-in,
# the stand-ins on PATH and the helpers both use. Loaded after helpers and ../api/standin.
#
# mirror/gpuvm-label-mirror: the node's desired mode into the host config, through build/gpuvm,
# against a fixture root standing for the host's /, with the API stand-in (tests/api/: HTTPS, a
# bearer token, the RBAC mirror/deploy ships, objects from files, every request recorded)
# that the mirror's own curl calls reach, a boot id file standing for the host kernel's, and
# boot.json files in the layout doc/DESIGN.md and gpuvm(8) give.
#
# gpuvm is the real binary throughout (config get, config set and its "reboot:" and "next
# boot:" lines, the live switch); a boot-line pin is a real GRUB or kernel-install file of the
# tree (pin), and the boot id is the tree's /proc/sys/kernel/random/boot_id, which both the
# mirror (GPUVM_BOOT_ID_FILE) and gpuvm --root read. boot.json files are written in gpuvm's
# layout (bootjson) or copied from real QEMU boots (tests/fixture/boot).

MIRROR="${MIRROR:-$TOP/mirror/gpuvm-label-mirror}"
NODE=gpu-node-1
SENT=run/gpuvm-reboot/reboot-required

# One fixture for the file: the workstation tree with mode=container applied, so its
# /run/gpuvm/state.json says the running boot is in container. One API stand-in for the file.
setup_file() {
	standin_start
	local base="$BATS_FILE_TMPDIR/base"
	"$TOP/tests/fixture/mkfixture" "$base" workstation >/dev/null
	mkdir -p "$base/etc/gpuvm"
	printf '# provisioned\nmode=container\n' >"$base/etc/gpuvm/gpuvm.conf"
	# gpuvm installed on the host, as the package lays it out: the binary and dracut's module
	# (the mirror reads the host's /usr to tell)
	install_gpuvm "$base"
	"$GPUVM" --root "$base" --cmdline "" apply >/dev/null 2>&1
	[ "$(jq -r .mode "$base/run/gpuvm/state.json")" = container ]
	cp "$base/run/gpuvm/state.json" "$BATS_FILE_TMPDIR/state.json"
	# the version of build/gpuvm, which boot.json and state.json of the fixture say
	GV=$("$GPUVM" --version | sed -n '1s/^gpuvm //p')
	export GV
}

teardown_file() {
	standin_stop
}

# install_gpuvm ROOT [dracut|itools]: what the package puts under the host's /usr that the mirror
# looks for: the binary and the boot integration. uninstall_gpuvm ROOT: gone again (a package
# removed, its config directory left: dpkg keeps a changed conffile).
install_gpuvm() {
	mkdir -p "$1/usr/sbin"
	cp "$GPUVM" "$1/usr/sbin/gpuvm"
	case ${2:-dracut} in
	dracut)
		mkdir -p "$1/usr/lib/dracut/modules.d/90gpuvm"
		cp "$TOP/dracut/90gpuvm/module-setup.sh" "$1/usr/lib/dracut/modules.d/90gpuvm/"
		;;
	itools)
		mkdir -p "$1/usr/share/initramfs-tools/hooks"
		cp "$TOP/initramfs-tools/hooks/gpuvm" "$1/usr/share/initramfs-tools/hooks/"
		;;
	esac
}
uninstall_gpuvm() {
	rm -rf "$1/usr/sbin/gpuvm" "$1/usr/lib/dracut/modules.d/90gpuvm" "$1/usr/share/initramfs-tools/hooks/gpuvm"
}

setup() {
	ROOT="$BATS_TEST_TMPDIR/root"
	cp -a "$BATS_FILE_TMPDIR/base" "$ROOT"
	CONF="$ROOT/etc/gpuvm/gpuvm.conf"
	K="$BATS_TEST_TMPDIR/k8s"
	BIN="$BATS_TEST_TMPDIR/bin"
	mkdir -p "$K" "$BIN"
	standin_vars
	standin_reset
	CPD="$STORE/apis/nvidia.com/v1/clusterpolicies" # the GPU Operator's CRD: there when it is
	# the host kernel's boot id (GPUVM_BOOT_ID_FILE), and a boot.json of this boot
	BOOTID="$ROOT/proc/sys/kernel/random/boot_id"
	mkdir -p "${BOOTID%/*}"
	echo 11111111-1111-1111-1111-111111111111 >"$BOOTID"
	bootjson container noop conf
	cp "$BATS_FILE_TMPDIR/state.json" "$ROOT/run/gpuvm/state.json" # the real apply's

	# kubectl: the mirror must never run it (it speaks to the API itself); teardown checks.
	printf '#!/bin/sh\necho "$*" >>"%s/kubectl-ran"\nexit 99\n' "$K" >"$BIN/kubectl"
	# chroot: `chroot ROOT gpuvm ARGS` (the live switch) runs the real gpuvm on the tree:
	# --root ROOT ARGS.
	cat >"$BIN/chroot" <<'EOF'
#!/bin/sh
[ "$2" = gpuvm ] || { echo "stand-in chroot: unexpected: $*" >&2; exit 3; }
printf '%s\n' "$*" >>"$K/lives"
root=$1
shift 2
exec "$GPUVM" --root "$root" "$@"
EOF
	chmod +x "$BIN/kubectl" "$BIN/chroot"
	export K
}

# bootjson MODE RESULT SOURCE [HOST_CONFIG [WHY [ERROR]]]: /run/gpuvm/boot.json (and state.json,
# the same document, as the boot path writes both) in the SPEC's layout, of the boot in $BOOTID.
# SOURCE: cmdline | default | conf (the root's file: /etc/gpuvm/gpuvm.conf:2). GPUS (the
# environment): the selection that boot ran, gpus= of the root's file (none without it).
bootjson() {
	local src=$3
	[ "$src" != conf ] || src=/etc/gpuvm/gpuvm.conf:2
	mkdir -p "$ROOT/run/gpuvm"
	jq -n --arg mode "$1" --arg result "$2" --arg src "$src" --arg hc "${4:-read}" \
		--arg why "${5:-}" --arg err "${6:-}" --arg id "$(cat "$BOOTID")" --arg v "$GV" \
		--arg gpus "${GPUS-}" \
		'{version: $v, command: "apply", result: $result, mode: $mode, mode_source: $src,
		settings: ({mode: {value: $mode, source: $src}} + if $gpus == "" then {} else
			{gpus: {value: $gpus, source: "/etc/gpuvm/gpuvm.conf:3"}} end), devices: [],
		errors: (if $err == "" then [] else [$err, "a second error"] end), warnings: [],
		boot: {boot_id: $id, stage: "root", decided: true, host_config: $hc,
		sysroot: "/sysroot", why: (if $why == "" then null else $why end)}}' \
		>"$ROOT/run/gpuvm/boot.json"
	cp "$ROOT/run/gpuvm/boot.json" "$ROOT/run/gpuvm/state.json"
}

# reboot: what a boot does to the tree before gpuvm runs: a new boot id, /run emptied (a tmpfs:
# the sentinel and boot.json gone; state.json kept, standing for what the boot writes again).
nboots=0
reboot() {
	nboots=$((nboots + 1))
	printf '22222222-2222-2222-2222-%012d\n' "$nboots" >"$BOOTID"
	rm -f "$ROOT/$SENT" "$ROOT/run/gpuvm/boot.json"
}

# pin MODE FILE: a boot-loader file of the tree that pins gpuvm.mode=MODE (/etc/default/grub
# or /etc/kernel/cmdline); unpin: none.
pin() {
	mkdir -p "$ROOT/etc/default" "$ROOT/etc/kernel"
	case $2 in
	/etc/default/grub) printf 'GRUB_CMDLINE_LINUX="quiet gpuvm.mode=%s"\n' "$1" >"$ROOT$2" ;;
	/etc/kernel/cmdline) printf 'root=/dev/sda1 gpuvm.mode=%s\n' "$1" >"$ROOT$2" ;;
	esac
}
unpin() {
	rm -f "$ROOT/etc/default/grub" "$ROOT/etc/kernel/cmdline"
}

# A loop left running by a failed test must not outlive it (bats would wait for it). The
# mirror never ran kubectl.
teardown() {
	if [ -n "${pid-}" ]; then
		kill "$pid" 2>/dev/null || true
	fi
	if [ -e "$K/kubectl-ran" ]; then
		echo "the mirror ran kubectl: $(cat "$K/kubectl-ran")"
		return 1
	fi
}

# node VALUE|--absent [ANNOTATION=VALUE...]: the node object the stand-in serves, from
# $STORE/api/v1/nodes/$NODE.json.
node() {
	local v=$1
	shift
	jq -n --arg name "$NODE" --arg v "$v" '{apiVersion: "v1", kind: "Node",
		metadata: {name: $name, uid: "5f0c3a6e-9d1b-4c2e-8a7f-0123456789ab", resourceVersion: "100",
		creationTimestamp: "2026-01-01T00:00:00Z", labels: {"kubernetes.io/hostname": $name,
		"nvidia.com/gpu.present": "true"}, annotations: {"node.alpha.kubernetes.io/ttl": "0"}},
		status: {conditions: [{type: "Ready", status: "True"}], nodeInfo: {kubeletVersion: "v1.32.1"}}}
		| if $v == "--absent" then . else .metadata.labels["nvidia.com/gpu.workload.config"] = $v end' \
		>"$STORE/api/v1/nodes/$NODE.json"
	node_edit annotations "$@"
}

# node_edit FIELD KEY=VALUE|KEY-...: set or remove labels or annotations (FIELD) of the
# served node.
node_edit() {
	local f=$1 a
	shift
	for a in "$@"; do
		case $a in
		*=*) jq --arg f "$f" --arg k "${a%%=*}" --arg v "${a#*=}" '.metadata[$f][$k] = $v' "$STORE/api/v1/nodes/$NODE.json" ;;
		*-) jq --arg f "$f" --arg k "${a%-}" 'del(.metadata[$f][$k])' "$STORE/api/v1/nodes/$NODE.json" ;;
		esac >"$K/n" && mv "$K/n" "$STORE/api/v1/nodes/$NODE.json"
	done
}

# label KEY=VALUE...: set node labels on the served node; KEY- removes one.
label() {
	node_edit labels "$@"
}

# cpol [KEY=VALUE...]: the GPU Operator's CRD and one ClusterPolicy the stand-in serves,
# cluster-policy, as the Helm chart makes it with its defaults (sandboxWorkloads off,
# defaultWorkload container, vfioManager on, vgpuManager off), each KEY=VALUE a JSON value set
# at .spec.KEY. `rm -r "$CPD"`: no such CRD.
cpol() {
	local a f="$CPD/cluster-policy.json"
	mkdir -p "$CPD"
	jq -n '{apiVersion: "nvidia.com/v1", kind: "ClusterPolicy",
		metadata: {name: "cluster-policy", creationTimestamp: "2026-05-04T10:00:00Z"},
		spec: {sandboxWorkloads: {enabled: false, defaultWorkload: "container", mode: "kubevirt"},
		vfioManager: {enabled: true}, vgpuManager: {enabled: false}, sandboxDevicePlugin: {enabled: true}}}' >"$f"
	for a in "$@"; do
		jq --arg k "${a%%=*}" --argjson v "${a#*=}" '.spec |= setpath($k | split("."); $v)' \
			"$f" >"$K/c" && mv "$K/c" "$f"
	done
}

# The mirror's environment: the tree, the stand-ins first on PATH, the API stand-in with the
# service account's token and the stand-in's CA.
menv() {
	MENV=(PATH="$BIN:$PATH" NODE_NAME="$NODE" GPUVM_HOST="$ROOT" GPUVM="$GPUVM"
		GPUVM_BOOT_ID_FILE="$BOOTID" GPUVM_API_SERVER="${GPUVM_API_SERVER:-$SERVER}"
		GPUVM_API_TOKEN_FILE="${GPUVM_API_TOKEN_FILE:-$API/token}"
		GPUVM_API_CA_FILE="${GPUVM_API_CA_FILE:-$API/tls/ca.crt}")
}

# mirror ARGS...: the mirror against $ROOT and the API stand-in, under `run`.
# The KubeVirt entries are the tree's (--root), not this machine's /sys.
mirror() {
	menv
	run env "${MENV[@]}" \
		GPUVM_KUBEVIRT_CMD="${KV_CMD:-"'$GPUVM' --root '$ROOT' --cmdline '' kubevirt --json"}" \
		"$MIRROR" "$@"
}

# annotation KEY: its value on the served node, "absent" when it is not there.
annotation() {
	jq -r --arg k "$1" '.metadata.annotations[$k] // "absent"' "$STORE/api/v1/nodes/$NODE.json"
}

# admin_annotate K=V|K-...: edit the served node as an admin would.
admin_annotate() {
	node_edit annotations "$@"
}

# patches: the PATCHes of the node the mirror sent, one "CONTENT-TYPE BODY" a line (the body
# as compact JSON).
patches() {
	jq -r 'select(.method == "PATCH") | "\(.content_type) \(.body | fromjson | tojson)"' "$API/requests.jsonl"
}

annotate_calls() {
	patches | grep -c '"annotations"' || true
}

# The same, but for the node's KubeVirt entries and pinned set (gpuvm.dev/kubevirt, gpuvm.dev/pinned),
# published on their own.
request_calls() {
	patches | grep '"annotations"' | grep -v '"gpuvm.dev/kubevirt"' | grep -vc '"gpuvm.dev/pinned"' || true
}

label_calls() {
	patches | grep -c '"labels"' || true
}

get_node_calls() {
	requests '.method == "GET" and .path == "/api/v1/nodes/'"$NODE"'"' | wc -l
}

# The watch loop's reads of its node: the list of it (to start, to resync), and its watches.
list_calls() {
	requests '.verb == "list" and .path == "/api/v1/nodes" and .query == "fieldSelector=metadata.name%3D'"$NODE"'&resourceVersion=0"' | wc -l
}

watch_calls() {
	requests '.verb == "watch" and .path == "/api/v1/nodes"' | wc -l
}

# events: the Events the mirror created (the stand-in answered 201), one "TYPE REASON: MESSAGE"
# a line.
events() {
	jq -r 'select(.method == "POST" and .code == 201) | .body | fromjson
		| "\(.type) \(.reason): \(.message)"' "$API/requests.jsonl"
}

# The file's identity and content, to prove it was not rewritten.
ident() {
	stat -c '%i %Y %s' "$CONF"
	cat "$CONF"
}

# snap DIR: every path under DIR with its type, mode, size, time and content's hash: equal
# before and after means nothing there was written, made or removed.
snap() {
	(cd "$1" && find . -printf '%p %y %m %s %T@\n' | LC_ALL=C sort &&
		find . -type f -exec sha256sum {} + | LC_ALL=C sort)
}
