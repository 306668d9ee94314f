# shellcheck shell=sh
# The Debian package (make deb) installed the Debian way into a root of that
# release with initramfs-tools ($E2E_ARGS: the release; matrix): the cached root
# build/roots/RELEASE-initramfs-tools that cells/itools-release.sh builds its images in.
#  - `apt-get install ./gpuvm_VERSION_amd64.deb` (offline: the root has all it needs) runs the
#    package's update-initramfs trigger: initramfs-tools' `update-initramfs -u` writes the
#    root's /boot/initrd.img-KVER, and lsinitramfs shows gpuvm, its init-top script and
#    vfio-pci in it. That image boots as itools-release's does: the stand-in on vfio-pci,
#    gpuvm's kernel log lines before udevd started, the state file says ok.
#  - `apt-get remove gpuvm` runs the trigger again: the image has no gpuvm, and it boots with
#    the stand-in on bochs-drm, its own driver; the conffile /etc/gpuvm/gpuvm.conf stays.
#  - `apt-get purge gpuvm` takes /etc/gpuvm away (dpkg activates no trigger for a package
#    whose files are gone already: no third build).
# The root's kernel has no image (distro-root.sh diverts its hook), and `update-initramfs -u`
# updates only the images there are: a placeholder stands for the one a host has.
# update-initramfs reads the root's own /etc/initramfs-tools: the test hook and init-premount
# script are put there for the duration (itools_etc_hooks), under the root's lock. Both images
# are built first and booted after, so that the lock is held only while the root changes;
# at the end the root is as it was (package purged, test files, the image and
# update-initramfs' record of it gone). The apt logs: $E2E_OUT/$E2E_NAME.STEP.log.
# shellcheck disable=SC2086 # the cell's words
set -- $E2E_ARGS
release=${1-}
# shellcheck source=tests/e2e/itools-lib.sh
. "$E2E_ROOT/tests/e2e/itools-lib.sh"
version=$(sed -n 's/^VERSION := //p' "$E2E_ROOT/Makefile")
deb=$E2E_ROOT/build/deb/gpuvm_${version}_amd64.deb
if [ ! -f "$deb" ]; then
	if [ "${CI-}" = true ]; then
		e2e_fail "no $deb under CI=true (make test builds it first)"
		exit 1
	fi
	e2e_skip "no build/deb/${deb##*/} (make deb)"
fi
itools_need "$release"
# shellcheck disable=SC2034 # read by lib.sh's e2e_boot
E2E_MEM=${E2E_DISTRO_MEM:-512}
r=$E2E_ITOOLS_ROOT
w=/e2e/$E2E_NAME
kimg=/boot/initrd.img-$E2E_KVER
uconf=$r/etc/initramfs-tools/update-initramfs.conf

# in_root CMD…: CMD inside the root, with the test hook's directory in its environment (apt
# passes it on to dpkg, the trigger, update-initramfs and mkinitramfs' hooks).
in_root() {
	GENERATOR=initramfs-tools "$E2E_ROOT/scripts/distro-root.sh" "$release" -- \
		env E2E_ITOOLS_DIR="$w" DEBIAN_FRONTEND=noninteractive "$@"
}

# apt_step STEP CMD…: CMD inside the root, its output in $E2E_OUT/$E2E_NAME.STEP.log, its time
# in the build times; status 1 (and a failed check) when CMD fails.
apt_step() {
	s=$1
	shift
	t0=$(date +%s.%N)
	in_root "$@" >"$E2E_OUT/$E2E_NAME.$s.log" 2>&1
	rc=$?
	secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
	echo "$s $secs" >>"$E2E_OUT/$E2E_NAME.build-times"
	e2e_note "$s: $* (status $rc, $secs s); log $E2E_OUT/$E2E_NAME.$s.log"
	[ "$rc" -eq 0 ] && return 0
	tail -n 20 "$E2E_OUT/$E2E_NAME.$s.log"
	e2e_fail "$s: $* exited with $rc"
}

# log_has STEP ERE WHAT: the apt log of STEP has a line matching ERE.
log_has() {
	grep -Eq -- "$2" "$E2E_OUT/$E2E_NAME.$1.log" || e2e_fail "$1: $3 (no line /$2/ in its log)"
}

# status: gpuvm's dpkg status in the root ("not-installed" when dpkg knows nothing of it).
status() {
	# shellcheck disable=SC2016 # dpkg-query's own format
	st=$(in_root dpkg-query -W -f='${db:Status-Abbrev}' gpuvm 2>/dev/null | tr -d ' ')
	case $st in
	'' | un | pn) echo not-installed ;;
	*) echo "$st" ;;
	esac
}

# image_has WANT FILE…: lsinitramfs of the root's image lists FILE (WANT yes) or none (no).
image_has() {
	want=$1
	shift
	list=$(in_root lsinitramfs "$kimg") || { e2e_fail "lsinitramfs $kimg failed"; return 1; }
	for f; do
		if printf '%s\n' "$list" | grep -Eq "^$f\$"; then
			[ "$want" = yes ] || e2e_fail "$kimg has $f after: $step"
		else
			[ "$want" = no ] || e2e_fail "$kimg has no $f after: $step"
		fi
	done
}

# restore: the root as the other cells expect it; also what an interrupted run left (a
# package still installed is purged without the image build its trigger would ask for).
restore() {
	if [ "$(status)" != not-installed ]; then
		cp -p "$uconf" "$uconf.e2e"
		sed -i 's/^update_initramfs=.*/update_initramfs=no/' "$uconf"
		in_root dpkg --purge gpuvm >/dev/null 2>&1
		mv "$uconf.e2e" "$uconf"
	fi
	[ ! -f "$uconf.e2e" ] || mv "$uconf.e2e" "$uconf"
	itools_etc_hooks off
	rm -f "$r$kimg" "$r$kimg.new"
}

exec 8>"$r.lock"
flock 8
restore
# What itools_image leaves installed by hand (not by dpkg): none of it before the package.
rm -f "$r/usr/sbin/gpuvm" "$r/usr/share/initramfs-tools/hooks/gpuvm"
for s in $E2E_ITOOLS_STAGES; do rm -f "$r/usr/share/initramfs-tools/scripts/$s/gpuvm"; done
itools_etc_hooks on
cp "$deb" "$r$w/"
# `update-initramfs -u` updates the images that exist (the newest kernel's): a host has the
# one its kernel's installation made, the root has none (its kernel hook is diverted). A
# placeholder stands for it; the trigger's build replaces it.
echo 'itools-deb: the image before gpuvm' >"$r$kimg"
ok=yes

step="apt-get install ./${deb##*/}"
apt_step install apt-get install -y "$w/${deb##*/}" || ok=no
if grep -Eq '^Get:.* (https?|ftp)://' "$E2E_OUT/$E2E_NAME.install.log"; then
	e2e_fail "$step fetched packages: $(grep -E '^Get:.* (https?|ftp)://' "$E2E_OUT/$E2E_NAME.install.log" | head -n 1)"
fi
log_has install '^Processing triggers for initramfs-tools' "the package's trigger did not run"
log_has install "^update-initramfs: Generating $kimg" "the trigger built no image"
[ "$(status)" = ii ] || e2e_fail "after $step gpuvm's status is $(status)"
# shellcheck disable=SC2016 # dpkg-query's own format
in_root dpkg-query -W -f='${Conffiles}\n' gpuvm | grep -q '^ /etc/gpuvm/gpuvm.conf ' ||
	e2e_fail "/etc/gpuvm/gpuvm.conf is not a conffile"
image_has yes usr/sbin/gpuvm scripts/init-top/gpuvm scripts/init-bottom/gpuvm 'usr/lib/modules/.*/vfio-pci\.ko.*' \
	usr/lib/e2e/dracut-check.sh
# The image carries the order init-top runs in: gpuvm before udev.
order=$(zstd -dc "$r$kimg" 2>/dev/null | cpio -i --quiet --to-stdout scripts/init-top/ORDER 2>/dev/null)
itools_order_ok "$order"
cp "$r$kimg" "$E2E_OUT/$E2E_NAME.img" || ok=no

if [ "$ok" = yes ]; then
	step="apt-get remove gpuvm"
	apt_step remove apt-get remove -y gpuvm || ok=no
	log_has remove '^Processing triggers for initramfs-tools' "the package's trigger did not run"
	log_has remove "^update-initramfs: Generating $kimg" "the trigger built no image"
	[ "$(status)" = rc ] || e2e_fail "after $step gpuvm's status is $(status), not rc"
	[ -f "$r/etc/gpuvm/gpuvm.conf" ] || e2e_fail "$step took the conffile away"
	image_has no usr/sbin/gpuvm scripts/init-top/gpuvm
	image_has yes usr/lib/e2e/dracut-check.sh
	cp "$r$kimg" "$E2E_OUT/$E2E_NAME-removed.img" || ok=no

	step="apt-get purge gpuvm"
	apt_step purge apt-get purge -y gpuvm
	[ "$(status)" = not-installed ] || e2e_fail "after $step gpuvm's status is $(status)"
	[ ! -e "$r/etc/gpuvm" ] || e2e_fail "$step left $(find "$r/etc/gpuvm" | tr '\n' ' ')"
fi
restore
flock -u 8
exec 8>&-
# An image the steps above found wrong is not booted (a boot of the placeholder would only
# time out).
[ "$ok" = yes ] && [ -z "$E2E_FAILED" ] || exit 1

# The image with the package installed: as itools-release's.
E2E_IMG=$E2E_OUT/$E2E_NAME.img
e2e_boot --iommu intel --gpu vga --append "gpuvm.mode=vm-passthrough gpuvm.ids=1234:1111"
e2e_guest_done
itools_bound

# The image after `apt-get remove gpuvm`: the same boot line, no gpuvm, the stand-in on its
# own driver.
E2E_IMG=$E2E_OUT/$E2E_NAME-removed.img
e2e_boot --log removed --iommu intel --gpu vga --append "gpuvm.mode=vm-passthrough gpuvm.ids=1234:1111"
e2e_guest_done
e2e_fact_is vga.driver bochs-drm
e2e_fact_is vga.override '(null)'
e2e_fact_is bochs yes
e2e_fact_is state no
e2e_reject '^\[ *[0-9.]+\] gpuvm: ' 'gpuvm ran in the image built after its removal'
