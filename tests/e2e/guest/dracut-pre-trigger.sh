#!/bin/sh
# dracut test module, hook pre-trigger 99: udevd runs now (dracut starts it between the
# pre-udev and pre-trigger hooks; in a systemd initramfs dracut-pre-trigger.service comes
# after systemd-udevd.service), the coldplug trigger has not come yet.
# shellcheck source=tests/e2e/guest/dracut-facts.sh
. /usr/lib/e2e/dracut-facts.sh
dg_at pre_trigger
