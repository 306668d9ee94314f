#!/bin/sh
# dracut initqueue job, queued by gpuvm-pre-udev.sh when `gpuvm apply --defer` held the GPUs
# to wait for config='s disk: run each round of dracut's main loop until gpuvm decides (exit
# status other than 5). gpuvm removes /run/gpuvm/pending when it decides; should it fail
# without deciding, the record goes here, so that the boot never waits on a broken gpuvm.
# shellcheck source=/dev/null # dracut's own library, in the image only
type warn >/dev/null 2>&1 || . /lib/dracut-lib.sh

[ -e /run/gpuvm/pending ] || exit 0
/usr/sbin/gpuvm apply --resume
rc=$?
case $rc in
0 | 5) ;;
3) warn "gpuvm: the IOMMU is not active; see /run/gpuvm/state.json and 'gpuvm check'" ;;
*) warn "gpuvm: apply --resume exited with $rc; see /run/gpuvm/state.json" ;;
esac
if [ "$rc" -ne 5 ] && [ -e /run/gpuvm/pending ]; then
    warn "gpuvm: apply --resume did not decide (exit status $rc); the GPUs stay held"
    rm -f /run/gpuvm/pending
fi
exit 0
