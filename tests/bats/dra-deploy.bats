#!/usr/bin/env bats
# shellcheck disable=SC2154 # $stderr and $output are set by bats' run
# dra/deploy, gpuvm-dra's kustomize component (doc/dra.md, "Deploy"): rendered with
# `kubectl kustomize` beside the label mirror's install and checked with Debian's python3-yaml:
# the DeviceClass selects the driver the plugin publishes, the DaemonSet runs the plugin from
# the mirror's image on the mirror's nodes with the host paths its defaults write (taken from
# the plugin's own --help), unprivileged, the RBAC is the file dra.bats proves against the API
# stand-in, and the admission policy's expressions name the plugin's account, the token's node
# and the slice's node. The policy's CEL is NOT evaluated here (the API stand-in has no CEL
# engine): its text is checked. The examples (a ResourceClaimTemplate, a KubeVirt 1.9 VMI)
# name each other's claim, request and class.

load helpers

DRA=${GPUVM_DRA:-$TOP/build/gpuvm-dra}
DDIR=$TOP/dra/deploy

# kustomize: as deploy.bats: a kubectl whose kustomize renders components (v4 or later).
kustomize() {
	[ "$GPUVM" = "$TOP/build/gpuvm" ] || skip "runs no \$GPUVM: make test-arm64 adds nothing here"
	need python3-yaml /usr/bin/python3 -c 'import yaml'
	command -v kubectl >/dev/null || skip "no kubectl on this machine (kubectl kustomize renders the overlays)"
	local v
	v=$(kubectl version --client -o json 2>/dev/null | jq -r '.kustomizeVersion // empty')
	case $v in
	v[4-9].* | v[1-9][0-9].*) ;;
	*) skip "kubectl's kustomize is '${v:-unknown}': the overlays need v4 or later (components)" ;;
	esac
}

# py SCRIPT ARGS...: python3 with yaml, the script on stdin.
py() {
	/usr/bin/python3 - "$@"
}

setup() {
	kustomize
	RENDERED=$BATS_TEST_TMPDIR/dra.yaml
	kubectl kustomize "$DDIR/overlays/default" >"$RENDERED" || fail "kubectl kustomize dra/deploy/overlays/default failed"
	MIRROR=$BATS_TEST_TMPDIR/mirror.yaml
	kubectl kustomize "$TOP/mirror/deploy/overlays/default" >"$MIRROR" || fail "the mirror's install does not render"
}

@test "the install: the mirror's, unchanged, and the component's objects beside it, all in gpuvm-system" {
	run py "$RENDERED" "$MIRROR" <<'PY'
import sys, yaml
dra = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
mirror = [d for d in yaml.safe_load_all(open(sys.argv[2])) if d]
key = lambda d: (d["kind"], d["metadata"].get("namespace", ""), d["metadata"]["name"])
m = {key(d): d for d in mirror}
for d in dra:
    if key(d) in m and m[key(d)] != d:
        sys.exit("the component changed the mirror's %r" % (key(d),))
new = sorted(key(d) for d in dra if key(d) not in m)
assert len(dra) == len(mirror) + len(new), "an object of the mirror's is gone"
for k in new:
    print("%s %s %s" % k)
PY
	assert_success
	assert_output "$(printf '%s\n' \
		'ClusterRole  gpuvm-dra' \
		'ClusterRoleBinding  gpuvm-dra' \
		'DaemonSet gpuvm-system gpuvm-dra' \
		'DeviceClass  vfio.gpuvm.dev' \
		'Role default gpuvm-dra-events' \
		'RoleBinding default gpuvm-dra-events' \
		'ServiceAccount gpuvm-system gpuvm-dra' \
		'ValidatingAdmissionPolicy  gpuvm-dra-own-node' \
		'ValidatingAdmissionPolicyBinding  gpuvm-dra-own-node')"
}

@test "the DeviceClass selects the driver the plugin registers and publishes" {
	[ -x "$DRA" ] || fail "no $DRA: make build/gpuvm-dra"
	run py "$RENDERED" <<'PY'
import sys, yaml
c = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d["kind"] == "DeviceClass"]
assert len(c) == 1 and c[0]["apiVersion"] == "resource.k8s.io/v1", c
print(c[0]["metadata"]["name"])
for s in c[0]["spec"]["selectors"]:
    print(s["cel"]["expression"])
PY
	assert_success
	assert_output "$(printf '%s\n' vfio.gpuvm.dev 'device.driver == "vfio.gpuvm.dev"')"
	# the plugin's own name for itself (its --help: "driver vfio.gpuvm.dev")
	run "$DRA" --help
	assert_output --partial '(driver vfio.gpuvm.dev)'
}

@test "the DaemonSet: the plugin from the mirror's image, on the mirror's nodes, NODE_NAME, --alive, unprivileged, the host paths its defaults write" {
	[ -x "$DRA" ] || fail "no $DRA: make build/gpuvm-dra"
	# The folders the plugin writes by default (its --help), each must be a writable mount.
	local writes
	writes=$("$DRA" --help | sed -n 's/.*default \(\/[^ ]*\).*/\1/p' | tr '\n' ' ')
	[ -n "$writes" ] || fail "no default path in gpuvm-dra --help"
	run py "$RENDERED" "$writes" <<'PY'
import os, sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
ds = {d["metadata"]["name"]: d for d in docs if d["kind"] == "DaemonSet"}
p, m = ds["gpuvm-dra"]["spec"]["template"]["spec"], ds["gpuvm-label-mirror"]["spec"]["template"]["spec"]
c, mc = p["containers"][0], m["containers"][0]
assert c["image"] == mc["image"], "not the mirror's image: %s" % c["image"]
assert c["command"] == ["/usr/bin/gpuvm-dra"] and "args" not in c, c.get("command")
assert p["affinity"] == m["affinity"], "not the mirror's nodes"
assert p["tolerations"] == [{"operator": "Exists"}]
sas = [d for d in docs if d["kind"] == "ServiceAccount" and d["metadata"]["name"] == p["serviceAccountName"]]
assert sas and sas[0]["metadata"]["namespace"] == ds["gpuvm-dra"]["metadata"]["namespace"] == "gpuvm-system"
assert c["env"] == [{"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}], c["env"]
assert c["livenessProbe"]["exec"]["command"] == ["/usr/bin/gpuvm-dra", "--alive"]
assert c["livenessProbe"]["timeoutSeconds"] > 5, "the probe waits 5 s for the plugin"
sc = c["securityContext"]
assert sc["privileged"] is False and sc["allowPrivilegeEscalation"] is False
assert sc["readOnlyRootFilesystem"] is True and sc["capabilities"] == {"drop": ["ALL"]}
assert not any(p.get(k) for k in ("hostPID", "hostIPC", "hostNetwork"))
assert c["resources"]["requests"]["memory"] and c["resources"]["limits"]["memory"]
vols = {v["name"]: v["hostPath"] for v in p["volumes"]}
mounts = {}
for v in c["volumeMounts"]:
    hp = vols[v["name"]]
    assert hp["path"] == v["mountPath"], "%s: the host's %s at %s: the same path in and out" % (v["name"], hp["path"], v["mountPath"])
    mounts[v["mountPath"]] = (v.get("readOnly", False), hp["type"])
    print("%s %s %s" % (v["mountPath"], "ro" if v.get("readOnly") else "rw", hp["type"]))
for w in sys.argv[2].split():
    d = os.path.dirname(w) if w.endswith(".sock") else w
    owner = [x for x in mounts if d == x or d.startswith(x + "/")]
    assert owner and not mounts[owner[0]][0], "the plugin writes %s: no writable mount holds it" % w
PY
	assert_success
	assert_output "$(printf '%s\n' \
		'/var/lib/kubelet/plugins_registry rw Directory' \
		'/var/lib/kubelet/plugins/vfio.gpuvm.dev rw DirectoryOrCreate' \
		'/var/run/cdi rw DirectoryOrCreate' \
		'/sys ro Directory' \
		'/dev/vfio ro Directory' \
		'/run/gpuvm ro Directory')"
}

@test "the RBAC is dra/deploy/component/rbac.yaml, the file dra.bats proves verb by verb against the API stand-in" {
	run py "$RENDERED" "$DDIR/component/rbac.yaml" <<'PY'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
want = [d for d in yaml.safe_load_all(open(sys.argv[2])) if d]
for w in want:
    got = [d for d in docs if d["kind"] == w["kind"] and d["metadata"]["name"] == w["metadata"]["name"]]
    assert got == [w], "%s %s rendered otherwise" % (w["kind"], w["metadata"]["name"])
role = [w for w in want if w["kind"] == "ClusterRole"][0]
for r in role["rules"]:
    print("%s %s %s" % (",".join(r["apiGroups"]) or "core", ",".join(r["resources"]), ",".join(r["verbs"])))
PY
	assert_success
	assert_output "$(printf '%s\n' 'resource.k8s.io resourceclaims get' \
		'resource.k8s.io resourceslices list,create,update,delete' 'core nodes get')"
}

# Not evaluated: no CEL here. The expressions are read as text: they must name the plugin's
# account (the DaemonSet's, the RBAC's subject), the token's node name, the slice's node (the
# old object's for a DELETE), and deny on a mismatch and on a token without a node.
@test "the admission policy (text only, not evaluated): the plugin's writes of slices, its token's node, the slice's spec.nodeName" {
	run py "$RENDERED" <<'PY'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
pol = [d for d in docs if d["kind"] == "ValidatingAdmissionPolicy" and d["metadata"]["name"] == "gpuvm-dra-own-node"][0]
b = [d for d in docs if d["kind"] == "ValidatingAdmissionPolicyBinding" and d["metadata"]["name"] == "gpuvm-dra-own-node"][0]
ds = [d for d in docs if d["kind"] == "DaemonSet" and d["metadata"]["name"] == "gpuvm-dra"][0]
crb = [d for d in docs if d["kind"] == "ClusterRoleBinding" and d["metadata"]["name"] == "gpuvm-dra"][0]
assert pol["apiVersion"] == b["apiVersion"] == "admissionregistration.k8s.io/v1"
s = pol["spec"]
assert s["failurePolicy"] == "Fail"
rr = s["matchConstraints"]["resourceRules"]
assert rr == [{"apiGroups": ["resource.k8s.io"], "apiVersions": ["*"],
               "operations": ["CREATE", "UPDATE", "DELETE"], "resources": ["resourceslices"]}], rr
sa = "system:serviceaccount:%s:%s" % (ds["metadata"]["namespace"], ds["spec"]["template"]["spec"]["serviceAccountName"])
subj = crb["subjects"][0]
assert sa == "system:serviceaccount:%s:%s" % (subj["namespace"], subj["name"])
mc = s["matchConditions"]
assert len(mc) == 1 and mc[0]["expression"] == 'request.userInfo.username == "%s"' % sa, mc
v = {x["name"]: x["expression"] for x in s["variables"]}
assert v["userNodeName"] == "request.userInfo.extra[?'authentication.kubernetes.io/node-name'][0].orValue('')", v
assert v["objectNodeName"] == "(request.operation == 'DELETE' ? oldObject : object).spec.?nodeName.orValue('')", v
exprs = [x["expression"] for x in s["validations"]]
assert exprs == ["variables.userNodeName != ''", "variables.objectNodeName == variables.userNodeName"], exprs
assert b["spec"] == {"policyName": pol["metadata"]["name"], "validationActions": ["Deny"]}, b
print("ok")
PY
	assert_success
	assert_output ok
}

@test "the examples: the VMI's GPU names its claim and the template's request, the template the DeviceClass" {
	run py "$DDIR/examples/resourceclaimtemplate.yaml" "$DDIR/examples/vmi.yaml" "$DDIR/component/deviceclass.yaml" <<'PY'
import sys, yaml
t, vmi, dc = (yaml.safe_load(open(f)) for f in sys.argv[1:4])
assert t["apiVersion"] == "resource.k8s.io/v1" and t["kind"] == "ResourceClaimTemplate"
assert vmi["apiVersion"] == "kubevirt.io/v1" and vmi["kind"] == "VirtualMachineInstance"
assert t["metadata"]["namespace"] == vmi["metadata"]["namespace"]
reqs = {r["name"]: r["exactly"] for r in t["spec"]["spec"]["devices"]["requests"]}
claims = {c["name"]: c for c in vmi["spec"]["resourceClaims"]}
for g in vmi["spec"]["domain"]["devices"]["gpus"]:
    assert set(g) == {"name", "claimName", "requestName"}, "a DRA GPU: no deviceName"
    c = claims[g["claimName"]]
    assert c["resourceClaimTemplateName"] == t["metadata"]["name"]
    r = reqs[g["requestName"]]
    assert r["deviceClassName"] == dc["metadata"]["name"]
    for s in r.get("selectors", []):
        assert 'device.attributes["vfio.gpuvm.dev"]' in s["cel"]["expression"]
    print(g["name"], g["claimName"], g["requestName"], r["deviceClassName"])
PY
	assert_success
	assert_output 'gpu0 gpu-claim gpu vfio.gpuvm.dev'
}
