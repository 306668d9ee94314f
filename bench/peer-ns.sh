#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/peer-ns.sh TREE TOKEN STANDIN ADDRS -- CMD [ARG]...
#
# Runs CMD where a peer without --root (Debian's driverctl) sees the fixture tree TREE as
# the machine, for bench/run.sh. It re-executes itself under `unshare -m --propagation
# private`, so that every mount below is private to CMD and gone when it exits, and then:
#   - binds TREE/sys over /sys, after checking that TREE/sys/.gpuvm-bench-fixture holds
#     TOKEN; then checks through /sys itself that /sys is the fixture: the marker with
#     TOKEN is there, /sys is not a sysfs, and each address of the file ADDRS (one a line:
#     the functions the peer will touch) is a device under /sys/bus/pci/devices whose
#     directory resolves inside /sys/devices. Any doubt: it stops before CMD runs.
#   - binds STANDIN (a program that does nothing and exits 0) over /sbin/modprobe (driverctl
#     calls it by that path to load the driver: on Debian it is kmod, which is the file
#     bound over, so insmod, rmmod and the others are the stand-in too) and over udevadm,
#     and checks that they are the stand-in. No module of this machine can be loaded.
#   - mounts a tmpfs over /etc/driverctl.d (where driverctl saves its overrides) and /run.
# Nothing here writes outside the namespace; the caller checks the machine's own PCI
# devices and /etc/driverctl.d before and after (bench/run.sh: host_state).
set -eu

die() {
	echo "peer-ns: $*" >&2
	exit 1
}

if [ $# -lt 6 ] || [ "$5" != -- ]; then
	die "usage: peer-ns.sh TREE TOKEN STANDIN ADDRS -- CMD [ARG]..."
fi
tree=$1 token=$2 standin=$3 addrs=$4
shift 5
case $tree in /*) ;; *) die "$tree: an absolute path, please" ;; esac
[ "$(cat "$tree/sys/.gpuvm-bench-fixture" 2>/dev/null)" = "$token" ] ||
	die "$tree/sys has no marker with this run's token: not a fixture of bench/run.sh"
if [ ! -x "$standin" ] || [ ! -s "$addrs" ]; then
	die "no stand-in $standin or no address list $addrs"
fi

if [ "${GPUVM_BENCH_NS:-}" != "$token" ]; then
	command -v unshare >/dev/null || die "needs unshare (util-linux)"
	GPUVM_BENCH_NS=$token exec unshare -m --propagation private sh "$0" "$tree" "$token" \
		"$standin" "$addrs" -- "$@"
fi
# In the new namespace: it must not be the caller's.
[ "$(readlink /proc/self/ns/mnt)" != "$(readlink "/proc/$PPID/ns/mnt")" ] ||
	die "not in a mount namespace of its own: stopping"

mount --bind "$tree/sys" /sys || die "cannot bind $tree/sys over /sys"
[ "$(cat /sys/.gpuvm-bench-fixture 2>/dev/null)" = "$token" ] ||
	die "/sys does not show the fixture's marker after the bind: stopping"
[ "$(stat -f -c %T /sys)" != sysfs ] || die "/sys is still a sysfs: stopping"
while IFS= read -r a; do
	[ -n "$a" ] || continue
	[ -e "/sys/bus/pci/devices/$a" ] || die "/sys/bus/pci/devices/$a: not in the fixture: stopping"
	case $(realpath "/sys/bus/pci/devices/$a") in
	/sys/devices/*) ;;
	*) die "/sys/bus/pci/devices/$a resolves outside /sys/devices: stopping" ;;
	esac
done <"$addrs"

# same FILE: FILE is the stand-in (the same inode, links followed)
same() { [ "$(stat -L -c %d:%i "$1")" = "$(stat -L -c %d:%i "$standin")" ]; }
for p in /sbin/modprobe /usr/sbin/modprobe /bin/udevadm /usr/bin/udevadm; do
	[ -e "$p" ] || continue
	same "$p" || mount --bind "$standin" "$p" || die "cannot bind the stand-in over $p"
	same "$p" || die "$p is not the stand-in: stopping"
done
if [ -d /etc/driverctl.d ]; then
	mount -t tmpfs -o mode=0755 tmpfs /etc/driverctl.d || die "cannot mount a tmpfs on /etc/driverctl.d"
	[ "$(stat -f -c %T /etc/driverctl.d)" = tmpfs ] || die "/etc/driverctl.d is not the tmpfs: stopping"
fi
case $tree/ in
/run/*) ;; # the tree itself is there: leave /run
*) mount -t tmpfs -o mode=0755 tmpfs /run || die "cannot mount a tmpfs on /run" ;;
esac
unset GPUVM_BENCH_NS
exec "$@"
