#!/bin/sh
# dracut test module, hook emergency 99: sourced when dracut opens its emergency shell. At an
# rd.break= shell it records what the shell would see (facts break.NAME.*, NAME: pre-udev,
# pre-trigger, …; kmsg "e2e: break.NAME: …") and lets the shell exit at once (an `exit 0` in
# /etc/profile, which the login shell of dracut's shell init and dracut-emergency.sh of a
# systemd initramfs both read), as one would type `exit`: the boot goes on. Any other
# emergency (a real failure) reports everything and powers off.
# shellcheck source=tests/e2e/guest/dracut-facts.sh
. /usr/lib/e2e/dracut-facts.sh
# The break's name: dracut's shell init has it in _rdshell_name; in a systemd initramfs
# dracut-emergency.sh says "dracut" there, but the caller wrote PS1="NAME:…" to /etc/profile.
dg_name=${_rdshell_name:-dracut}
if [ "$dg_name" = dracut ] && [ -f /etc/profile ]; then
	dg_name=$(sed -n 's/^PS1="\([^:]*\):.*/\1/p' /etc/profile | head -n 1)
fi
read -r dg_cmdline </proc/cmdline
case " $dg_cmdline " in
*" rd.break=$dg_name "*)
	if [ ! -e "/run/e2e/broke-$dg_name" ]; then
		mkdir -p /run/e2e
		: >"/run/e2e/broke-$dg_name"
		dg_at "break.$dg_name"
		echo "echo 'e2e: break.$dg_name: the shell exits' >/dev/kmsg; exit 0" >>/etc/profile
		return 0
	fi
	;;
esac
dg_kmsg "emergency: dracut's emergency shell ($dg_name, not a break): reporting and powering off"
/bin/sh /usr/lib/e2e/dracut-check.sh
