#!/bin/sh
# Runs build/arm64/gpuvm (GPUVM_ARM64 names another) on this host through qemu-user, so
# that the bats suites test the aarch64 binary too: `make test-arm64` sets GPUVM to this.
# Builtins only before the exec: a test may run gpuvm with a PATH that has nothing on it
# (nextboot.bats, no decompressor); qemu is then taken from where Debian puts it.
top=${0%/*}/../..
qemu=$(command -v qemu-aarch64-static) || qemu=/usr/bin/qemu-aarch64-static
exec "$qemu" "${GPUVM_ARM64:-$top/build/arm64/gpuvm}" "$@"
