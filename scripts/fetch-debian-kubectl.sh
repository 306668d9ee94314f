#!/bin/sh
# fetch-debian-kubectl.sh [OUTDIR] — Debian's kubectl (kubernetes-client), unpacked and not
# installed, for tests/bats/kubeapi.bats where another package owns /usr/bin/kubectl (a cloud
# SDK's), beside which kubernetes-client cannot be installed. `apt-get download
# kubernetes-client` into OUTDIR (build/kubernetes-client), `dpkg-deb -x` into OUTDIR/root;
# prints the kubectl's path. Idempotent: a tree already there is used as it is.
set -eu
out=${1:-build/kubernetes-client}
die() {
	echo "fetch-debian-kubectl: $*" >&2
	exit 1
}
k=$out/root/usr/bin/kubectl
if [ ! -x "$k" ]; then
	mkdir -p "$out"
	rm -rf "$out/root" "$out"/kubernetes-client_*.deb
	(cd "$out" && apt-get download -o APT::Sandbox::User=root kubernetes-client >/dev/null) ||
		die "apt-get download kubernetes-client failed (Debian's archive, apt-get update)"
	dpkg-deb -x "$out"/kubernetes-client_*.deb "$out/root" || die "dpkg-deb -x failed"
	[ -x "$k" ] || die "no usr/bin/kubectl in kubernetes-client"
fi
echo "$k"
