#!/bin/sh
# podman-cdi.sh WORKDIR CDI_DIR NODES PODMAN_RUN_ARG...: a container run by Debian's podman
# with CDI devices, as it runs on these machines (doc/dra.md, "Proven here"): as root, in a
# private mount namespace of its own (nothing of the host's mounts changes) with a tmpfs over
# /run, CDI_DIR bound at /var/run/cdi (podman reads /etc/cdi and /var/run/cdi only), the
# cgroup2 mount hidden (crun refuses a hybrid hierarchy), --cgroups disabled, nofile and
# nproc ulimits of 1024, no network; the image a static busybox (podman import: no registry
# is reachable). NODES, the device nodes the spec names (/dev/vfio/2 ...), are made in a /dev
# of the namespace's own, each with /dev/null's numbers: nothing real is behind them.
# WORKDIR holds podman's storage (vfs) and the image; its path must be short (conmon's
# sockets). The container's output is the script's.
set -eu

if [ "${1-}" != --inside ]; then
	exec unshare -m --propagation private sh "$0" --inside "$@"
fi
shift
w=$1 cdi=$2 nodes=$3
shift 3

mount -t tmpfs tmpfs /run
awk '$3 == "cgroup2" {print $2}' /proc/self/mounts | while read -r m; do
	umount "$m"
done
mkdir -p /run/cdi /run/lock
mount --bind "$cdi" /run/cdi

mkdir -p "$w/dev"
mount -t tmpfs -o mode=755 tmpfs "$w/dev"
for n in null zero full random urandom tty ptmx fd stdin stdout stderr; do
	cp -a "/dev/$n" "$w/dev/$n"
done
mkdir -p "$w/dev/pts" "$w/dev/shm"
for n in $nodes; do
	case $n in
	/dev/*) ;;
	*) echo "podman-cdi.sh: $n is not under /dev" >&2; exit 2 ;;
	esac
	mkdir -p "$w/dev/$(dirname "${n#/dev/}")"
	mknod "$w/dev/${n#/dev/}" c 1 3
done
# the host's /dev/shm stays (a test's files may be there)
mount --bind /dev/shm "$w/dev/shm"
mount --rbind "$w/dev" /dev

mkdir -p "$w/img/bin"
cp /bin/busybox "$w/img/bin/busybox"
for a in sh ls cat stat; do
	ln -sf busybox "$w/img/bin/$a"
done
tar -C "$w/img" -cf "$w/busybox.tar" .
pm() {
	podman --root "$w/storage" --runroot "$w/runroot" --storage-driver vfs \
		--cgroup-manager cgroupfs --events-backend none "$@"
}
pm import "$w/busybox.tar" localhost/gpuvm-dra-test:1 >"$w/import.log" 2>&1 ||
	{ cat "$w/import.log" >&2; exit 1; }
pm run --rm --cgroups disabled --network none --ulimit nofile=1024:1024 \
	--ulimit nproc=1024:1024 "$@"
