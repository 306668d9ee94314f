#!/usr/bin/env bats
# shellcheck disable=SC2154 # $stderr and $output are set by bats' run
# A fleet rollout of the label mirror where most GPU nodes have no gpuvm: the shipped DaemonSet
# (mirror/deploy/overlays/default, rendered by kubectl kustomize) placed on a simulated fleet,
# each node's host a fixture tree, every mirror the real script against one API stand-in that
# serves all the nodes. Two parts stand for what no machine here runs: the scheduler's
# nodeAffinity (required terms, ORed; expressions ANDed: In, NotIn, Exists, DoesNotExist, and a
# nodeSelector besides) and the kubelet's hostPath types (Directory: the path must be there, or
# the pod does not start (FailedMount); DirectoryOrCreate or none: the path is made). Both are
# the documented rules, applied to the manifest as shipped, so a manifest that selects every GPU
# node, or makes its host paths, fails here. Fixture and helpers: mirror.bash.

load helpers
load ../api/standin
load mirror

# The DaemonSet as shipped: its node selection and its host paths, as JSON.
render() {
	need python3-yaml /usr/bin/python3 -c 'import yaml'
	command -v kubectl >/dev/null || skip "no kubectl on this machine (kubectl kustomize renders the overlay)"
	kubectl kustomize "$TOP/mirror/deploy/overlays/default" >"$K/rendered.yaml"
	/usr/bin/python3 - "$K/rendered.yaml" >"$K/ds.json" <<'PY'
import json, sys, yaml
ds = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d["kind"] == "DaemonSet"][0]
spec = ds["spec"]["template"]["spec"]
aff = spec.get("affinity", {}).get("nodeAffinity", {}).get("requiredDuringSchedulingIgnoredDuringExecution", {})
json.dump({"nodeSelector": spec.get("nodeSelector", {}), "terms": aff.get("nodeSelectorTerms", []),
           "hostPaths": [v["hostPath"] for v in spec["volumes"] if "hostPath" in v]}, sys.stdout)
PY
}

# schedules NODE: the DaemonSet's selection holds for the node's labels (the store's object).
schedules() {
	/usr/bin/python3 - "$K/ds.json" "$STORE/api/v1/nodes/$1.json" <<'PY'
import json, sys
ds, node = (json.load(open(f)) for f in sys.argv[1:3])
labels = node["metadata"].get("labels", {})
def expr(e):
    k, op, vals = e["key"], e["operator"], e.get("values", [])
    return {"In": k in labels and labels[k] in vals, "NotIn": k not in labels or labels[k] not in vals,
            "Exists": k in labels, "DoesNotExist": k not in labels}[op]
ok = all(labels.get(k) == v for k, v in ds["nodeSelector"].items())
if ds["terms"]:
    ok = ok and any(all(expr(e) for e in t.get("matchExpressions", [])) for t in ds["terms"])
sys.exit(0 if ok else 1)
PY
}

# mounts HOST: the kubelet's hostPath volumes for a pod on the host tree HOST; 1 (FailedMount)
# when a path of type Directory is not a directory there; a path it would make, made.
mounts() {
	local path type
	while IFS=$'\t' read -r path type; do
		case $type in
		Directory) [ -d "$1$path" ] || return 1 ;;
		DirectoryOrCreate | '') mkdir -p "$1$path" ;;
		*) [ -e "$1$path" ] || return 1 ;;
		esac
	done < <(jq -r '.hostPaths[] | "\(.path)\t\(.type // "")"' "$K/ds.json")
}

# fleet_node NAME [LABEL=VALUE...] [@ANNOTATION=VALUE...]: a GPU node as the GPU Operator
# labels it, in the store.
fleet_node() {
	local n=$1 a
	shift
	jq -n --arg name "$n" '{apiVersion: "v1", kind: "Node", metadata: {name: $name,
		uid: ("uid-" + $name), labels: {"kubernetes.io/hostname": $name, "nvidia.com/gpu.present": "true"},
		annotations: {}}, status: {conditions: [{type: "Ready", status: "True"}]}}' >"$STORE/api/v1/nodes/$n.json"
	for a in "$@"; do
		case $a in
		@*) jq --arg k "${a%%=*}" --arg v "${a#*=}" '.metadata.annotations[$k[1:]] = $v' ;;
		*) jq --arg k "${a%%=*}" --arg v "${a#*=}" '.metadata.labels[$k] = $v' ;;
		esac <"$STORE/api/v1/nodes/$n.json" >"$K/n" && mv "$K/n" "$STORE/api/v1/nodes/$n.json"
	done
}

# host NAME KIND: the node's host, a copy of the fixture: gpuvm (installed and booted with, mode
# container), fresh (the package installed, not yet booted with: its directories, no boot.json),
# removed (the package removed, its config and this boot's /run left), none (no gpuvm ever).
host() {
	local h="$BATS_TEST_TMPDIR/hosts/$1"
	mkdir -p "${h%/*}"
	cp -a "$ROOT" "$h"
	case $2 in
	gpuvm) ;;
	fresh) rm -f "$h/run/gpuvm/boot.json" "$h/run/gpuvm/state.json" ;;
	removed) uninstall_gpuvm "$h" ;;
	none)
		uninstall_gpuvm "$h"
		rm -rf "${h:?}/etc/gpuvm" "${h:?}/run/gpuvm" "${h:?}/run/gpuvm-reboot"
		;;
	esac
}

@test "a rollout over a fleet most of whose GPU nodes have no gpuvm reboots only the nodes whose mode changes" {
	render
	mkdir -p "$ROOT/run/gpuvm-reboot" # what gpuvm's tmpfiles.d makes on its hosts
	cpol sandboxWorkloads.enabled=true sandboxWorkloads.defaultWorkload='"vm-passthrough"' vfioManager.enabled=false
	# NAME KIND LABELS...: the fleet, and what each host has
	while read -r n kind labels; do
		# shellcheck disable=SC2086 # the labels are words
		fleet_node "$n" $labels
		host "$n" "$kind"
	done <<'EOF'
gpu-a gpuvm gpuvm.dev/installed=true nvidia.com/gpu.workload.config=container
gpu-b gpuvm feature.node.kubernetes.io/gpuvm-mode=container nvidia.com/gpu.workload.config=container @gpuvm.dev/desired-mode=vm-passthrough
gpu-c none nvidia.com/gpu.workload.config=container
gpu-d none nvidia.com/gpu.workload.config=vm-passthrough
gpu-e none
gpu-f none gpuvm.dev/installed=true nvidia.com/gpu.workload.config=vm-passthrough
gpu-g removed feature.node.kubernetes.io/gpuvm-mode=container nvidia.com/gpu.workload.config=vm-passthrough
gpu-h fresh gpuvm.dev/installed=true nvidia.com/gpu.workload.config=vm-passthrough
EOF
	mkdir -p "$K/before"
	for h in "$BATS_TEST_TMPDIR"/hosts/*; do
		snap "$h" >"$K/before/${h##*/}"
	done
	# The rollout: the scheduler places a pod, the kubelet mounts its host paths, the mirror
	# runs two passes (a rollout's first minutes).
	: >"$K/ran"
	for h in "$BATS_TEST_TMPDIR"/hosts/*; do
		n=${h##*/}
		schedules "$n" || continue
		if ! mounts "$h"; then
			echo "$n FailedMount" >>"$K/ran"
			continue
		fi
		# shellcheck disable=SC2034 # NODE and BOOTID: the mirror helpers' (mirror.bash)
		NODE=$n ROOT=$h BOOTID=$h/proc/sys/kernel/random/boot_id
		mirror --once
		echo "$n $status" >>"$K/ran"
		mirror --once
		echo "$n $status" >>"$K/ran"
	done
	# Pods on the four nodes that say they have gpuvm; on the one labelled so by hand with no
	# gpuvm, the pod does not start.
	[ "$(cat "$K/ran")" = "$(printf '%s\n' 'gpu-a 0' 'gpu-a 0' 'gpu-b 0' 'gpu-b 0' 'gpu-f FailedMount' 'gpu-g 0' 'gpu-g 0' 'gpu-h 0' 'gpu-h 0')" ]
	# Reboots asked for: the node whose desired mode changes, and the one installed but not yet
	# booted with gpuvm (its one reboot); none elsewhere.
	for h in "$BATS_TEST_TMPDIR"/hosts/*; do
		n=${h##*/}
		[ -e "$h/$SENT" ] && echo "$n sentinel"
		jq -r --arg n "$n" '.metadata.annotations["gpuvm.dev/requested"] // empty | "\($n) \(.)"' \
			"$STORE/api/v1/nodes/$n.json"
	done >"$K/asked"
	[ "$(cat "$K/asked")" = "$(printf '%s\n' 'gpu-b sentinel' 'gpu-b vm-passthrough@11111111-1111-1111-1111-111111111111' \
		'gpu-h sentinel' 'gpu-h vm-passthrough@11111111-1111-1111-1111-111111111111')" ]
	# Every host without gpuvm is as it was: nothing made, written or removed. The one with
	# gpuvm whose mode does not change keeps its host config as it was (the only thing made
	# there is config set's lock file beside it).
	snap "$BATS_TEST_TMPDIR/hosts/gpu-a" | grep -v '/etc/gpuvm\( \|/\.gpuvm\.lock\)' >"$K/a.after"
	grep -v '/etc/gpuvm\( \|/\.gpuvm\.lock\)' "$K/before/gpu-a" | diff - "$K/a.after"
	for n in gpu-c gpu-d gpu-e gpu-f gpu-g; do
		snap "$BATS_TEST_TMPDIR/hosts/$n" | diff - "$K/before/$n" || fail "$n's host changed"
	done
	# The one with gpuvm removed says so, once: an annotation and one Event.
	[ "$(jq -r '.metadata.annotations["gpuvm.dev/error"]' "$STORE/api/v1/nodes/gpu-g.json")" = gpuvm-not-installed ]
	[ "$(requests '.method == "POST" and .code == 201' | jq -r '.body | fromjson | "\(.involvedObject.name) \(.reason)"' |
		grep -c '^gpu-g ')" = 1 ]
	# No API write about a node that has no pod.
	[ "$(requests '.method != "GET"' | jq -r '.path' | grep -c -e gpu-c -e gpu-d -e gpu-e -e gpu-f)" = 0 ]
}
