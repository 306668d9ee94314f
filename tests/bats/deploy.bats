#!/usr/bin/env bats
# shellcheck disable=SC2154 # $stderr and $output are set by bats' run
# mirror/deploy, the label mirror's kustomize base, components and overlays (mirror/README.md,
# "Deploy"): each rendered with `kubectl kustomize` (the machine's kubectl; the overlays need
# kustomize v4 or later, for components) and checked with Debian's python3-yaml: every object
# parses, names and namespaces agree, the image is the one the overlay sets, the RBAC is the
# README's table, the admission policy is where the overlay says, and the DaemonSets are the
# files as they stand. Then the recipe of the README: an overlay of the installed files.

load helpers

VERSION=$(sed -n 's/^VERSION := //p' "$TOP/Makefile")
DEPLOY=$TOP/mirror/deploy

# kustomize: a kubectl whose kustomize renders components (v4 or later), or a skip that says
# which kustomize the machine has. Not a failure under CI=true: Debian 12's own kubectl (1.20,
# kustomize v2.0.3) is too old for any current cluster and for these overlays.
kustomize() {
	# make test-arm64 runs every suite again with GPUVM=tests/arm64/gpuvm-qemu.sh: this one runs
	# no $GPUVM, so that run would add nothing but time.
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

# render DIR: DIR rendered into $BATS_TEST_TMPDIR/NAME.yaml (NAME: DIR with / as -).
render() {
	local out
	out=$BATS_TEST_TMPDIR/$(printf '%s' "${1#"$DEPLOY"/}" | tr / -).yaml
	kubectl kustomize "$1" >"$out" || fail "kubectl kustomize $1 failed"
	printf '%s\n' "$out"
}

# check DIR RENDERED: the checks of one rendered kustomization (python3, below); prints one line
# "NAME: N objects, components C, image I".
check() {
	/usr/bin/python3 - "$1" "$2" "$TOP" "$VERSION" <<'PY'
import os, re, sys, yaml
kdir, rendered, top, version = sys.argv[1:]
deploy = os.path.join(top, "mirror", "deploy")
docs = [d for d in yaml.safe_load_all(open(rendered)) if d is not None]

def fail(msg):
    sys.exit("%s: %s" % (os.path.relpath(kdir, deploy), msg))

# The kustomization's components, images and DaemonSet patches (strategic merge, by name; not
# the live component's `$patch: replace`): its own and those of the kustomizations it names.
def walk(d, comps, images, patches):
    k = yaml.safe_load(open(os.path.join(d, "kustomization.yaml")))
    for r in k.get("resources", []):
        if os.path.isdir(os.path.join(d, r)):
            walk(os.path.normpath(os.path.join(d, r)), comps, images, patches)
    for c in k.get("components", []):
        c = os.path.normpath(os.path.join(d, c))
        comps.add("components/" + os.path.basename(c))  # in the tree or where it was installed
        walk(c, comps, images, patches)
    for i in k.get("images", []):
        images[i["name"]] = i
    for p in k.get("patches", []):
        for x in yaml.safe_load_all(open(os.path.join(d, p["path"]))):
            if x["kind"] == "DaemonSet" and "$patch" not in x["spec"]:
                patches.append(x)
comps, images, patches = set(), {}, []
walk(kdir, comps, images, patches)

# A strategic merge patch as kustomize applies these: maps merged key by key, a list of named
# maps (containers, env) merged by name, the new names first (where kustomize puts them), any
# other value replaced.
def smp(base, patch):
    if isinstance(base, dict) and isinstance(patch, dict):
        return dict(base, **{k: smp(base[k], v) if k in base else v for k, v in patch.items()})
    named = lambda l: isinstance(l, list) and all(isinstance(x, dict) and "name" in x for x in l)
    if named(base) and named(patch):
        byname = {x["name"]: x for x in patch}
        return [x for x in patch if x["name"] not in {y["name"] for y in base}] + \
            [smp(y, byname[y["name"]]) if y["name"] in byname else y for y in base]
    return patch

# Every object: apiVersion, kind, a name; none twice.
ids = set()
for d in docs:
    if not (d.get("apiVersion") and d.get("kind") and d.get("metadata", {}).get("name")):
        fail("an object without apiVersion, kind or name: %r" % d)
    i = (d["kind"], d["metadata"].get("namespace"), d["metadata"]["name"])
    if i in ids:
        fail("twice: %r" % (i,))
    ids.add(i)
kinds = {}
for d in docs:
    kinds.setdefault(d["kind"], []).append(d)
one = lambda k: (kinds.get(k) or fail("no %s" % k)) if len(kinds.get(k, [])) == 1 else fail("%d %s" % (len(kinds.get(k, [])), k))

ns = one("Namespace")[0]["metadata"]["name"]
sa = one("ServiceAccount")[0]["metadata"]
if sa.get("namespace") != ns:
    fail("the ServiceAccount is in %r, the Namespace is %r" % (sa.get("namespace"), ns))
ds = one("DaemonSet")[0]
if ds["metadata"].get("namespace") != ns:
    fail("the DaemonSet is in %r, the Namespace is %r" % (ds["metadata"].get("namespace"), ns))
spec = ds["spec"]["template"]["spec"]
if spec["serviceAccountName"] != sa["name"]:
    fail("the DaemonSet runs as %r, the ServiceAccount is %r" % (spec["serviceAccountName"], sa["name"]))
sel = ds["spec"]["selector"]["matchLabels"]
if any(ds["spec"]["template"]["metadata"]["labels"].get(k) != v for k, v in sel.items()):
    fail("the DaemonSet's selector does not select its pods")
c = spec["containers"][0]
if not {m["name"] for m in c["volumeMounts"]} <= {v["name"] for v in spec["volumes"]}:
    fail("a mount without its volume")
env = {e["name"]: e for e in c["env"]}
if env["NODE_NAME"]["valueFrom"]["fieldRef"]["fieldPath"] != "spec.nodeName":
    fail("NODE_NAME is not the downward API's spec.nodeName")

# The image: registry.invalid/gpuvm-mirror:VERSION, or what the overlay's images: make of it.
want = "registry.invalid/gpuvm-mirror:" + version
i = images.get("registry.invalid/gpuvm-mirror")
if i:
    want = i.get("newName", "registry.invalid/gpuvm-mirror") + (
        "@" + i["digest"] if "digest" in i else ":" + i.get("newTag", version))
if c["image"] != want:
    fail("image %r, want %r" % (c["image"], want))

# The DaemonSet is the file it comes from as it stands: the base's, or with the live component
# the live one (its `$patch: replace` makes its spec the whole spec); with the patches of the
# overlay's components and its own (selinux, openshift), merged by name, and nothing else.
src = "components/live/daemonset.yaml" if "components/live" in comps else "base/daemonset.yaml"
f = yaml.safe_load(open(os.path.join(deploy, src)))
f["spec"].pop("$patch", None)
for p in patches:
    f = smp(f, p)
f["spec"]["template"]["spec"]["containers"][0]["image"] = want  # checked above
if ds != f:
    fail("the rendered DaemonSet is not %s%s" % (src, " with %d patches" % len(patches) if patches else ""))
live = "components/live" in comps
if bool(c["securityContext"].get("privileged")) != live:
    fail("privileged is %r" % c["securityContext"].get("privileged"))

# RBAC: the roles, their rules and where they come from, as mirror/README.md's table says; each
# role bound once, to the ServiceAccount alone.
readme = open(os.path.join(top, "mirror", "README.md")).read().split("\n")
start = next(n for n, l in enumerate(readme) if l.startswith("| role | kind | API group |"))
table = {}
for l in readme[start + 2:]:
    if not l.startswith("|"):
        break
    name, kind, group, res, verbs, where = [x.strip() for x in l.strip("|").split("|")]
    unq = lambda s: [x.strip().strip("`") for x in s.split(",")]
    where = unq(where)[0]
    if where.startswith("components/") and os.path.dirname(where) not in comps:
        continue
    group = "" if group.startswith("core") else unq(group)[0]
    table.setdefault((kind, unq(name)[0]), []).append(
        {"apiGroups": [group], "resources": unq(res), "verbs": unq(verbs)})
roles = {(d["kind"], d["metadata"]["name"]): d["rules"] for d in docs if d["kind"] in ("ClusterRole", "Role")}
# OpenShift's: `use` of the component's SCC, by name (a rule the README's table, without
# resourceNames, cannot say), where the overlay has the component and nowhere else.
scc = kinds.get("SecurityContextConstraints", [])
if ("components/openshift" in comps) != bool(scc):
    fail("SCC %s, components %r" % (bool(scc), sorted(comps)))
sccroles = {}
for s in scc:
    r = ("ClusterRole", "gpuvm-label-mirror-scc")
    sccroles[r] = roles.pop(r, None)
    if sccroles[r] != [{"apiGroups": ["security.openshift.io"], "resources": ["securitycontextconstraints"],
                        "resourceNames": [s["metadata"]["name"]], "verbs": ["use"]}]:
        fail("the SCC's role: %r" % sccroles[r])
if roles != table:
    fail("RBAC %r, the README says %r" % (roles, table))
bound = {}
for b in docs:
    if b["kind"] not in ("ClusterRoleBinding", "RoleBinding"):
        continue
    r = (b["roleRef"]["kind"], b["roleRef"]["name"])
    if r in bound:
        fail("%r bound twice" % (r,))
    bound[r] = b["subjects"]
    if b["subjects"] != [{"kind": "ServiceAccount", "name": sa["name"], "namespace": ns}]:
        fail("%s binds %r" % (b["metadata"]["name"], b["subjects"]))
if set(bound) != set(roles) | set(sccroles):
    fail("bound %r, roles %r" % (sorted(bound), sorted(set(roles) | set(sccroles))))

# The admission policy: where the overlay has its component, v1, matching this ServiceAccount
# by namespace and name, bound to deny.
vap = kinds.get("ValidatingAdmissionPolicy", [])
if ("components/admission-policy" in comps) != bool(vap):
    fail("admission policy %s, components %r" % (bool(vap), sorted(comps)))
for p in vap:
    if p["apiVersion"] != "admissionregistration.k8s.io/v1":
        fail("the admission policy is %s" % p["apiVersion"])
    user = "system:serviceaccount:%s:%s" % (ns, sa["name"])
    if not any('"%s"' % user in m["expression"] for m in p["spec"]["matchConditions"]):
        fail("the admission policy does not match %s" % user)
    b = one("ValidatingAdmissionPolicyBinding")[0]["spec"]
    if b["policyName"] != p["metadata"]["name"] or b["validationActions"] != ["Deny"]:
        fail("the policy's binding: %r" % b)

print("%s: %d objects, components %s, image %s" % (os.path.relpath(kdir, deploy), len(docs),
      ",".join(sorted(x.split("/")[1] for x in comps)) or "none", c["image"]))
PY
}

@test "every kustomization renders: objects parse, names and namespaces agree, the image, the RBAC of the README, the policy" {
	kustomize
	local d out
	for d in "$DEPLOY/base" "$DEPLOY"/overlays/*; do
		out=$(render "$d")
		run check "$d" "$out"
		assert_success
		echo "$output" >>"$BATS_TEST_TMPDIR/summary"
	done
	run cat "$BATS_TEST_TMPDIR/summary"
	assert_line "base: 7 objects, components none, image registry.invalid/gpuvm-mirror:$VERSION"
	assert_line "overlays/default: 11 objects, components admission-policy,gpu-operator, image registry.invalid/gpuvm-mirror:$VERSION"
	assert_line "overlays/pre-1.30: 9 objects, components gpu-operator, image registry.invalid/gpuvm-mirror:$VERSION"
	assert_line "overlays/live: 11 objects, components admission-policy,gpu-operator,live, image registry.invalid/gpuvm-mirror:$VERSION"
	assert_line "overlays/image: 11 objects, components admission-policy,gpu-operator, image registry.example.com/gpuvm/gpuvm-mirror:$VERSION"
	assert_line "overlays/rhel: 11 objects, components admission-policy,gpu-operator,selinux, image registry.invalid/gpuvm-mirror:$VERSION"
	assert_line "overlays/openshift: 14 objects, components admission-policy,gpu-operator,openshift, image registry.invalid/gpuvm-mirror:$VERSION"
	# every overlay is one of these: a new one is checked and named here
	[ "${#lines[@]}" -eq 7 ]
}

# kustomize takes no absolute path: the overlay names the copy beside it.
@test "the README's recipe: an overlay of the installed files' copy, with a registry and a digest, renders" {
	kustomize
	local d=$BATS_TEST_TMPDIR/dest o=$BATS_TEST_TMPDIR/site dig
	run make -s -C "$TOP" install DESTDIR="$d"
	assert_success
	dig=sha256:$(printf '%064d' 0 | tr 0 a)
	mkdir -p "$o"
	cp -r "$d/usr/share/gpuvm/mirror/deploy" "$o/gpuvm"
	printf '%s\n' 'apiVersion: kustomize.config.k8s.io/v1beta1' 'kind: Kustomization' 'resources:' \
		"  - gpuvm/overlays/live" 'images:' \
		'  - name: registry.invalid/gpuvm-mirror' '    newName: registry.corp.test/gpuvm-mirror' \
		"    digest: $dig" >"$o/kustomization.yaml"
	run check "$o" "$(render "$o")"
	assert_success
	assert_output --regexp ": 11 objects, components admission-policy,gpu-operator,live, image registry.corp.test/gpuvm-mirror@$dig\$"
}

@test "the base's image is the Makefile's version; no placeholder of the Containerfile, no docker build or apply -f left" {
	grep -qx "          image: registry.invalid/gpuvm-mirror:$VERSION" "$DEPLOY/base/daemonset.yaml"
	grep -qx "          image: registry.invalid/gpuvm-mirror:$VERSION" "$DEPLOY/components/live/daemonset.yaml"
	grep -qx "    newTag: $VERSION" "$DEPLOY/overlays/image/kustomization.yaml"
	run grep -rn -e registry.example.com/gpuvm/gpuvm-label-mirror -e Containerfile "$DEPLOY"
	assert_failure
	run grep -n -e 'docker build' -e 'kubectl apply -f' "$TOP/mirror/README.md" "$TOP/README.md" "$TOP/doc/cluster.md"
	assert_failure
	[ ! -e "$TOP/mirror/Containerfile" ]
}

# components/selinux (doc/rhel-openshift.md): a patch by name that adds the container's SELinux
# type and nothing else, whatever the base's volumes and node selection are.
@test "overlays/rhel: the default install with the mirror container's SELinux type spc_t, and nothing else" {
	kustomize
	run /usr/bin/python3 - "$(render "$DEPLOY/overlays/default")" "$(render "$DEPLOY/overlays/rhel")" <<'PY'
import sys, yaml
default, rhel = ([d for d in yaml.safe_load_all(open(f)) if d is not None] for f in sys.argv[1:])
(ds,) = [d for d in rhel if d["kind"] == "DaemonSet"]
(c,) = ds["spec"]["template"]["spec"]["containers"]
assert c["name"] == "mirror"
sel = c["securityContext"].pop("seLinuxOptions")
assert sel == {"type": "spc_t"}, sel
assert rhel == default, "overlays/rhel differs from overlays/default in more than the SELinux type"
print("ok")
PY
	assert_success
	assert_output ok
}

# components/openshift and overlays/openshift (doc/rhel-openshift.md). admit() restates, for the
# fields this SCC sets, the checks OpenShift's SCC admission makes of a pod (apiserver-library-go,
# securitycontextconstraints/sccmatching: a field the pod leaves unset is generated from the
# SCC, one it sets must match; a MustRunAs SELinux context compares user, role, type and level;
# the ServiceAccount token is a projected volume). It is no SCC admission: no OpenShift runs here.
@test "overlays/openshift: the SCC's fields, use of it for the ServiceAccount alone, the pod it admits and what it refuses, never and none" {
	kustomize
	run /usr/bin/python3 - "$(render "$DEPLOY/overlays/default")" "$(render "$DEPLOY/overlays/openshift")" \
		"$(render "$DEPLOY/overlays/rhel")" "$(render "$DEPLOY/overlays/live")" <<'PY'
import copy, sys, yaml
default, osh, rhel, live = ([d for d in yaml.safe_load_all(open(f)) if d is not None] for f in sys.argv[1:])
kind = lambda docs, k: [d for d in docs if d["kind"] == k]
pod = lambda docs: kind(docs, "DaemonSet")[0]["spec"]["template"]["spec"]

def admit(scc, pod):
    errs = []
    vols = set(scc["volumes"]) | ({"hostPath"} if scc["allowHostDirVolumePlugin"] else set())
    for v in pod.get("volumes", []) + [{"name": "kube-api-access", "projected": {}}]:
        (t,) = [k for k in v if k != "name"]
        if t not in vols:
            errs.append("volume %s: %s" % (v["name"], t))
    for k in ("hostNetwork", "hostPID", "hostIPC"):
        if pod.get(k) and not scc["allow" + k[0].upper() + k[1:]]:
            errs.append(k)
    psc = pod.get("securityContext", {})
    for c in pod.get("initContainers", []) + pod["containers"]:
        sc = c.get("securityContext", {})
        ru = scc["runAsUser"]
        uid = sc.get("runAsUser", psc.get("runAsUser", ru["uid"]))
        if ru["type"] == "MustRunAs" and uid != ru["uid"]:
            errs.append("runAsUser %r" % uid)
        want = scc["seLinuxContext"]["seLinuxOptions"]
        sel = sc.get("seLinuxOptions", psc.get("seLinuxOptions", want))
        for k in ("user", "role", "type", "level"):
            if scc["seLinuxContext"]["type"] == "MustRunAs" and sel.get(k, "") != want.get(k, ""):
                errs.append("seLinuxOptions.%s %r" % (k, sel.get(k, "")))
        if sc.get("privileged") and not scc["allowPrivilegedContainer"]:
            errs.append("privileged")
        if sc.get("allowPrivilegeEscalation", scc["allowPrivilegeEscalation"]) and not scc["allowPrivilegeEscalation"]:
            errs.append("allowPrivilegeEscalation")
        for a in sc.get("capabilities", {}).get("add", []):
            if a not in scc["allowedCapabilities"]:
                errs.append("capability %s" % a)
        if scc["readOnlyRootFilesystem"] and sc.get("readOnlyRootFilesystem") is False:
            errs.append("readOnlyRootFilesystem")
        prof = sc.get("seccompProfile", psc.get("seccompProfile"))
        if prof:
            p = {"RuntimeDefault": "runtime/default", "Unconfined": "unconfined"}.get(
                prof["type"], "localhost/" + prof.get("localhostProfile", ""))
            if p not in scc["seccompProfiles"]:
                errs.append("seccomp %s" % p)
        if any(p.get("hostPort") for p in c.get("ports", [])) and not scc["allowHostPorts"]:
            errs.append("hostPort")
    return errs

# The SCC: cluster-scoped, each field as scc.yaml's header says.
(scc,) = kind(osh, "SecurityContextConstraints")
assert scc["apiVersion"] == "security.openshift.io/v1"
assert scc["metadata"] == {"name": "gpuvm-label-mirror", "labels": {"app.kubernetes.io/name": "gpuvm-label-mirror"}}
fields = {k: v for k, v in scc.items() if k not in ("apiVersion", "kind", "metadata")}
assert fields == {
    "allowHostDirVolumePlugin": True, "volumes": ["emptyDir", "hostPath", "projected"],
    "runAsUser": {"type": "MustRunAs", "uid": 0},
    "seLinuxContext": {"type": "MustRunAs", "seLinuxOptions": {"type": "spc_t", "level": "s0"}},
    "fsGroup": {"type": "RunAsAny"}, "supplementalGroups": {"type": "RunAsAny"},
    "allowPrivilegedContainer": False, "allowPrivilegeEscalation": False,
    "requiredDropCapabilities": ["ALL"], "allowedCapabilities": [], "defaultAddCapabilities": [],
    "allowHostNetwork": False, "allowHostPID": False, "allowHostIPC": False, "allowHostPorts": False,
    "readOnlyRootFilesystem": True, "seccompProfiles": ["runtime/default"], "users": [], "groups": [],
}, fields

# `use` of it, by name, for the mirror's ServiceAccount, in its namespace alone.
(role,) = [r for r in kind(osh, "ClusterRole") if r["metadata"]["name"] == "gpuvm-label-mirror-scc"]
assert role["rules"] == [{"apiGroups": ["security.openshift.io"], "resources": ["securitycontextconstraints"],
                          "resourceNames": ["gpuvm-label-mirror"], "verbs": ["use"]}], role["rules"]
users = [b for b in kind(osh, "RoleBinding") + kind(osh, "ClusterRoleBinding") if b["roleRef"]["name"] == role["metadata"]["name"]]
assert [(b["kind"], b["metadata"].get("namespace"), b["roleRef"]["kind"], b["subjects"]) for b in users] == [
    ("RoleBinding", "gpuvm-system", "ClusterRole",
     [{"kind": "ServiceAccount", "name": "gpuvm-label-mirror", "namespace": "gpuvm-system"}])], users
sa = kind(osh, "ServiceAccount")[0]["metadata"]
assert (sa["name"], sa["namespace"]) == ("gpuvm-label-mirror", "gpuvm-system") == (pod(osh)["serviceAccountName"], users[0]["metadata"]["namespace"])

# The pod: the SCC admits it; its container as spc_t at s0, never and none.
p = pod(osh)
(c,) = p["containers"]
assert c["securityContext"]["seLinuxOptions"] == {"type": "spc_t", "level": "s0"}
env = [e for e in c["env"] if e["name"] in ("GPUVM_WRITE_CONFIG", "GPUVM_REBOOT_SENTINEL")]
assert env == [{"name": "GPUVM_WRITE_CONFIG", "value": "never"}, {"name": "GPUVM_REBOOT_SENTINEL", "value": "none"}], env
assert admit(scc, p) == [], admit(scc, p)

# What it refuses: the rhel overlay's container (spc_t without the level), the live overlay's
# pod, and each one change that would widen this pod.
assert admit(scc, pod(rhel)) == ["seLinuxOptions.level ''"], admit(scc, pod(rhel))
assert "privileged" in admit(scc, pod(live)), admit(scc, pod(live))
for what, change, err in (
        ("container_t", lambda c, p: c["securityContext"]["seLinuxOptions"].update(type="container_t"), "seLinuxOptions.type"),
        ("another level", lambda c, p: c["securityContext"]["seLinuxOptions"].update(level="s0:c1,c2"), "seLinuxOptions.level"),
        ("privileged", lambda c, p: c["securityContext"].update(privileged=True), "privileged"),
        ("a capability", lambda c, p: c["securityContext"]["capabilities"].update(add=["SYS_ADMIN"]), "capability SYS_ADMIN"),
        ("escalation", lambda c, p: c["securityContext"].update(allowPrivilegeEscalation=True), "allowPrivilegeEscalation"),
        ("a writable root", lambda c, p: c["securityContext"].update(readOnlyRootFilesystem=False), "readOnlyRootFilesystem"),
        ("uid 1000", lambda c, p: c["securityContext"].update(runAsUser=1000), "runAsUser 1000"),
        ("no seccomp", lambda c, p: c["securityContext"].update(seccompProfile={"type": "Unconfined"}), "seccomp unconfined"),
        ("the host network", lambda c, p: p.update(hostNetwork=True), "hostNetwork"),
        ("the host PIDs", lambda c, p: p.update(hostPID=True), "hostPID"),
        ("a hostPort", lambda c, p: c.update(ports=[{"containerPort": 8080, "hostPort": 8080}]), "hostPort"),
        ("a Secret volume", lambda c, p: p["volumes"].append({"name": "s", "secret": {"secretName": "s"}}), "volume s: secret")):
    q = copy.deepcopy(p)
    change(q["containers"][0], q)
    e = admit(scc, q)
    assert len(e) == 1 and e[0].startswith(err), (what, e)

# The namespace as the base has it: Pod Security "privileged" enforced by its own label, no
# label sync opt-out, no run level.
(ns,) = kind(osh, "Namespace")
assert ns == kind(default, "Namespace")[0]
assert ns["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "privileged"
assert not [k for k in ns["metadata"]["labels"] if "openshift.io/" in k], ns

# And nothing else: less the SCC, its role and binding, the SELinux options and the two
# variables, overlays/openshift is overlays/default.
rest = [d for d in osh if d is not scc and d is not role and d is not users[0]]
c["securityContext"].pop("seLinuxOptions")
c["env"] = [e for e in c["env"] if e not in env]
assert rest == default, "overlays/openshift differs from overlays/default in more than its component and variables"
print("ok")
PY
	assert_success
	assert_output ok
}
