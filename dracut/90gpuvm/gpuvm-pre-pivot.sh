#!/bin/sh
# dracut pre-pivot hook (sourced by dracut, in its shell init and by dracut-pre-pivot.service
# in a systemd initramfs): the real root is mounted at $NEWROOT, and the host config is read
# from it. `gpuvm apply --resume --sysroot` decides the mode the pre-udev hook held the GPUs
# for (or applies the root's config over what the boot line's gpuvm.mode= did); with nothing
# pending it does nothing. On ostree systems (Fedora CoreOS, RHCOS, bootc) $NEWROOT/etc is the
# deployment's /etc. A failure warns; the boot goes on.
# shellcheck source=/dev/null # dracut's own library, in the image only
type warn >/dev/null 2>&1 || . /lib/dracut-lib.sh

if [ -x /usr/sbin/gpuvm ]; then
    /usr/sbin/gpuvm apply --resume --sysroot "${NEWROOT:-/sysroot}"
    gpuvm_rc=$?
    case $gpuvm_rc in
    0) ;;
    3) warn "gpuvm: the IOMMU is not active; see /run/gpuvm/state.json and 'gpuvm check'" ;;
    *) warn "gpuvm: apply --resume --sysroot exited with $gpuvm_rc; see /run/gpuvm/state.json" ;;
    esac
    unset gpuvm_rc
fi
