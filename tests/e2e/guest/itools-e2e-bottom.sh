#!/bin/sh
# Test-only initramfs-tools init-bottom script (tests/e2e/itools-lib.sh's itools_image
# --bottom installs it as scripts/init-bottom/e2e): after gpuvm's own init-bottom script
# (PREREQ), which decided from the root's /etc/gpuvm/gpuvm.conf on ${rootmnt}, and before
# switch_root: guest/dracut-check.sh reports the facts and boot.json and powers off.
PREREQ="gpuvm"
prereqs() { echo "$PREREQ"; }
case ${1-} in
prereqs)
	prereqs
	exit 0
	;;
esac
echo "e2e: init_bottom: the report" >/dev/kmsg
/bin/sh /usr/lib/e2e/dracut-check.sh
