#!/bin/sh
# Runs build/arm64/gpuvm (GPUVM_ARM64 names another) on this host through qemu-user, so
# that the bats suites test the aarch64 binary too: `make test-arm64` sets GPUVM to this.
top=$(cd "$(dirname "$0")/../.." && pwd)
exec qemu-aarch64-static "${GPUVM_ARM64:-$top/build/arm64/gpuvm}" "$@"
