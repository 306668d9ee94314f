# shellcheck shell=sh
# Sourced by the dracut test module's hooks (tests/e2e/dracut-lib.sh installs it as
# /usr/lib/e2e/dracut-facts.sh): facts are kept in /run/e2e/facts ("@e2e KEY=VALUE" lines)
# until guest/dracut-check.sh prints them all at once at the end, so that nothing the hooks
# say is torn apart by kernel messages on the console; the moment a hook ran is marked by a
# kernel log line "e2e: …" (kernel lines reach the console whole and in order).

dg_fact() {
	mkdir -p /run/e2e
	echo "@e2e $1=$2" >>/run/e2e/facts
}
dg_kmsg() { echo "e2e: $*" >/dev/kmsg; }

# dg_standin: the sysfs directory of the VGA stand-in (1234:1111), found by ID.
dg_standin() {
	for dg_d in /sys/bus/pci/devices/*; do
		[ "$(cat "$dg_d/vendor"):$(cat "$dg_d/device")" = 0x1234:0x1111 ] && echo "$dg_d" && return 0
	done
	return 1
}
dg_driver() { if [ -e "$1/driver" ]; then basename "$(readlink "$1/driver")"; else echo none; fi; }

# dg_udevd: the PID of the running systemd-udevd, or "none" (a scan of /proc/*/comm).
dg_udevd() {
	for dg_c in /proc/[0-9]*/comm; do
		read -r dg_n <"$dg_c" 2>/dev/null || continue
		[ "$dg_n" = systemd-udevd ] || continue
		dg_p=${dg_c%/comm}
		echo "${dg_p#/proc/}"
		return 0
	done
	echo none
}

# dg_at WHERE: what the world looks like at this moment, as facts WHERE.KEY and one kernel
# log line "e2e: WHERE: …".
dg_at() {
	dg_u=$(dg_udevd)
	dg_s=$(dg_standin) || dg_s=''
	if [ -n "$dg_s" ]; then
		dg_drv=$(dg_driver "$dg_s")
		dg_ovr=$(cat "$dg_s/driver_override")
	else
		dg_drv=absent dg_ovr=absent
	fi
	dg_st=no
	[ ! -f /run/gpuvm/state.json ] || dg_st=yes
	dg_b=no
	[ ! -d /sys/module/bochs ] || dg_b=yes
	dg_fact "$1.udevd" "$dg_u"
	dg_fact "$1.vga.driver" "$dg_drv"
	dg_fact "$1.vga.override" "$dg_ovr"
	dg_fact "$1.state" "$dg_st"
	dg_fact "$1.bochs" "$dg_b"
	dg_kmsg "$1: udevd=$dg_u vga.driver=$dg_drv vga.override=$dg_ovr state=$dg_st bochs=$dg_b"
}
