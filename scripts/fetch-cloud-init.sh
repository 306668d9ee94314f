#!/bin/sh
# fetch-cloud-init.sh [OUTDIR] — Debian's cloud-init, unpacked and not installed, for its own
# `cloud-init schema --config-file` (tests/bats/provisioning.bats checks the recipes of
# doc/provisioning/ with it). `apt-get download cloud-init` into OUTDIR (build/cloud-init),
# `dpkg-deb -x` into OUTDIR/root; prints the command to run. Installing the package would add
# 20 packages and the units that run cloud-init at every boot of the machine; unpacked, it
# needs only the Python modules its schema check imports (python3-yaml, -jsonschema,
# -requests, -configobj, -jsonpatch: scripts/install-packages.sh). Idempotent: a tree already
# there is used as it is.
set -eu
out=${1:-build/cloud-init}
die() {
	echo "fetch-cloud-init: $*" >&2
	exit 1
}
run="env PYTHONPATH=$out/root/usr/lib/python3/dist-packages /usr/bin/python3 $out/root/usr/bin/cloud-init"
if [ ! -x "$out/root/usr/bin/cloud-init" ]; then
	mkdir -p "$out"
	rm -rf "$out/root" "$out"/cloud-init_*.deb
	(cd "$out" && apt-get download -o APT::Sandbox::User=root cloud-init >/dev/null) ||
		die "apt-get download cloud-init failed (Debian's archive, apt-get update)"
	dpkg-deb -x "$out"/cloud-init_*.deb "$out/root" || die "dpkg-deb -x failed"
	dpkg-deb -f "$out"/cloud-init_*.deb Version >"$out/VERSION"
fi
for m in yaml jsonschema requests configobj jsonpatch; do
	/usr/bin/python3 -c "import $m" 2>/dev/null ||
		die "no Python module $m (scripts/install-packages.sh installs python3-$m)"
done
echo "$run"
