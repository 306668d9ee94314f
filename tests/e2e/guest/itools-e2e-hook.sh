#!/bin/sh
# Test-only initramfs-tools hook (tests/e2e/itools-lib.sh puts it in the private config
# directory as hooks/e2e): the guest checks the dracut cells use (guest/dracut-check.sh and
# dracut-facts.sh: they need only busybox and udevadm) and bochs, the stand-in's own driver,
# in the image whatever MODULES= says.
PREREQ=""
prereqs() { echo "$PREREQ"; }
case ${1-} in
prereqs)
	prereqs
	exit 0
	;;
esac
# shellcheck source=/dev/null # initramfs-tools' own library
. /usr/share/initramfs-tools/hook-functions
copy_file script "${E2E_ITOOLS_DIR:?}/dracut-check.sh" /usr/lib/e2e/dracut-check.sh
copy_file script "$E2E_ITOOLS_DIR/dracut-facts.sh" /usr/lib/e2e/dracut-facts.sh
manual_add_modules bochs
exit 0
