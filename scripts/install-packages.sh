#!/bin/sh
# Install the Debian packages gpuvm needs to build, test and demo (make setup, make test).
# Idempotent; touches nothing but apt's own state. Run as root (CI is).
#
#   scripts/install-packages.sh            everything make test runs (the build's and the tests')
#   scripts/install-packages.sh --build    only what the build needs (make setup-build): make all,
#                                          make arm64, make deb, make rpm (ARCH=arm64 too: make
#                                          packages) and make sbom
#   … --list                               print the list (with --build, the build's) and install
#                                          nothing
set -eu

build_only='' list_only=''
for a; do
	case $a in
	--build) build_only=1 ;;
	--list) list_only=1 ;;
	*) echo "usage: $0 [--build] [--list]" >&2; exit 2 ;;
	esac
done

# The build's: the compilers (gcc, make, binutils), musl, the kernel's headers, what
# scripts/deps.sh fetches the libraries' Debian sources with and builds them with (dpkg-source,
# xz; autotools, in case a Debian patch makes make run them again), the aarch64 cross compiler
# and its kernel headers (make arm64: scripts/sysroot.sh takes musl and busybox for arm64 from
# Debian's archive itself), dpkg-deb (dpkg, always there) and rpmbuild (rpm) for the packages,
# file(1) for their binary check and jq for the SBOM; gpuvm-dra's libraries and protoc-c
# (dra/dra.mk: HTTP/2, protobuf, the API client, JSON).
BUILD_PKGS="
build-essential gcc make musl-tools musl-dev linux-libc-dev dpkg-dev file pkg-config
autoconf automake libtool autopoint gettext bison xz-utils
gcc-aarch64-linux-gnu linux-libc-dev-arm64-cross
rpm jq
libnghttp2-dev libprotobuf-c-dev protobuf-c-compiler libcurl4-openssl-dev libjson-c-dev
"
# The tests', besides: bats and the tools the suites run, static analysis, QEMU and the boot
# images, lintian and rpmlint, the mirror's image and its registry, make repo's apt and dnf,
# gpuvm-dra's kubelet stand-in (grpcio, its stubs made by grpc_tools: tests/dra) and the podman
# that runs a container with its CDI devices.
TEST_PKGS="
bats bats-assert bats-support shellcheck strace valgrind driverctl
clang libclang-rt-14-dev cppcheck clang-tidy clang-format libkmod-dev libblkid-dev fdisk
cpio zstd kmod busybox-static
qemu-system-x86 qemu-utils e2fsprogs dosfstools mtools
qemu-system-arm qemu-user-static
dracut-core python3 python3-yaml pci.ids debootstrap curl openssl
lintian rpmlint node-spdx-license-ids
umoci skopeo docker-registry
apt-utils createrepo-c dnf gnupg python3-jsonschema python3-requests python3-configobj python3-jsonpatch
prometheus-node-exporter systemd
python3-grpcio python3-grpc-tools podman
"
PKGS=$BUILD_PKGS
if [ -z "$build_only" ]; then
	PKGS="$BUILD_PKGS $TEST_PKGS"
	# Debian's kubectl, which tests/bats/kubeapi.bats runs against the API stand-in: not where
	# /usr/bin/kubectl is there already and not kubernetes-client's (a cloud SDK's package, or a
	# binary put there by hand), which installing it would conflict with or overwrite; the test
	# then takes DEBIAN_KUBECTL instead, or says why it is skipped (tests/api/README.md).
	kubectl_owner=$(dpkg-query -S /usr/bin/kubectl 2>/dev/null | sed -n 's/^\([^:]*\): .*/\1/p' | head -n 1)
	if [ ! -e /usr/bin/kubectl ] || [ "$kubectl_owner" = kubernetes-client ]; then
		PKGS="$PKGS kubernetes-client"
	elif [ -z "$list_only" ]; then
		echo "install-packages: /usr/bin/kubectl is ${kubectl_owner:-no package}'s: kubernetes-client left out (tests/api/README.md)" >&2
	fi
fi

if [ -n "$list_only" ]; then
	# shellcheck disable=SC2086 # one a line
	printf '%s\n' $PKGS
	exit 0
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
