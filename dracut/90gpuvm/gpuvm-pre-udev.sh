#!/bin/sh
# dracut pre-udev hook (sourced by dracut, in its shell init and by dracut-pre-udev.service in
# a systemd initramfs, before systemd-udevd starts): bind the GPUs before udev can load nouveau,
# nova_core or nvidia. A failure warns; the boot goes on.
# shellcheck source=/dev/null # dracut's own library, in the image only
type warn >/dev/null 2>&1 || . /lib/dracut-lib.sh

if [ -x /usr/sbin/gpuvm ]; then
    /usr/sbin/gpuvm apply
    gpuvm_rc=$?
    case $gpuvm_rc in
    0) ;;
    3) warn "gpuvm: the IOMMU is not active; see /run/gpuvm/state.json and 'gpuvm check'" ;;
    *) warn "gpuvm: apply exited with $gpuvm_rc; see /run/gpuvm/state.json" ;;
    esac
    unset gpuvm_rc
else
    warn "gpuvm: /usr/sbin/gpuvm is missing from the image"
fi
