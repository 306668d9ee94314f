#!/bin/sh
# dracut test module, hook emergency 99: sourced when dracut opens its emergency shell. At the
# first rd.break= shell it records what the shell would see and lets the shell exit at once
# (an `exit 0` in /etc/profile, which the login shell of dracut's shell init and
# dracut-emergency.sh of a systemd initramfs both read), as one would type `exit`: the boot
# goes on. Any other emergency (a real failure) reports everything and powers off.
# shellcheck source=tests/e2e/guest/dracut-facts.sh
. /usr/lib/e2e/dracut-facts.sh
read -r dg_cmdline </proc/cmdline
case " $dg_cmdline " in
*" rd.break="* | *" rd.break "*)
	if [ ! -e /run/e2e/broke ]; then
		mkdir -p /run/e2e
		: >/run/e2e/broke
		dg_at break
		echo 'echo "e2e: break: the shell exits" >/dev/kmsg; exit 0' >>/etc/profile
		return 0
	fi
	;;
esac
dg_kmsg "emergency: dracut's emergency shell (not a break): reporting and powering off"
/bin/sh /usr/lib/e2e/dracut-check.sh
