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
	# and `annotate node NAME K-` edit it. `get --raw /apis/nvidia.com/v1/clusterpolicies` serves
	# $K/cps.json (the GPU Operator's ClusterPolicy list); without it the API server has no such
	# resource (NotFound, as without the operator's CRD); $K/fail-cp makes it fail with its text.
	# Every call is logged in $K/calls. $K/fail makes every call fail with its text;
	# $K/fail-annotate only the annotate calls.
	cat >"$BIN/kubectl" <<'EOF'
#!/bin/sh
printf '%s\n' "$*" >>"$K/calls"
if [ -e "$K/fail" ]; then cat "$K/fail" >&2; exit 1; fi
case "$1 $2" in
"get --raw")
	[ "$3" = /apis/nvidia.com/v1/clusterpolicies ] || { echo "stand-in kubectl: unexpected: $*" >&2; exit 3; }
	if [ -e "$K/fail-cp" ]; then cat "$K/fail-cp" >&2; exit 1; fi
	if [ ! -e "$K/cps.json" ]; then
		echo "Error from server (NotFound): the server could not find the requested resource" >&2
		exit 1
	fi
	cat "$K/cps.json"
	;;
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
	# chroot: records the rebuild it was asked to run, exits with $K/chroot-rc. `chroot ROOT
	# gpuvm ARGS` (the live switch) runs the real gpuvm on the tree instead: --root ROOT ARGS.
	cat >"$BIN/chroot" <<'EOF'
#!/bin/sh
if [ "$2" = gpuvm ]; then
	printf '%s\n' "$*" >>"$K/lives"
	root=$1
	shift 2
	exec "$GPUVM" --root "$root" "$@"
fi
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

# label KEY=VALUE...: set node labels on the served node; KEY- removes one.
label() {
	local a
	for a in "$@"; do
		case $a in
		*=*) jq --arg k "${a%%=*}" --arg v "${a#*=}" '.metadata.labels[$k] = $v' "$K/node.json" ;;
		*-) jq --arg k "${a%-}" 'del(.metadata.labels[$k])' "$K/node.json" ;;
		esac >"$K/n" && mv "$K/n" "$K/node.json"
	done
}

# cpol [KEY=VALUE...]: the ClusterPolicy list the stand-in kubectl serves: one policy,
# cluster-policy, as the Helm chart makes it with its defaults (sandboxWorkloads off,
# defaultWorkload container, vfioManager on), each KEY=VALUE a JSON value set at .spec.KEY.
cpol() {
	local a
	jq -n '{apiVersion: "nvidia.com/v1", kind: "ClusterPolicyList", items: [{apiVersion: "nvidia.com/v1",
		kind: "ClusterPolicy", metadata: {name: "cluster-policy", creationTimestamp: "2026-05-04T10:00:00Z"},
		spec: {sandboxWorkloads: {enabled: false, defaultWorkload: "container", mode: "kubevirt"},
		vfioManager: {enabled: true}, sandboxDevicePlugin: {enabled: true}}}]}' >"$K/cps.json"
	for a in "$@"; do
		jq --arg k "${a%%=*}" --argjson v "${a#*=}" '.items[0].spec |= setpath($k | split("."); $v)' \
			"$K/cps.json" >"$K/c" && mv "$K/c" "$K/cps.json"
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

# Debian's and Ubuntu's initramfs-tools: gpuvm names update-initramfs, the mirror runs it.
@test "label changed on an initramfs-tools host: update-initramfs -u -k all in the host" {
	mkdir -p "$ROOT/usr/share/initramfs-tools/hooks" "$ROOT/etc/kernel/postinst.d"
	: >"$ROOT/usr/share/initramfs-tools/hooks/gpuvm"
	: >"$ROOT/etc/kernel/postinst.d/initramfs-tools"
	node vm-passthrough
	GPUVM_REBUILD=auto mirror --once
	assert_success
	assert_output --partial "initramfs rebuilt (chroot $ROOT update-initramfs -u -k all)"
	[ "$(cat "$K/rebuilds")" = "$ROOT update-initramfs -u -k all" ]
	node vm-vgpu
	mirror --once
	assert_success
	assert_output --partial "GPUVM_REBUILD=never: run update-initramfs -u -k all on the node before rebooting"
	[ "$(annotation gpuvm.nvidia.com/initramfs-rebuild-required)" = true ]
}

@test "label changed, GPUVM_REBUILD=never (the default): no rebuild, the node says the initramfs is stale" {
	with_dracut_module
	node vm-vgpu
	mirror --once
	assert_success
	assert_output --partial "GPUVM_REBUILD=never: run dracut -f --regenerate-all on the node before rebooting"
	grep -qx "mode=vm-vgpu" "$CONF"
	[ ! -s "$K/rebuilds" ]
	[ "$(annotation gpuvm.nvidia.com/initramfs-rebuild-required)" = true ]
	# no reboot while the image holds the old config: kured would boot the old mode again
	assert_output --partial "reboot held until the initramfs is rebuilt"
	[ "$(annotation gpuvm.nvidia.com/reboot-required)" = absent ]
	# a second pass finds the mark in place: no call but the read
	: >"$K/calls"
	mirror --once
	assert_success
	[ "$(annotate_calls)" = 0 ]
	[ ! -s "$K/rebuilds" ]
	# no stale copy any more (here: the module gone, so gpuvm asks for no dracut -f): the reboot
	rm -r "$ROOT/usr/lib/dracut/modules.d/90gpuvm"
	mirror --once
	assert_success
	[ "$(annotation gpuvm.nvidia.com/initramfs-rebuild-required)" = absent ]
	[ "$(annotation gpuvm.nvidia.com/reboot-required)" = true ]
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
	[ "$(annotation gpuvm.nvidia.com/reboot-required)" = absent ] # held until rebuilt
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
	# the node and the GPU Operator's ClusterPolicies are read, nothing else
	[ "$(cat "$K/calls")" = "$(printf '%s\n' "get node $NODE -o json --request-timeout=30s" \
		"get --raw /apis/nvidia.com/v1/clusterpolicies --request-timeout=30s")" ]
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

# kured (kubereboot/kured 1.23): reboots a node while its --reboot-sentinel file exists (its
# DaemonSet mounts the host's /var/run at /sentinel) or its --reboot-sentinel-command exits 0.
# The mirror's sentinel lives on the host's /run: a boot removes it; the mirror removes it when
# the reboot is no longer needed, and only the file it wrote.
SENT=run/gpuvm-reboot/reboot-required

@test "kured: the sentinel is written with the reboot mark, kept while it is due, removed with it" {
	mkdir -p "$ROOT/run/gpuvm-reboot"
	node vm-passthrough
	mirror --once
	assert_success
	assert_output --partial "wrote the reboot sentinel $ROOT/$SENT (kured)"
	[ "$(annotation gpuvm.nvidia.com/reboot-required)" = true ]
	grep -qx "gpuvm-label-mirror: node $NODE: the next boot puts the GPUs in vm-passthrough (label nvidia.com/gpu.workload.config=vm-passthrough)" "$ROOT/$SENT"
	# removed by hand (or by a boot that did not change the mode): written again
	rm "$ROOT/$SENT"
	mirror --once
	assert_success
	[ -e "$ROOT/$SENT" ]
	# the label back to the mode the boot runs: the mark and the sentinel go
	node container gpuvm.nvidia.com/reboot-required=true
	mirror --once
	assert_success
	assert_output --partial "removed the reboot sentinel $ROOT/$SENT"
	[ ! -e "$ROOT/$SENT" ]
	[ "$(annotation gpuvm.nvidia.com/reboot-required)" = absent ]
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
	[ "$(annotation gpuvm.nvidia.com/reboot-required)" = true ]
	rmdir "$ROOT/run/gpuvm-reboot"
	mirror --once
	assert_success
	assert_output --partial "note: no directory $ROOT/run/gpuvm-reboot"
}

# gpuvm config set exit 6: written, but the next boot will not apply it. A stand-in gpuvm runs
# the real one and, while $K/why6 exists, answers config set as gpuvm does then: those lines,
# exit 6.
stand_in_gpuvm() {
	# shellcheck disable=SC2016 # the stand-in's own $* and $rc
	{
		echo '#!/bin/sh'
		echo "\"$GPUVM\" \"\$@\""
		echo 'rc=$?'
		echo 'case " $* " in *" config set "*) ;; *) exit $rc ;; esac'
		echo "[ -e \"$K/why6\" ] || exit \$rc"
		echo "cat \"$K/why6\""
		echo 'exit 6'
	} >"$BIN/gpuvm6"
	chmod +x "$BIN/gpuvm6"
}

mirror6() {
	run env PATH="$BIN:$PATH" NODE_NAME="$NODE" GPUVM_HOST="$ROOT" GPUVM="$BIN/gpuvm6" "$MIRROR" --once
}

@test "exit 6: no reboot is asked for, the error is annotated each pass with gpuvm's reason, and cleared once gone" {
	mkdir -p "$ROOT/run/gpuvm-reboot"
	stand_in_gpuvm
	echo "next boot: no gpuvm: its initramfs /boot/initrd.img-6.1.0-28-amd64 has no gpuvm" >"$K/why6"
	node vm-passthrough gpuvm.nvidia.com/reboot-required=true
	mirror6
	assert_failure 1 # an error, logged every pass (a loop logs a failed pass even unchanged)
	assert_output --partial "error: next boot: no gpuvm: its initramfs /boot/initrd.img-6.1.0-28-amd64 has no gpuvm: rebuild the initramfs with gpuvm"
	[ "$(annotation gpuvm.nvidia.com/error)" = next-boot-without-gpuvm ]
	[ "$(annotation gpuvm.nvidia.com/reboot-required)" = absent ]
	[ ! -e "$ROOT/$SENT" ]
	grep -qx "mode=vm-passthrough" "$CONF" # written all the same
	# the boot line overrides the label too
	printf '%s\n' "note: the kernel command line sets mode, which overrides the file" \
		"next boot: gpuvm runs in container" >"$K/why6"
	mirror6
	assert_failure 1
	assert_output --partial "error: the kernel command line sets gpuvm.mode, which overrides the host config: the label cannot take effect"
	[ "$(annotation gpuvm.nvidia.com/error)" = cmdline-overrides-label ]
	# fixed on the host: exit 0 again, the error goes and the reboot is asked for
	rm "$K/why6"
	mirror6
	assert_success
	[ "$(annotation gpuvm.nvidia.com/error)" = absent ]
	[ "$(annotation gpuvm.nvidia.com/reboot-required)" = true ]
	[ -e "$ROOT/$SENT" ]
}

# The same with the real gpuvm judging a real (fixture) initramfs and GRUB's defaults.
@test "exit 6 from the real gpuvm: an initramfs without gpuvm, then a boot line that pins the mode" {
	kv=$(basename "$(find "$ROOT/lib/modules" -mindepth 1 -maxdepth 1 -type d | head -n 1)")
	mkinitrd "$ROOT/boot/initrd.img-$kv" --no-gpuvm
	node vm-passthrough
	mirror --once
	assert_failure 1
	assert_output --partial "error: next boot: no gpuvm: /boot/initrd.img-$kv has no gpuvm"
	[ "$(annotation gpuvm.nvidia.com/error)" = next-boot-without-gpuvm ]
	[ "$(annotation gpuvm.nvidia.com/reboot-required)" = absent ]
	# rebuilt: gpuvm in it, with the host config's copy
	mkinitrd "$ROOT/boot/initrd.img-$kv" --conf mode=vm-passthrough
	mkdir -p "$ROOT/etc/default"
	echo 'GRUB_CMDLINE_LINUX="intel_iommu=on gpuvm.mode=container"' >"$ROOT/etc/default/grub"
	mirror --once
	assert_failure 1
	assert_output --partial "the label cannot take effect on this node until gpuvm.mode= is removed from /etc/default/grub"
	[ "$(annotation gpuvm.nvidia.com/error)" = cmdline-overrides-label ]
	echo 'GRUB_CMDLINE_LINUX="intel_iommu=on iommu=pt"' >"$ROOT/etc/default/grub"
	mirror --once
	assert_success
	[ "$(annotation gpuvm.nvidia.com/error)" = absent ]
	[ "$(annotation gpuvm.nvidia.com/reboot-required)" = true ]
}

# The GPU Operator (gpu-operator v26.7.0, k8s-driver-manager v0.12.0): its vfio-manager runs
# where the node has nvidia.com/gpu.deploy.vfio-manager=true and the ClusterPolicy enables
# sandboxWorkloads and vfioManager; its init container and preStop hook unbind every GPU.
W=gpuvm.nvidia.com/warning

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
	grep -qx "get --raw /apis/nvidia.com/v1/clusterpolicies --request-timeout=30s" "$K/calls"
	# a second pass finds the mark in place: no annotate call
	: >"$K/calls"
	mirror --once
	assert_success
	[ "$(annotate_calls)" = 0 ]
	# the operator honours a node label it did not set: no vfio-manager, no warning
	label nvidia.com/gpu.deploy.vfio-manager=false
	mirror --once
	assert_success
	assert_output --partial "removed annotation $W"
	refute_output --partial "vfio-manager runs"
	[ "$(annotation "$W")" = absent ]
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

@test "operator: ClusterPolicy forbidden (403): not an error; the vfio-manager judged by the node label alone" {
	node vm-passthrough
	label nvidia.com/gpu.deploy.vfio-manager=true
	cpol sandboxWorkloads.enabled=true
	echo 'Error from server (Forbidden): clusterpolicies.nvidia.com is forbidden: User "system:serviceaccount:gpuvm-system:gpuvm-label-mirror" cannot list resource "clusterpolicies" in API group "nvidia.com" at the cluster scope' >"$K/fail-cp"
	mirror --once
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
	done
	cpol sandboxWorkloads.enabled=true
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
	rm "$K/cps.json"
	node vm-passthrough "$W=sandbox-workloads-disabled"
	mirror --once
	assert_success
	[ "$(annotation "$W")" = absent ]
}

@test "operator: a ClusterPolicy read that fails otherwise is a warning; the warning mark is left as it is" {
	node vm-passthrough "$W=vfio-manager"
	echo 'Unable to connect to the server: net/http: request canceled (Client.Timeout exceeded while awaiting headers)' >"$K/fail-cp"
	mirror --once
	assert_success
	assert_output --partial "warning: cannot read the ClusterPolicy: Unable to connect to the server"
	run ! grep -q "^annotate .*$W" "$K/calls"
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
	echo 'Error from server (Forbidden): clusterpolicies.nvidia.com is forbidden' >"$K/fail-cp"
	before=$(ident)
	mirror --once
	assert_success
	assert_output --partial "label nvidia.com/gpu.workload.config absent: host config left alone (mode vm-passthrough); the ClusterPolicy cannot be read, so GPUVM_LABEL_ABSENT=auto keeps the config"
	rm "$K/fail-cp"
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
	jq -n '{kind: "ClusterPolicyList", items: [
		{metadata: {name: "b-newer", creationTimestamp: "2026-06-01T00:00:00Z"},
		 spec: {sandboxWorkloads: {enabled: true, defaultWorkload: "vm-vgpu"}}},
		{metadata: {name: "z-oldest", creationTimestamp: "2026-01-01T00:00:00Z"},
		 spec: {sandboxWorkloads: {enabled: true, defaultWorkload: "vm-passthrough"}}},
		{metadata: {name: "a-newest", creationTimestamp: "2026-07-01T00:00:00Z"},
		 spec: {sandboxWorkloads: {enabled: true, defaultWorkload: "container"}}}]}' >"$K/cps.json"
	mirror --once
	assert_success
	assert_output --partial "ClusterPolicy z-oldest sandboxWorkloads.defaultWorkload=vm-passthrough"
	grep -qx "mode=vm-passthrough" "$CONF"
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
	n=$(grep -c '^get node ' "$K/calls")
	for _ in $(seq 1 100); do
		[ "$(grep -c '^get node ' "$K/calls")" -ge $((n + 3)) ] && break
		sleep 0.1
	done
	[ "$(grep -c '^get node ' "$K/calls")" -ge $((n + 3)) ]
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
	[ "$(grep -c '^get node ' "$K/calls")" = 1 ]
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
# Least privilege: get and patch on nodes; list on the GPU Operator's ClusterPolicies, in a role
# of its own that can be left out (the mirror then judges by node labels alone).
roles = {r["metadata"]["name"]: r["rules"] for r in kinds["ClusterRole"]}
assert roles == {
    "gpuvm-label-mirror": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "patch"]}],
    "gpuvm-label-mirror-clusterpolicy": [{"apiGroups": ["nvidia.com"], "resources": ["clusterpolicies"],
                                          "verbs": ["list"]}]}, roles
bound = {b["roleRef"]["name"]: b["subjects"] for b in kinds["ClusterRoleBinding"]}
assert set(bound) == set(roles), bound
for subjects in bound.values():
    assert subjects == [{"kind": "ServiceAccount", "name": sa["name"], "namespace": sa["namespace"]}]
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
    assert env["GPUVM_LABEL_ABSENT"]["value"] == "auto"
    print(ds["metadata"]["name"], sorted(env))
print(len(docs), "documents")
EOF
	assert_success
	assert_line --regexp '^gpuvm-label-mirror'
	assert_line --regexp '^[1-9][0-9]* documents$'
}

# GPUVM_LIVE=auto (issue 21): the change tried live with the host's gpuvm (`chroot HOST gpuvm
# apply --live`, here the real build/gpuvm on the tree); a GPU in use falls back to the reboot.
@test "GPUVM_LIVE=auto: a free GPU switches live, no reboot asked for, the state file says so" {
	SENT=run/gpuvm-reboot/reboot-required
	mkdir -p "$ROOT/run/gpuvm-reboot"
	node vm-passthrough
	GPUVM_LIVE=auto mirror --once
	assert_success
	[ "$(cat "$K/lives")" = "$ROOT gpuvm apply --live" ]
	assert_output --partial "live switch to vm-passthrough done (chroot $ROOT gpuvm apply --live): no reboot needed"
	[ "$(annotation gpuvm.nvidia.com/reboot-required)" = absent ]
	[ ! -e "$ROOT/$SENT" ]
	[ "$(jq -r .mode "$ROOT/run/gpuvm/state.json")" = vm-passthrough ]
	[ "$(cat "$ROOT/sys/bus/pci/devices/0000:01:00.0/driver_override")" = vfio-pci ]
	# the next pass: the running boot is in the mode; nothing more to do
	mirror --once
	assert_success
	assert_output --partial "the running boot is already in vm-passthrough"
	[ "$(wc -l <"$K/lives")" -eq 1 ]
}

@test "GPUVM_LIVE=auto: a GPU in use refuses, the reboot is marked; once free, the next pass switches and clears it" {
	SENT=run/gpuvm-reboot/reboot-required
	mkdir -p "$ROOT/run/gpuvm-reboot" "$ROOT/proc/4242/fd"
	mkdir -p "$ROOT/sys/bus/pci/devices/0000:01:00.0/drm/card1"
	printf '226:1\n' >"$ROOT/sys/bus/pci/devices/0000:01:00.0/drm/card1/dev"
	printf 'Xorg\n' >"$ROOT/proc/4242/comm"
	ln -s /dev/dri/card1 "$ROOT/proc/4242/fd/5"
	node vm-passthrough
	GPUVM_LIVE=auto mirror --once
	assert_success
	assert_output --partial "live switch to vm-passthrough refused, a GPU in use (exit 7: 0000:01:00.0: in use: /dev/dri/card1 (0000:01:00.0) held by pid 4242 (Xorg)"
	assert_output --partial "annotated gpuvm.nvidia.com/reboot-required=true"
	[ "$(annotation gpuvm.nvidia.com/reboot-required)" = true ]
	[ -e "$ROOT/$SENT" ]
	[ "$(cat "$ROOT/sys/bus/pci/devices/0000:01:00.0/driver_override")" = "(null)" ]
	# the state file keeps the mode the host is in: config set still asks for the reboot
	[ "$(jq -r .mode "$ROOT/run/gpuvm/state.json")" = container ]
	GPUVM_LIVE=auto mirror --once
	assert_success
	assert_output --partial "reboot needed: this boot runs container, the next one vm-passthrough"
	assert_output --partial "refused, a GPU in use"
	[ "$(annotation gpuvm.nvidia.com/reboot-required)" = true ]
	# the holder is gone: switched live, the mark and the sentinel removed
	rm "$ROOT/proc/4242/fd/5"
	GPUVM_LIVE=auto mirror --once
	assert_success
	assert_output --partial "live switch to vm-passthrough done"
	assert_output --partial "removed annotation gpuvm.nvidia.com/reboot-required"
	assert_output --partial "removed the reboot sentinel $ROOT/$SENT"
	[ "$(annotation gpuvm.nvidia.com/reboot-required)" = absent ]
	[ ! -e "$ROOT/$SENT" ]
	[ "$(wc -l <"$K/lives")" -eq 3 ]
}

@test "GPUVM_LIVE=never (the default): no live switch; GPUVM_LIVE_CMD replaces the command; a bad value is a usage error" {
	node vm-passthrough
	mirror --once
	assert_success
	[ ! -e "$K/lives" ]
	[ "$(annotation gpuvm.nvidia.com/reboot-required)" = true ]
	[ "$(cat "$ROOT/sys/bus/pci/devices/0000:01:00.0/driver_override")" = "(null)" ]
	# a failing command: a warning, the reboot mark stays
	node vm-vgpu
	GPUVM_LIVE=auto GPUVM_LIVE_CMD='echo "gpuvm: error: stand-in failure" >&2; exit 1' mirror --once
	assert_success
	assert_output --partial "warning: live switch to vm-vgpu failed (exit 1: "
	assert_output --partial "stand-in failure): a reboot applies it"
	[ "$(annotation gpuvm.nvidia.com/reboot-required)" = true ]
	GPUVM_LIVE=sometimes mirror --once
	assert_failure 2
	assert_output --partial "GPUVM_LIVE must be auto or never, got 'sometimes'"
}
