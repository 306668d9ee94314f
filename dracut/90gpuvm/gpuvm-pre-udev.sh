#!/bin/sh
# dracut pre-udev hook (sourced by dracut, in its shell init and by dracut-pre-udev.service in
# a systemd initramfs, before systemd-udevd starts): before udev can load nouveau, nova_core or
# nvidia, bind the GPUs as the boot line's gpuvm.mode= says, or hold them until the pre-pivot
# hook (gpuvm-pre-pivot.sh) reads the host config from the mounted root. A failure warns; the
# boot goes on.
#
# When config= names a disk that is not there yet (its driver comes with udev), gpuvm holds
# the GPUs and exits 5: an initqueue job (gpuvm-resume.sh) then runs `gpuvm apply --resume`
# each round of dracut's main loop until it decides, and a finished hook keeps the loop
# going while /run/gpuvm/pending exists. gpuvm decides by config_timeout (default: half of
# rd.retry), before dracut would give up on the boot.
# shellcheck source=/dev/null # dracut's own library, in the image only
type warn >/dev/null 2>&1 || . /lib/dracut-lib.sh

if [ -x /usr/sbin/gpuvm ]; then
    /usr/sbin/gpuvm apply --defer
    gpuvm_rc=$?
    case $gpuvm_rc in
    0) ;;
    3) warn "gpuvm: the IOMMU is not active; see /run/gpuvm/state.json and 'gpuvm check'" ;;
    5)
        # dracut's own initqueue script, the same in every dracut (it knows where this one
        # keeps its hooks): the job, and a finished check that keeps the main loop going
        # while gpuvm waits. The module asked for the initqueue when the image was built
        # (depends, dracut_need_initqueue): nothing is written here but the queue.
        if [ -x /sbin/initqueue ]; then
            info "gpuvm: GPUs held until the config's disk is read; see /run/gpuvm/pending"
            /sbin/initqueue --unique --name gpuvm-resume /usr/lib/gpuvm/gpuvm-resume.sh
            /sbin/initqueue --finished --unique --name gpuvm-resume test ! -e /run/gpuvm/pending
        else
            warn "gpuvm: no /sbin/initqueue in this image: nothing reads the config's disk; the GPUs stay held (see /run/gpuvm/pending)"
        fi
        ;;
    *) warn "gpuvm: apply exited with $gpuvm_rc; see /run/gpuvm/state.json" ;;
    esac
    unset gpuvm_rc
else
    warn "gpuvm: /usr/sbin/gpuvm is missing from the image"
fi
