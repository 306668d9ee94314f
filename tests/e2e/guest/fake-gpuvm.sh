#!/bin/sh
# A stand-in for /sbin/gpuvm, to test init itself: reports how and when it ran, leaves a state
# file in /run/gpuvm (as gpuvm does) and fails with status 3.
echo "@e2e gpuvm_args=$*"
echo "@e2e gpuvm_modules=$(cut -d' ' -f1 /proc/modules | tr '\n' ' ')"
echo "@e2e gpuvm_mounts=$(awk '{ print $2 }' /proc/mounts | sort | tr '\n' ' ')"
mkdir -p /run/gpuvm
echo '{"fake":true}' >/run/gpuvm/state.json
exit 3
