#!/bin/sh
# Test-only initramfs-tools hook (tests/e2e/itools-lib.sh puts it in the private config
# directory as hooks/e2e): the guest checks the dracut cells use (guest/dracut-check.sh and
# dracut-facts.sh: they need only busybox and udevadm) and bochs, the stand-in's own driver,
# in the image whatever MODULES= says, and the scenario's files (itools_image --file).
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
# A scenario's own files (itools_image --file).
for f in "$E2E_ITOOLS_DIR"/files/*; do
	[ ! -f "$f" ] || copy_file data "$f" "/usr/lib/e2e/${f##*/}"
done
manual_add_modules bochs
exit 0
