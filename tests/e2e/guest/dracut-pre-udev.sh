#!/bin/sh
# dracut test module, hook pre-udev 99: sourced by dracut right after gpuvm's hook (pre-udev
# 00), before udevd starts. Records where the stand-in is and that no udevd runs yet.
# shellcheck source=tests/e2e/guest/dracut-facts.sh
. /usr/lib/e2e/dracut-facts.sh
dg_at pre_udev
