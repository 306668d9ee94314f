#!/bin/sh
# Install the Debian packages gpuvm needs to build, test and demo.
# Idempotent; touches nothing but apt's own state. Run as root (CI is).
set -eu

PKGS="
build-essential musl-tools musl-dev linux-libc-dev dpkg-dev file pkg-config
autoconf automake libtool autopoint gettext bison
bats bats-assert bats-support jq shellcheck strace valgrind driverctl
clang libclang-rt-14-dev cppcheck clang-tidy clang-format libkmod-dev libblkid-dev fdisk
cpio xz-utils zstd kmod busybox-static
qemu-system-x86 qemu-utils e2fsprogs dosfstools mtools
qemu-system-arm qemu-user-static gcc-aarch64-linux-gnu linux-libc-dev-arm64-cross
dracut-core python3 python3-yaml pci.ids debootstrap curl openssl
lintian rpm rpmlint node-spdx-license-ids
umoci skopeo docker-registry
apt-utils createrepo-c dnf gnupg python3-jsonschema python3-requests python3-configobj python3-jsonpatch
prometheus-node-exporter curl systemd
"
# Debian's kubectl, which tests/bats/kubeapi.bats runs against the API stand-in: not where
# /usr/bin/kubectl is there already and not kubernetes-client's (a cloud SDK's package, or a
# binary put there by hand), which installing it would conflict with or overwrite; the test then
# takes DEBIAN_KUBECTL instead, or says why it is skipped (tests/api/README.md).
kubectl_owner=$(dpkg-query -S /usr/bin/kubectl 2>/dev/null | sed -n 's/^\([^:]*\): .*/\1/p' | head -n 1)
if [ ! -e /usr/bin/kubectl ] || [ "$kubectl_owner" = kubernetes-client ]; then
	PKGS="$PKGS kubernetes-client"
else
	echo "install-packages: /usr/bin/kubectl is ${kubectl_owner:-no package}'s: kubernetes-client left out (tests/api/README.md)" >&2
fi

missing=
for p in $PKGS; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "install-packages: need root to install:$missing" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086 # word splitting of the package list is intended
apt-get install -y -qq --no-install-recommends $missing
