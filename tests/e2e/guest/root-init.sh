#!/bin/sh
# /sbin/init of the e2e root disk: reports where it runs and what the initramfs left behind,
# then powers off. Facts: "@e2e KEY=VALUE"; last line "@e2e end".
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
fact() { echo "@e2e $1=$2"; }
echo "@e2e root-init"
fact pid $$
[ -e /proc/self ] || mount -t proc proc /proc
fact root "$(awk '$2 == "/" { print $1, $3, substr($4, 1, 2) }' /proc/mounts)"
fact mounts "$(awk '{ print $2 }' /proc/mounts | sort | tr '\n' ' ')"
fact run "$(awk '$2 == "/run" { print $3 }' /proc/mounts)"
fact run_marker "$(cat /run/e2e-from-initramfs 2>/dev/null || echo none)"
if [ -f /run/gpuvm/state.json ]; then
	fact gpuvm_state "$(tr -s ' \n' ' ' </run/gpuvm/state.json | sed 's/ $//' | cut -c1-300)"
else
	fact gpuvm_state none
fi
fact args "$*"
[ ! -x /etc/e2e-check.sh ] || /etc/e2e-check.sh
echo "@e2e end"
sync
poweroff -f
