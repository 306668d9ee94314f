#!/bin/sh
# e2e-prefetch.sh — fetch, ahead of the QEMU suite, what its cells would download: Debian's
# kernels of each release and architecture tests/e2e/matrix boots, and the debootstrapped
# roots of its dracut and initramfs-tools cells, into the very caches and under the very
# locks the cells use (build/kernel, build/kernels/RELEASE[-arm64], build/roots). make test
# starts it in the background after setup, so that the downloads and debootstraps (mostly
# waiting on the network and the disk) overlap the stages that keep the CPU busy; the e2e
# stage waits for it first. Nothing here decides a test: a fetch that fails is said, and
# the cell that needs it fetches again (and fails there).
#
#   scripts/e2e-prefetch.sh        print what it does, one line each; exit 1 if any failed
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1

rc=0
run() {
	echo "prefetch: $*"
	"$@" >/dev/null || {
		echo "prefetch: failed ($?): $*"
		rc=1
	}
}

# The matrix's cells, comments and blank lines left out: NAME CELL ARG...
cells=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' tests/e2e/matrix)

# The kernels: bookworm's amd64 one (build/kernel), then each RELEASE (and arm64) a cell
# names among its words, as lib.sh's e2e_kernel fetches them. Not bookworm's arm64 kernel:
# build/arm64's private apt folders are make arm64's (scripts/sysroot.sh) while this runs,
# and two apt-gets on one folder fail on its lock; arm64-lib.sh fetches it in its turn.
run scripts/fetch-kernel.sh build
mkdir -p build/kernels
kernels=$(printf '%s\n' "$cells" | awk '
	$2 !~ /^(dracut|itools)-/ {
		arch = "amd64"; rel = ""
		for (i = 3; i <= NF; i++) {
			if ($i == "arm64") arch = "arm64"
			if ($i ~ /^(bullseye|trixie|forky|sid)$/) rel = $i
		}
		if (rel != "") print rel ":" arch
	}' | sort -u)
for k in $kernels; do
	rel=${k%:*} arch=${k#*:}
	dir=build/kernels/$rel
	[ "$arch" = amd64 ] || dir=$dir-$arch
	mkdir -p "$dir"
	run flock "$dir.lock" scripts/fetch-kernel.sh --release "$rel" --arch "$arch" "$dir"
done

# The roots: each release of a dracut cell but bookworm (the host's own dracut), and each
# of an initramfs-tools cell (the first word after the cell's name).
for rel in $(printf '%s\n' "$cells" | awk '$2 == "dracut-release" && $3 != "bookworm" { print $3 }' | sort -u); do
	run scripts/distro-root.sh "$rel"
done
for rel in $(printf '%s\n' "$cells" | awk '$2 ~ /^itools-/ { print $3 }' | sort -u); do
	run env GENERATOR=initramfs-tools scripts/distro-root.sh "$rel"
done
exit "$rc"
