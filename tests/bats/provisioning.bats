#!/usr/bin/env bats
# shellcheck disable=SC2154 # $stderr and $output are set by bats' run
# The provisioning recipes of doc/provisioning/ (doc/provisioning.md): each parses (YAML with
# python3-yaml; cloud-init's own `cloud-init schema` from Debian's cloud-init, unpacked by
# scripts/fetch-cloud-init.sh; the Kickstart file by its sections, as no Kickstart validator
# is in Debian 12), its shell passes shellcheck, and it names what is real: the files it uses
# are in the package it installs (dpkg-deb -c, rpm -qlp), its repository files and key paths
# are make repo's, its `gpuvm config set` runs on the binary against the package's files, its
# kernel parameters are kernel-cmdline/label-intel's. And doc/uninstall.md deletes what
# mirror/deploy/ creates. No installer, MAAS, Metal3, OpenShift or CoreOS node runs them here.

load helpers

VERSION=$(sed -n 's/^VERSION := //p' "$TOP/Makefile")
P=$TOP/doc/provisioning
URL=https://repo.example.com/gpuvm

# The recipes, each with the package it installs (deb, rpm, or none).
RECIPES='cloud-init.yaml deb
autoinstall.yaml deb
maas-curtin.yaml deb
maas-tag.sh none
metal3.yaml deb
kickstart.ks rpm
fcos.bu none
Containerfile rpm
machineconfig.yaml none'

setup_file() {
	export PROV_SKIP=''
	local f
	for f in "deb/gpuvm_${VERSION}_amd64.deb" "rpm/gpuvm-${VERSION}-1.x86_64.rpm"; do
		[ -f "$TOP/build/$f" ] && continue
		[ "${CI:-}" != true ] || {
			echo "build/$f is missing under CI=true (make test builds it: make packages)" >&2
			return 1
		}
		PROV_SKIP="build/$f is not built (make packages)"
		return 0
	done
	# What each package installs, as paths; and its files, for gpuvm --root.
	D=$BATS_FILE_TMPDIR
	export D
	dpkg-deb -c "$TOP/build/deb/gpuvm_${VERSION}_amd64.deb" | awk '{ print substr($6, 2) }' >"$D/deb.list"
	rpm -qlp "$TOP/build/rpm/gpuvm-${VERSION}-1.x86_64.rpm" 2>/dev/null >"$D/rpm.list"
	dpkg-deb -x "$TOP/build/deb/gpuvm_${VERSION}_amd64.deb" "$D/deb-root"
	mkdir -p "$D/rpm-root"
	(cd "$D/rpm-root" && rpm2cpio "$TOP/build/rpm/gpuvm-${VERSION}-1.x86_64.rpm" | cpio -id --quiet)
	# Under make sanitize and make test-arm64 (GPUVM another binary) only the test that runs
	# the binary runs again: the others do not depend on it.
	export PROV_OTHER_BINARY=''
	if [ "$GPUVM" != "$TOP/build/gpuvm" ]; then
		PROV_OTHER_BINARY="this test runs no gpuvm binary: it runs with build/gpuvm only (GPUVM=$GPUVM)"
		return 0
	fi
	# make repo's host files for the recipes' URL, signed with a throwaway key.
	GNUPGHOME=$(mktemp -d /tmp/gpuvm-gpg.XXXXXX)
	export GNUPGHOME
	gpg --batch --quiet --passphrase '' --quick-gen-key 'gpuvm provisioning test <prov@gpuvm.invalid>' \
		ed25519 sign never 2>/dev/null
	REPO_URL=$URL REPO_DIR=$D/repo make -s -C "$TOP" repo \
		REPO_GPG_KEY="$(gpg --batch --with-colons --list-secret-keys 2>/dev/null | awk -F: '$1 == "fpr" { print $10; exit }')" \
		>"$D/repo.log" 2>&1 || { cat "$D/repo.log" >&2; return 1; }
	gpgconf --kill gpg-agent 2>/dev/null
	rm -rf "$GNUPGHOME"
	# cloud-init, unpacked (not installed).
	if ! CLOUD_INIT=$(sh "$TOP/scripts/fetch-cloud-init.sh" "$TOP/build/cloud-init" 2>"$D/fetch.log"); then
		[ "${CI:-}" != true ] || { cat "$D/fetch.log" >&2; return 1; }
		CLOUD_INIT=''
	fi
	export CLOUD_INIT
}

setup() {
	[ -z "$PROV_SKIP" ] || skip "$PROV_SKIP"
	[ -z "$PROV_OTHER_BINARY" ] || [ "$BATS_TEST_DESCRIPTION" = "$BINARY_TEST" ] || skip "$PROV_OTHER_BINARY"
}

BINARY_TEST="each recipe's gpuvm config set runs on the binary against its package's files; Butane's and the MachineConfigs' files say the same"

# recipes deb|rpm|none: the recipes that install that package.
recipes() {
	printf '%s\n' "$RECIPES" | awk -v p="$1" '$2 == p { print $1 }'
}

@test "doc/provisioning.md names each recipe, and each recipe it names is there" {
	run bash -c "cd '$P' && ls | sort"
	assert_output "$(printf '%s\n' "$RECIPES" | cut -d' ' -f1 | sort)"
	for f in $(printf '%s\n' "$RECIPES" | cut -d' ' -f1); do
		grep -qF "](provisioning/$f)" "$TOP/doc/provisioning.md" || fail "doc/provisioning.md has no link to provisioning/$f"
	done
	# no tarball, no download piped into a shell or tar
	run grep -nE 'tar\.gz|curl[^|]*\| *(sh|bash|tar)' "$TOP/doc/provisioning.md" "$P"/*
	assert_output ''
}

@test "the YAML recipes parse, each of its kind, with what gpuvm needs in it" {
	run python3 - "$P" "$(cat "$TOP/kernel-cmdline/label-intel/cmdline")" <<'PY'
import sys, urllib.parse, yaml
P, params = sys.argv[1], sys.argv[2].split()
def docs(f):
    return list(yaml.safe_load_all(open(P + "/" + f)))

(c,) = docs("cloud-init.yaml")
assert c["packages"] == ["gpuvm"] and c["package_update"] is True
paths = [f["path"] for f in c["write_files"]]
assert paths == ["/etc/apt/keyrings/gpuvm.asc", "/etc/apt/sources.list.d/gpuvm.sources"], paths
assert all(f["permissions"] == "0644" for f in c["write_files"])
assert c["runcmd"][0] == ["gpuvm", "config", "set", "mode=container"]
assert c["power_state"]["mode"] == "reboot"

(a,) = docs("autoinstall.yaml")
a = a["autoinstall"]
assert a["version"] == 1
lc = a["late-commands"]
assert all(isinstance(x, str) for x in lc)
assert "curtin in-target -- apt-get install -y gpuvm" in lc
assert "curtin in-target -- gpuvm config set mode=container" in lc
# initramfs-tools stays the generator on Debian and Ubuntu: no recipe of theirs names dracut
for f in ("cloud-init.yaml", "autoinstall.yaml", "maas-curtin.yaml", "metal3.yaml"):
    assert "dracut" not in open(P + "/" + f).read(), f

(m,) = docs("maas-curtin.yaml")
lc = m["late_commands"]
assert sorted(lc) == ["gpuvm_10_repository", "gpuvm_20_install", "gpuvm_30_mode"], sorted(lc)
assert lc["gpuvm_30_mode"] == ["curtin", "in-target", "--", "gpuvm", "config", "set", "mode=container"]
assert lc["gpuvm_20_install"][:4] == ["curtin", "in-target", "--", "sh"]

s, b = docs("metal3.yaml")
assert (s["apiVersion"], s["kind"]) == ("v1", "Secret")
assert (b["apiVersion"], b["kind"]) == ("metal3.io/v1alpha1", "BareMetalHost")
assert b["spec"]["userData"] == {"name": s["metadata"]["name"], "namespace": s["metadata"]["namespace"]}
assert b["metadata"]["namespace"] == s["metadata"]["namespace"]
assert b["spec"]["online"] is True and b["spec"]["image"]["checksumType"] in ("md5", "sha256", "sha512", "auto")
# the userData is cloud-init.yaml, byte for byte
assert s["stringData"]["userData"] == open(P + "/cloud-init.yaml").read()

(u,) = docs("fcos.bu")
assert (u["variant"], u["version"]) == ("fcos", "1.5.0")
assert u["kernel_arguments"]["should_exist"] == params
assert sorted(u["kernel_arguments"]["should_not_exist"]) == ["gpuvm.mode=container", "gpuvm.mode=vm-passthrough", "gpuvm.mode=vm-vgpu"]
(f,) = u["storage"]["files"]
assert f["path"] == "/etc/gpuvm/gpuvm.conf" and f["mode"] == 0o644 and f["overwrite"] is True
(unit,) = u["systemd"]["units"]
assert unit["name"] == "gpuvm-rebase.service" and unit["enabled"] is True
assert "ExecStart=/usr/bin/rpm-ostree rebase ostree-unverified-registry:" in unit["contents"]

# The MachineConfig route: a pool and its MachineConfig for each mode, in that order.
mcs = docs("machineconfig.yaml")
assert [d["kind"] for d in mcs] == ["MachineConfigPool", "MachineConfig"] * 3
assert all(d["apiVersion"] == "machineconfiguration.openshift.io/v1" for d in mcs)
role = "machineconfiguration.openshift.io/role"
modes, images, selected = [], set(), {}
for pool, mc in zip(mcs[0::2], mcs[1::2]):
    r = mc["metadata"]["labels"][role]
    # the pool is named for its role, takes the worker pool's MachineConfigs and its own role's,
    # and holds the nodes labelled with that role, one node at a time
    assert pool["metadata"]["name"] == r
    assert pool["spec"]["machineConfigSelector"] == {"matchExpressions": [{"key": role, "operator": "In", "values": ["worker", r]}]}
    assert pool["spec"]["nodeSelector"] == {"matchLabels": {"node-role.kubernetes.io/" + r: ""}}
    assert pool["spec"]["maxUnavailable"] == 1
    for v in pool["spec"]["machineConfigSelector"]["matchExpressions"][0]["values"]:
        selected.setdefault(v, []).append(r)
    # its MachineConfig: the layered image by digest, the IOMMU parameters, one file
    spec = mc["spec"]
    assert sorted(spec) == ["config", "kernelArguments", "osImageURL"], sorted(spec)
    assert spec["kernelArguments"] == params
    assert "@sha256:" in spec["osImageURL"]
    images.add(spec["osImageURL"])
    ign = spec["config"]
    assert ign["ignition"] == {"version": "3.2.0"} and sorted(ign) == ["ignition", "storage"]
    (f,) = ign["storage"]["files"]
    assert sorted(f) == ["contents", "mode", "overwrite", "path"]
    assert f["path"] == "/etc/gpuvm/gpuvm.conf" and f["mode"] == 0o644 and f["overwrite"] is True
    src = f["contents"]["source"]
    assert src.startswith("data:,"), src
    text = urllib.parse.unquote(src[len("data:,"):])
    assert text.startswith("mode=") and text.endswith("\n") and text.count("\n") == 1, text
    modes.append((r, text[len("mode="):-1]))
assert modes == [("worker-gpu", "container"), ("worker-gpu-vm-passthrough", "vm-passthrough"),
                 ("worker-gpu-vm-vgpu", "vm-vgpu")], modes
assert len(images) == 1, images  # the same image in every pool: a move changes the file alone
# no GPU pool takes another's MachineConfigs: no parameter twice, no second file for the path
assert all(v == [r] for r, v in selected.items() if r != "worker"), selected
print("ok")
PY
	echo "$output"
	assert_success
	assert_output ok
}

@test "cloud-init's own schema (Debian's cloud-init, unpacked): the cloud-config recipes pass, a broken one fails" {
	[ -n "$CLOUD_INIT" ] || skip "no cloud-init: scripts/fetch-cloud-init.sh could not fetch it ($(cat "$D/fetch.log"))"
	for f in cloud-init.yaml autoinstall.yaml; do
		run $CLOUD_INIT schema --config-file "$P/$f"
		assert_success
		assert_output "Valid cloud-config: $P/$f"
	done
	# The check fails where cloud-init would: a permission as a number, a runcmd not a list.
	sed -e 's/permissions: "0644"/permissions: 0644/' -e 's/^runcmd:$/runcmd: reboot\nx:/' \
		"$P/cloud-init.yaml" >"$BATS_TEST_TMPDIR/broken.yaml"
	run $CLOUD_INIT schema --config-file "$BATS_TEST_TMPDIR/broken.yaml"
	assert_failure
	assert_output --partial "write_files.0.permissions: 420 is not of type 'string'"
}

@test "the shell in the recipes passes shellcheck: maas-tag.sh, the late commands, the Kickstart %post, the Containerfile's RUN" {
	s=$BATS_TEST_TMPDIR/sh
	mkdir -p "$s"
	shellcheck -s sh "$P/maas-tag.sh"
	# Each string late command (sh -c) and each argument list, as the installer runs it.
	run python3 - "$P/autoinstall.yaml" "$P/maas-curtin.yaml" "$s" <<'PY'
import shlex, sys, yaml
n = 0
for f, cmds in ((sys.argv[1], yaml.safe_load(open(sys.argv[1]))["autoinstall"]["late-commands"]),
                (sys.argv[2], list(yaml.safe_load(open(sys.argv[2]))["late_commands"].values()))):
    for c in cmds:
        n += 1
        body = c if isinstance(c, str) else " ".join(shlex.quote(w) for w in c)
        open("%s/%d.sh" % (sys.argv[3], n), "w").write("#!/bin/sh\n" + body + "\n")
print(n)
PY
	assert_success
	assert_output 9
	shellcheck -s sh "$s"/*.sh
	# The Kickstart %post body (the default interpreter, /bin/sh).
	sed -n '/^%post/,/^%end$/{/^%/d;p}' "$P/kickstart.ks" >"$s/post.sh"
	[ -s "$s/post.sh" ]
	shellcheck -s sh "$s/post.sh"
	# The Containerfile's RUN instructions, their continuation lines joined.
	awk '/^RUN / { cmd = substr($0, 5); while (cmd ~ /\\$/ && (getline l) > 0) { sub(/\\$/, "", cmd); cmd = cmd "\n" l }
		n++; print "#!/bin/sh\n" cmd > (dir "/run" n ".sh") } END { print n }' dir="$s" "$P/Containerfile" >"$s/n"
	[ "$(cat "$s/n")" = 2 ]
	shellcheck -s sh "$s"/run*.sh
	# and a mistake is found: an unquoted expansion that would split
	# shellcheck disable=SC2016 # the script's own $img
	printf '#!/bin/sh\nrm -f $img\n' >"$s/bad.sh"
	run shellcheck -s sh "$s/bad.sh"
	assert_failure
}

@test "Kickstart: commands and sections as Anaconda reads them, the parameters label-intel's, %post closed" {
	ks=$P/kickstart.ks
	# Outside sections: comments, blanks and the one command, bootloader --append.
	run awk '/^%(post|pre|packages)/ { ins = 1; next } /^%end$/ { ins = 0; next }
		!ins && !/^#/ && !/^[[:space:]]*$/' "$ks"
	assert_output "bootloader --append=\"$(cat "$TOP/kernel-cmdline/label-intel/cmdline")\""
	# Every section opened is closed, none nested.
	run awk '/^%(post|pre|packages|pre-install|onerror)/ { if (o) { print "nested at " NR; exit 1 } o = 1 }
		/^%end$/ { if (!o) { print "%end alone at " NR; exit 1 } o = 0 }
		END { if (o) { print "unclosed"; exit 1 } }' "$ks"
	assert_success
	grep -qx '%post --erroronfail --log=/root/ks-post-gpuvm.log' "$ks"
	# The heredocs end where they should: the body's own lines after the last EOF.
	run sed -n '/^%post/,/^%end$/{/^%/d;p}' "$ks"
	assert_line 'dnf -y install gpuvm'
	[ "$(grep -c '^EOF$' "$ks")" = 2 ]
}

@test "the repository files and key paths in the recipes are make repo's; the key is the placeholder make repo's key replaces" {
	# deb822 lines as make repo writes them for the recipes' URL (comments aside).
	grep -v '^#' "$D/repo/gpuvm.sources" >"$BATS_TEST_TMPDIR/sources"
	grep -v '^#' "$D/repo/gpuvm.repo" >"$BATS_TEST_TMPDIR/repo"
	run python3 - "$P" "$BATS_TEST_TMPDIR/sources" "$BATS_TEST_TMPDIR/repo" <<'PY'
import re, sys, yaml
P, sources, repo = sys.argv[1], open(sys.argv[2]).read(), open(sys.argv[3]).read()
key = ("-----BEGIN PGP PUBLIC KEY BLOCK-----\n(build/repo/gpuvm.asc, which make repo writes)\n"
       "-----END PGP PUBLIC KEY BLOCK-----\n")
def heredoc(text, path):
    out = {}
    for m in re.finditer(r"cat >\"?([^\s\"]*)\"? <<'EOF'\n(.*?)\nEOF(\n|$)", text, re.S):
        out[m.group(1)] = m.group(2) + "\n"
    return out
c = yaml.safe_load(open(P + "/cloud-init.yaml"))
files = {f["path"]: f["content"] for f in c["write_files"]}
assert files == {"/etc/apt/keyrings/gpuvm.asc": key, "/etc/apt/sources.list.d/gpuvm.sources": sources}, files
a = yaml.safe_load(open(P + "/autoinstall.yaml"))["autoinstall"]["late-commands"][0]
assert heredoc(a, P) == {"/target/etc/apt/keyrings/gpuvm.asc": key,
                         "/target/etc/apt/sources.list.d/gpuvm.sources": sources}, heredoc(a, P)
m = yaml.safe_load(open(P + "/maas-curtin.yaml"))["late_commands"]["gpuvm_10_repository"]
assert heredoc(m, P) == {"$t/etc/apt/keyrings/gpuvm.asc": key,
                         "$t/etc/apt/sources.list.d/gpuvm.sources": sources}, heredoc(m, P)
k = open(P + "/kickstart.ks").read()
assert heredoc(k, P) == {"/etc/pki/rpm-gpg/RPM-GPG-KEY-gpuvm": key, "/etc/yum.repos.d/gpuvm.repo": repo}, heredoc(k, P)
print("ok")
PY
	echo "$output"
	assert_output ok
	# Signed-By and gpgkey= name where the recipes put the key.
	grep -qx 'Signed-By: /etc/apt/keyrings/gpuvm.asc' "$BATS_TEST_TMPDIR/sources"
	grep -qx 'gpgkey=file:///etc/pki/rpm-gpg/RPM-GPG-KEY-gpuvm' "$BATS_TEST_TMPDIR/repo"
	# The Containerfile copies make repo's files into those places.
	run grep '^COPY ' "$P/Containerfile"
	assert_output 'COPY gpuvm.repo /etc/yum.repos.d/gpuvm.repo
COPY gpuvm.asc /etc/pki/rpm-gpg/RPM-GPG-KEY-gpuvm'
	[ -s "$D/repo/gpuvm.repo" ] && [ -s "$D/repo/gpuvm.asc" ]
}

@test "every path under /usr or /etc/gpuvm a recipe names is in the package it installs" {
	n=0
	for kind in deb rpm; do
		for f in $(recipes "$kind"); do
			grep -oE '/usr/(share|sbin|lib)/[A-Za-z0-9/._-]*gpuvm[A-Za-z0-9/._-]*|/etc/gpuvm/[A-Za-z0-9._-]+' "$P/$f" |
				sort -u >"$BATS_TEST_TMPDIR/paths"
			while IFS= read -r p; do
				n=$((n + 1))
				grep -qx "$p" "$D/$kind.list" ||
					fail "$f names $p, which the .$kind does not install"
			done <"$BATS_TEST_TMPDIR/paths"
		done
	done
	[ "$n" = 3 ]
	# the binary the Containerfile looks for in the image is the RPM's
	grep -q "grep -q 'usr/sbin/gpuvm\$'" "$P/Containerfile"
	grep -qx /usr/sbin/gpuvm "$D/rpm.list"
	grep -qx /usr/lib/dracut/modules.d/90gpuvm/module-setup.sh "$D/rpm.list"
	# and the doc's own paths
	grep -oE '/usr/share/gpuvm/[A-Za-z0-9/._-]*[A-Za-z0-9_]' "$TOP/doc/provisioning.md" | sort -u >"$BATS_TEST_TMPDIR/paths"
	while IFS= read -r p; do
		grep -qx "$p" "$D/deb.list" || grep -qx "$p/" "$D/deb.list" || fail "doc/provisioning.md names $p, which the .deb does not install"
	done <"$BATS_TEST_TMPDIR/paths"
}

@test "each recipe's gpuvm config set runs on the binary against its package's files; Butane's and the MachineConfigs' files say the same" {
	n=0
	for kind in deb rpm; do
		for f in $(recipes "$kind"); do
			# "gpuvm config set K=V", or the YAML list [gpuvm, config, set, K=V]
			sed -n -e 's/.*gpuvm config set \([a-z_]*=[a-z-]*\).*/\1/p' \
				-e 's/.*gpuvm, config, set, \([a-z_]*=[a-z-]*\).*/\1/p' "$P/$f" >"$BATS_TEST_TMPDIR/sets"
			while IFS= read -r kv; do
				n=$((n + 1))
				r=$BATS_TEST_TMPDIR/$f.root
				rm -rf "$r"
				cp -a "$D/$kind-root" "$r"
				run "$GPUVM" --root "$r" config set "$kv"
				assert_success
				assert_line --index 0 "/etc/gpuvm/gpuvm.conf: $kv"
				run "$GPUVM" --root "$r" config get "${kv%%=*}"
				assert_output "${kv#*=}"
			done <"$BATS_TEST_TMPDIR/sets"
		done
	done
	# cloud-init, autoinstall, MAAS, Metal3, Kickstart
	[ "$n" = 5 ]
	# Butane writes the file itself: gpuvm reads the mode from it.
	r=$BATS_TEST_TMPDIR/fcos.root
	cp -a "$D/rpm-root" "$r"
	python3 -c 'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))["storage"]["files"][0]["contents"]["inline"], end="")' \
		"$P/fcos.bu" >"$r/etc/gpuvm/gpuvm.conf"
	run "$GPUVM" --root "$r" config get mode
	assert_success
	assert_output container
	# The MachineConfigs write the file themselves (a data URL each): gpuvm reads each pool's mode
	# from it, alone and in the RPM's tree (what the layered image holds), with no warning.
	python3 - "$P/machineconfig.yaml" "$BATS_TEST_TMPDIR" <<'PY'
import sys, urllib.parse, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d["kind"] == "MachineConfig":
        (f,) = d["spec"]["config"]["storage"]["files"]
        r = d["metadata"]["labels"]["machineconfiguration.openshift.io/role"]
        open("%s/%s.conf" % (sys.argv[2], r), "w").write(urllib.parse.unquote(f["contents"]["source"].split(",", 1)[1]))
PY
	for m in worker-gpu:container worker-gpu-vm-passthrough:vm-passthrough worker-gpu-vm-vgpu:vm-vgpu; do
		c=$BATS_TEST_TMPDIR/${m%%:*}.conf
		run "$GPUVM" --config "$c" config get mode
		assert_success
		assert_output "${m#*:}"
		r=$BATS_TEST_TMPDIR/${m%%:*}.root
		cp -a "$D/rpm-root" "$r"
		cp "$c" "$r/etc/gpuvm/gpuvm.conf"
		run "$GPUVM" --root "$r" config get mode
		assert_success
		assert_output "${m#*:}"
	done
}

@test "the kernel parameters: MAAS's kernel_opts, Kickstart's --append, Butane's and the MachineConfigs' are label-intel's; the others install its grub.cfg" {
	want=$(cat "$TOP/kernel-cmdline/label-intel/cmdline")
	[ "$want" = "intel_iommu=on iommu=pt" ]
	grep -q "kernel_opts='$want'" "$P/maas-tag.sh"
	grep -qx "bootloader --append=\"$want\"" "$P/kickstart.ks"
	# (Butane's and the MachineConfigs' lists: the YAML test above)
	for f in cloud-init.yaml autoinstall.yaml metal3.yaml; do
		grep -q '/usr/share/gpuvm/kernel-cmdline/label-intel/grub.cfg' "$P/$f" || fail "$f installs no label-intel/grub.cfg"
		grep -q 'update-grub' "$P/$f" || fail "$f runs no update-grub"
	done
	grep -qx "GRUB_CMDLINE_LINUX=\"\${GRUB_CMDLINE_LINUX} $want\"" "$D/deb-root/usr/share/gpuvm/kernel-cmdline/label-intel/grub.cfg"
	# no recipe pins a mode on the boot line (the label could never change the node)
	run grep -l 'gpuvm\.mode=' "$P"/*
	assert_output "$P/fcos.bu"
}

# doc/uninstall.md against the mirror's own files: what mirror/deploy's base, components and
# overlays create (every object of its files, kustomize's own aside)
# and the annotations gpuvm-label-mirror writes (its names()).
@test "doc/uninstall.md deletes every object mirror/deploy/ creates and removes every annotation the mirror writes" {
	doc=$TOP/doc/uninstall.md
	run python3 - "$TOP/mirror/deploy" <<'PY'
import glob, sys, yaml
for f in sorted(glob.glob(sys.argv[1] + "/**/*.yaml", recursive=True)):
    if f.endswith("/kustomization.yaml"):
        continue
    for d in yaml.safe_load_all(open(f)):
        if d and d.get("kind") != "Kustomization":
            print(d["kind"], d["metadata"]["name"], d["metadata"].get("namespace", ""))
PY
	assert_success
	[ "${#lines[@]}" -ge 8 ]
	# "KIND NAME" for each object a `kubectl [-n NS] delete KIND NAME...` line of the page deletes
	awk '$1 == "kubectl" { i = 2; if ($2 == "-n") i = 4; if ($i != "delete") next
		for (j = i + 2; j <= NF; j++) print $(i + 1), $j }' "$doc" >"$BATS_TEST_TMPDIR/deleted"
	for l in "${lines[@]}"; do
		read -r kind name ns <<<"$l"
		case $kind in
		ServiceAccount) grep -qx "namespace $ns" "$BATS_TEST_TMPDIR/deleted" ||
			fail "doc/uninstall.md does not delete namespace $ns (ServiceAccount $name)" ;;
		*) grep -qx "${kind,,} $name" "$BATS_TEST_TMPDIR/deleted" ||
			fail "doc/uninstall.md does not delete $kind $name: $(tr '\n' ';' <"$BATS_TEST_TMPDIR/deleted")" ;;
		esac
	done
	# the annotations: each name of the mirror's names(), removed in the annotate command
	# shellcheck disable=SC2016 # the mirror's own $GPUVM_DOMAIN, literally
	names=$(sed -n '/^names() {$/,/^}$/s|.*=\$GPUVM_DOMAIN/\([a-z-]*\)$|\1|p' "$TOP/mirror/gpuvm-label-mirror")
	[ "$(echo "$names" | wc -l)" -ge 6 ]
	cmd=$(sed -n '/kubectl annotate node gpu-node-1 /,/[^\\]$/p' "$doc" | tr -d '\\\n')
	for a in $names; do
		[[ $cmd == *" gpuvm.dev/$a-"* ]] || fail "doc/uninstall.md's kubectl annotate does not remove gpuvm.dev/$a: $cmd"
	done
	# the vfio-manager: opted out on every VM node before it is turned on, back one node at a time
	grep -q 'nvidia.com/gpu.deploy.vfio-manager=false --overwrite' "$doc"
	grep -q -- '--set vfioManager.enabled=true' "$doc"
	grep -q 'kubectl label node gpu-node-1 nvidia.com/gpu.deploy.vfio-manager-$' "$doc"
	[ "$(grep -n 'vfio-manager=false --overwrite' "$doc" | cut -d: -f1)" -lt "$(grep -n 'vfioManager.enabled=true' "$doc" | cut -d: -f1)" ]
}
