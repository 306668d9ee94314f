#!/bin/sh
# In the guest, as an /init.d hook: leave a mark in /run, to be found after switch_root.
echo "initramfs was here" >/run/e2e-from-initramfs
