#!/bin/sh
# Test-only initramfs-tools init-premount script (installed by tests/e2e/itools-lib.sh as
# scripts/init-premount/e2e): init-top's udev script has started udevd and run the coldplug;
# guest/dracut-check.sh waits for udev to settle, reports the facts and powers off (the boots
# have no root= to go on to).
PREREQ=""
prereqs() { echo "$PREREQ"; }
case ${1-} in
prereqs)
	prereqs
	exit 0
	;;
esac
/bin/sh /usr/lib/e2e/dracut-check.sh
