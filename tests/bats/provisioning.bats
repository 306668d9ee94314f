#!/usr/bin/env bats
# shellcheck disable=SC2154 # $stderr and $output are set by bats' run
# doc/provisioning.md: its snippets parse (YAML) or pass shellcheck (sh), and name what the
# tree installs. No installer, cluster or RHCOS node runs them here.

load helpers

DOC="$TOP/doc/provisioning.md"

# blocks LANG DIR: each ```LANG block of the doc into DIR/N.LANG; prints how many.
blocks() {
	mkdir -p "$2"
	awk -v lang="$1" -v dir="$2" '
		/^```/ && !inb { if ($0 == "```" lang) { inb = 1; n++; f = dir "/" n "." lang } next }
		/^```/ && inb { inb = 0; close(f); next }
		inb { print > f }
		END { print n + 0 }' "$DOC"
}

@test "provisioning.md: every YAML snippet parses, and the kinds are the ones named" {
	d=$BATS_TEST_TMPDIR/yaml
	n=$(blocks yaml "$d")
	[ "$n" -eq 4 ]
	run python3 - "$d" <<'PY'
import glob, sys, yaml
docs = {}
for f in sorted(glob.glob(sys.argv[1] + "/*.yaml")):
    docs[f] = yaml.safe_load(open(f))
kinds = [d.get("kind") or d.get("variant") or ("cloud-config" if "runcmd" in d else "autoinstall" if "autoinstall" in d else "?") for d in docs.values()]
assert kinds == ["cloud-config", "autoinstall", "fcos", "MachineConfig"], kinds
cc, ai, bu, mc = docs.values()
assert any("label-intel/grub.cfg" in " ".join(map(str, c)) for c in cc["runcmd"])
assert {"path": "/etc/gpuvm/gpuvm.conf"}.items() <= cc["write_files"][0].items()
assert "mode=container" in cc["write_files"][0]["content"]
assert len(cc["write_files"]) == 1  # the dracut module includes itself: no dracut.conf.d
assert any("dracut -f" in c for c in ai["autoinstall"]["late-commands"])
assert "iommu=pt" in bu["kernel_arguments"]["should_exist"]
assert "gpuvm.mode=vm-passthrough" in bu["kernel_arguments"]["should_not_exist"]
assert mc["spec"]["kernelArguments"] == ["intel_iommu=on", "iommu=pt"]
assert "config" not in mc["spec"]
print("ok")
PY
	assert_success
	assert_output ok
}

@test "provisioning.md: the shell snippet passes shellcheck; the fragments it runs are installed" {
	d=$BATS_TEST_TMPDIR/sh
	n=$(blocks sh "$d")
	[ "$n" -eq 1 ]
	run shellcheck -s sh "$d/1.sh"
	assert_success
	# every /usr/share/gpuvm path the doc names is one make install lays out
	dest=$BATS_TEST_TMPDIR/dest
	run make -s -C "$TOP" install DESTDIR="$dest"
	assert_success
	grep -o '/usr/share/gpuvm/[A-Za-z0-9/._-]*' "$DOC" | sort -u >"$BATS_TEST_TMPDIR/paths"
	[ -s "$BATS_TEST_TMPDIR/paths" ]
	while IFS= read -r p; do
		[ -e "$dest$p" ] || { echo "not installed: $p"; return 1; }
	done <"$BATS_TEST_TMPDIR/paths"
	# and the label fragments say what the doc writes by hand
	[ "$(cat "$TOP/kernel-cmdline/label-intel/cmdline")" = "intel_iommu=on iommu=pt" ]
	[ -e "$dest/usr/lib/systemd/system/gpuvm-nfd.timer" ]
	# every unit the doc enables is one make install lays out, the path unit among them
	units=$(grep -o 'gpuvm-nfd\.[a-z]*' "$DOC" | sort -u)
	[[ $units == *gpuvm-nfd.path* ]]
	for u in $units; do
		[ -e "$dest/usr/lib/systemd/system/$u" ] || fail "not installed: $u"
	done
}
