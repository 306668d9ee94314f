#!/usr/bin/env bats
# shellcheck disable=SC2154 # $stderr and $output are set by bats' run
# The packages make deb and make rpm built (make test builds them first, both architectures):
# what they carry against a staged `make install`, the Debian package's conffile, trigger and
# control fields, lintian, the RPM's %config, scriptlets and rpmlint (packaging/README.md).

load helpers

VERSION=$(sed -n 's/^VERSION := //p' "$TOP/Makefile")

# stage: `make install` into $STAGE, with the pci.ids the packages ship (make pciids), as
# packaging/stage.sh runs it; its files (and links) as paths without the leading slash, sorted,
# in $BATS_TEST_TMPDIR/stage.list.
stage() {
	STAGE=$BATS_TEST_TMPDIR/stage
	run make -s -C "$TOP" install DESTDIR="$STAGE" PCI_IDS="$TOP/build/pciids/pci.ids"
	assert_success
	(cd "$STAGE" && find . ! -type d | sed 's|^\./||' | LC_ALL=C sort) >"$BATS_TEST_TMPDIR/stage.list"
	[ -s "$BATS_TEST_TMPDIR/stage.list" ]
}

# deb_list DEB: the files (and links) of DEB, as stage() lists them.
deb_list() {
	dpkg-deb --fsys-tarfile "$1" | tar -tf - | grep -v '/$' | sed 's|^\./||' | LC_ALL=C sort
}

# A root to install the packages into for real, with kernels of its own: this host's own
# system (its dpkg, rpm, dracut, systemd-tmpfiles) under an overlay, a writable layer in
# $HR/upper over /, mounted in a mount namespace of its own for each command (the host's
# files and its dpkg and rpm databases are never written), with /boot, /lib/modules and /run
# its own empty folders ($HR/boot, $HR/modules, $HR/run) and the host's /proc and /dev. Not
# /sys: nothing here writes there. dracut builds small images there: every module of the
# host's dracut omitted but gpuvm's and bash, uncompressed, so that cpio lists them; a build
# takes well under a second.
hostroot() {
	need "root (a mount namespace, an overlay over /)" [ "$(id -u)" -eq 0 ]
	need "unshare (util-linux)" command -v unshare
	need "dracut (dracut-core)" test -x /usr/bin/dracut
	HR=$BATS_TEST_TMPDIR/hr
	mkdir -p "$HR/upper/etc/dracut.conf.d" "$HR/upper/tmp" "$HR/work" "$HR/merged" "$HR/run" \
		"$HR/boot" "$HR/modules"
	need "an overlay over / in a mount namespace (overlayfs)" in_hostroot true
	local omit
	omit=$(find /usr/lib/dracut/modules.d -mindepth 1 -maxdepth 1 -printf '%f\n' |
		sed 's/^[0-9][0-9]//' | grep -vxE 'bash|gpuvm' | tr '\n' ' ')
	printf '%s\n' "omit_dracutmodules+=\" $omit \"" 'compress="cat"' 'early_microcode="no"' \
		'hostonly="no"' >"$HR/upper/etc/dracut.conf.d/90-gpuvm-test.conf"
	# man-db's trigger (gpuvm's man page) would index every man page of the host.
	in_hostroot rm -f /var/lib/man-db/auto-update
}

# in_hostroot CMD...: CMD chrooted into the root, with a plain environment.
in_hostroot() {
	# shellcheck disable=SC2016 # the inner shell's
	unshare -m --propagation private sh -c '
		r=$1
		shift
		mount -t overlay overlay -o "lowerdir=/,upperdir=$r/upper,workdir=$r/work" "$r/merged" || exit 1
		mkdir -p "$r/merged/lib/modules" || exit 1
		for d in proc dev; do mount --rbind "/$d" "$r/merged/$d" || exit 1; done
		mount --bind "$r/run" "$r/merged/run" && mount --bind "$r/boot" "$r/merged/boot" &&
			mount --bind "$r/modules" "$r/merged/lib/modules" || exit 1
		exec chroot "$r/merged" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C "$@"' \
		in_hostroot "$HR" "$@"
}

# kernel KVER [vmlinuz|modvmlinuz|none] [image]: a kernel of the root: its module tree (depmod
# over no module), its kernel image in /boot (vmlinuz), in the module tree as RHEL's and
# Fedora's kernel-core ship it (modvmlinuz) or none (a tree a removed kernel left), and with
# "image" an initramfs that is none of dracut's: "before" (the image its install made).
kernel() {
	mkdir -p "$HR/modules/$1"
	in_hostroot depmod "$1" 2>/dev/null
	case ${2:-vmlinuz} in
	vmlinuz) : >"$HR/boot/vmlinuz-$1" ;;
	modvmlinuz) : >"$HR/modules/$1/vmlinuz" ;;
	esac
	[ "${3-}" != image ] || echo before >"$HR/boot/initrd.img-$1"
}

# image_has KVER yes|no: the root's image of KVER is one of dracut's, with gpuvm (its binary
# and its pre-udev hook) or without.
image_has() {
	local img=$HR/boot/initrd.img-$1 list
	[ -f "$img" ] || fail "no image of $1"
	list=$(cpio -it --quiet <"$img") || fail "the image of $1 is no cpio archive: $(head -c 60 "$img")"
	grep -qx usr/lib/dracut/build-parameter.txt <<<"$list" || fail "the image of $1 is not dracut's"
	if [ "$2" = yes ]; then
		grep -qx usr/sbin/gpuvm <<<"$list" || fail "the image of $1 has no gpuvm"
		grep -qx usr/lib/dracut/hooks/pre-udev/00-gpuvm-pre-udev.sh <<<"$list" ||
			fail "the image of $1 has no gpuvm hook"
	else
		[ "$(grep -c gpuvm <<<"$list")" = 0 ] || fail "the image of $1 still holds gpuvm: $(grep gpuvm <<<"$list" | tr '\n' ' ')"
	fi
}

@test "the .deb carries every file make install installs, man pages compressed, Debian's three files and the notices besides" {
	built "deb/gpuvm_${VERSION}_amd64.deb"
	stage
	deb_list "$TOP/build/deb/gpuvm_${VERSION}_amd64.deb" >"$BATS_TEST_TMPDIR/deb.list"
	# What make install installs, as Debian has it: man pages gzip'ed.
	sed 's|^\(usr/share/man/.*\)$|\1.gz|' "$BATS_TEST_TMPDIR/stage.list" >"$BATS_TEST_TMPDIR/want.list"
	run comm -23 "$BATS_TEST_TMPDIR/want.list" "$BATS_TEST_TMPDIR/deb.list"
	assert_success
	assert_output ''
	run comm -13 "$BATS_TEST_TMPDIR/want.list" "$BATS_TEST_TMPDIR/deb.list"
	assert_output "usr/share/doc/gpuvm/THIRD-PARTY-NOTICES
usr/share/doc/gpuvm/changelog.gz
usr/share/doc/gpuvm/copyright
usr/share/doc/gpuvm/gpuvm.spdx.json
usr/share/lintian/overrides/gpuvm"
	# The initramfs-tools hook, the dracut module, the config and the NFD units among them,
	# by name.
	grep -qx usr/share/initramfs-tools/hooks/gpuvm "$BATS_TEST_TMPDIR/deb.list"
	grep -qx usr/lib/dracut/modules.d/90gpuvm/module-setup.sh "$BATS_TEST_TMPDIR/deb.list"
	grep -qx etc/gpuvm/gpuvm.conf "$BATS_TEST_TMPDIR/deb.list"
	grep -qx usr/lib/tmpfiles.d/gpuvm.conf "$BATS_TEST_TMPDIR/deb.list"
	for u in service timer path; do
		grep -qx "usr/lib/systemd/system/gpuvm-nfd.$u" "$BATS_TEST_TMPDIR/deb.list"
	done
	# The pci.ids gpuvm kubevirt names devices from, as scripts/pciids-ship.sh made it.
	grep -qx usr/share/gpuvm/pci.ids "$BATS_TEST_TMPDIR/deb.list"
	# Modes as make install gives them, and the binary as it was built and tested.
	x=$BATS_TEST_TMPDIR/x
	dpkg-deb -x "$TOP/build/deb/gpuvm_${VERSION}_amd64.deb" "$x"
	while read -r f; do
		case $f in usr/share/man/*) continue ;; esac
		[ "$(stat -c %a "$STAGE/$f")" = "$(stat -c %a "$x/$f")" ] || fail "$f: mode $(stat -c %a "$x/$f"), make install gives $(stat -c %a "$STAGE/$f")"
	done <"$BATS_TEST_TMPDIR/stage.list"
	cmp "$TOP/build/gpuvm" "$x/usr/sbin/gpuvm"
	cmp "$TOP/build/pciids/pci.ids" "$x/usr/share/gpuvm/pci.ids"
	zcat "$x/usr/share/man/man8/gpuvm.8.gz" | cmp - "$TOP/doc/gpuvm.8"
}

@test "the arm64 .deb: the same files, the aarch64 binary" {
	built "deb/gpuvm_${VERSION}_arm64.deb"
	built "deb/gpuvm_${VERSION}_amd64.deb"
	diff <(deb_list "$TOP/build/deb/gpuvm_${VERSION}_amd64.deb") <(deb_list "$TOP/build/deb/gpuvm_${VERSION}_arm64.deb")
	x=$BATS_TEST_TMPDIR/x
	dpkg-deb -x "$TOP/build/deb/gpuvm_${VERSION}_arm64.deb" "$x"
	cmp "$TOP/build/arm64/gpuvm" "$x/usr/sbin/gpuvm"
	[ "$(dpkg-deb -f "$TOP/build/deb/gpuvm_${VERSION}_arm64.deb" Architecture)" = arm64 ]
}

@test "the .deb: conffile /etc/gpuvm/gpuvm.conf, the update-initramfs trigger, control fields, maintainer scripts" {
	built "deb/gpuvm_${VERSION}_amd64.deb"
	deb=$TOP/build/deb/gpuvm_${VERSION}_amd64.deb
	c=$BATS_TEST_TMPDIR/control
	dpkg-deb -e "$deb" "$c"
	run cat "$c/conffiles"
	assert_output /etc/gpuvm/gpuvm.conf
	# One directive, without await: dpkg's view (comments and blanks are not directives).
	run sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$c/triggers"
	assert_output 'activate-noawait update-initramfs'
	# Both of Debian 12's generators declare interest in it (initramfs-tools: interest-await,
	# dracut: interest): checked on the generator this host has, when it has one.
	for p in initramfs-tools dracut; do
		f=/var/lib/dpkg/info/$p.triggers
		[ ! -f "$f" ] || grep -Eq '^interest(-await|-noawait)? update-initramfs$' "$f"
	done
	[ "$(dpkg-deb -f "$deb" Version)" = "$VERSION" ]
	[ "$(dpkg-deb -f "$deb" Architecture)" = amd64 ]
	[ -z "$(dpkg-deb -f "$deb" Depends)" ]
	built_using=$(dpkg-deb -f "$deb" Built-Using)
	while read -r src ver _; do
		[[ $built_using == *"$src (= $ver)"* ]] || fail "Built-Using lacks $src (= $ver): $built_using"
	done <"$TOP/build/deps/VERSIONS"
	[[ $built_using == *"musl (= "* ]]
	# The maintainer scripts are the tree's, executable; configure (install, upgrade) and
	# removal rebuild every kernel's image where update-initramfs is there, the trigger the
	# newest once more (below).
	for s in postinst postrm; do
		[ -x "$c/$s" ]
		cmp "$TOP/packaging/deb/$s" "$c/$s"
	done
	run grep -E '^[[:space:]]*(update-initramfs|dracut) ' "$c/postinst"
	assert_output '		update-initramfs -u -k all ||'
	run grep -E '^[[:space:]]*(update-initramfs|dracut) ' "$c/postrm"
	assert_output '	update-initramfs -u -k all ||'
	[ ! -e "$c/preinst" ]
	[ ! -e "$c/prerm" ]
	# The changelog's version is the package's.
	zcat <(dpkg-deb --fsys-tarfile "$deb" | tar -xOf - ./usr/share/doc/gpuvm/changelog.gz) |
		head -n 1 | grep -q "^gpuvm ($VERSION) "
}

# The .deb's postinst run with stand-ins that record their calls (update-initramfs,
# systemd-tmpfiles, systemctl, deb-systemd-helper): configure, at an install and an upgrade,
# rebuilds every kernel's image and makes tmpfiles.d's directories; the other steps do neither.
@test "the .deb's postinst: configure rebuilds every kernel's image (update-initramfs -u -k all) and makes /run/gpuvm; never fatal" {
	built "deb/gpuvm_${VERSION}_amd64.deb"
	d=$BATS_TEST_TMPDIR
	dpkg-deb -e "$TOP/build/deb/gpuvm_${VERSION}_amd64.deb" "$d/control"
	sed -e "s|/run/systemd/system|$d/run-systemd|g" "$d/control/postinst" >"$d/postinst"
	shellcheck -s sh "$d/postinst"
	mkdir -p "$d/bin" "$d/nobin" "$d/run-systemd"
	for t in update-initramfs systemd-tmpfiles systemctl deb-systemd-helper; do
		# shellcheck disable=SC2016 # the stand-in's own $0, $* and $FAKE_RC
		printf '#!/bin/sh\necho "${0##*/} $*" >>%s/calls\nexit "${FAKE_RC:-0}"\n' "$d" >"$d/bin/$t"
		chmod +x "$d/bin/$t"
	done
	PATH=$d/bin:/usr/bin:/bin sh -e "$d/postinst" configure
	run cat "$d/calls"
	assert_output 'systemd-tmpfiles --create gpuvm.conf
deb-systemd-helper update-state gpuvm-nfd.service gpuvm-nfd.timer gpuvm-nfd.path
systemctl --system daemon-reload
update-initramfs -u -k all'
	: >"$d/calls"
	PATH=$d/bin:/usr/bin:/bin sh -e "$d/postinst" configure 0.0.9 # an upgrade
	grep -qx 'update-initramfs -u -k all' "$d/calls"
	: >"$d/calls"
	for a in abort-upgrade abort-remove abort-deconfigure triggered; do
		PATH=$d/bin:/usr/bin:/bin sh -e "$d/postinst" "$a" "$VERSION"
	done
	[ ! -s "$d/calls" ]
	# A failed build or tmpfiles warns and names the command; the install is not failed.
	FAKE_RC=1 PATH=$d/bin:/usr/bin:/bin run --separate-stderr sh -e "$d/postinst" configure
	assert_success
	[ "$stderr" = 'gpuvm: systemd-tmpfiles --create gpuvm.conf failed: /run/gpuvm and /run/gpuvm-reboot come at the next boot
gpuvm: update-initramfs -u -k all failed: an initramfs may lack gpuvm; run it again' ]
	# No update-initramfs (dracut: its trigger rebuilds every image), no systemd-tmpfiles: nothing
	# (a PATH of the stand-ins alone: this host's own systemd-tmpfiles is never run).
	: >"$d/calls"
	cp "$d/bin/systemctl" "$d/bin/deb-systemd-helper" "$d/nobin/"
	PATH=$d/nobin run /bin/sh -e "$d/postinst" configure
	assert_success
	run grep -cE '^(update-initramfs|systemd-tmpfiles)' "$d/calls"
	assert_output 0
}

# The .deb's postrm run with stand-ins that record their calls: update-initramfs (the
# trigger's `update-initramfs -u` rebuilds the newest kernel's image only, and an older
# kernel's image would still hold gpuvm), systemctl and deb-systemd-helper; the files it
# removes under /etc and the systemd check moved into a folder of the test.
@test "the .deb's postrm: removal rebuilds every kernel's image (update-initramfs -u -k all); purge and upgrade do not; never fatal" {
	built "deb/gpuvm_${VERSION}_amd64.deb"
	d=$BATS_TEST_TMPDIR
	dpkg-deb -e "$TOP/build/deb/gpuvm_${VERSION}_amd64.deb" "$d/control"
	features=/etc/kubernetes/node-feature-discovery/features.d
	sed -e "s|$features|$d/features.d|g" -e "s|/etc/gpuvm|$d/etc-gpuvm|g" \
		-e "s|/run/systemd/system|$d/run-systemd|g" "$d/control/postrm" >"$d/postrm"
	shellcheck -s sh "$d/postrm"
	mkdir -p "$d/bin" "$d/nobin" "$d/features.d" "$d/etc-gpuvm" "$d/run-systemd"
	for t in update-initramfs systemctl deb-systemd-helper; do
		# shellcheck disable=SC2016 # the stand-in's own $0, $* and $FAKE_RC
		printf '#!/bin/sh\necho "${0##*/} $*" >>%s/calls\n[ "${0##*/}" != update-initramfs ] || exit "${FAKE_RC:-0}"\n' "$d" >"$d/bin/$t"
		chmod +x "$d/bin/$t"
	done
	touch "$d/features.d/gpuvm" "$d/features.d/other"
	PATH=$d/bin:/usr/bin:/bin sh -e "$d/postrm" remove
	run grep '^update-initramfs' "$d/calls"
	assert_output 'update-initramfs -u -k all'
	grep -qx 'systemctl --system daemon-reload' "$d/calls"
	[ ! -e "$d/features.d/gpuvm" ]
	[ -e "$d/features.d/other" ]
	# After a removal, purge and the steps of an upgrade build no image.
	: >"$d/calls"
	for a in purge upgrade failed-upgrade abort-install abort-upgrade disappear; do
		PATH=$d/bin:/usr/bin:/bin sh -e "$d/postrm" "$a" "$VERSION"
	done
	run grep '^update-initramfs' "$d/calls"
	assert_output ''
	grep -qx 'deb-systemd-helper purge gpuvm-nfd.service gpuvm-nfd.timer gpuvm-nfd.path' "$d/calls"
	[ ! -e "$d/etc-gpuvm" ]
	# A failed build warns and names the command; the removal is not undone.
	FAKE_RC=1 PATH=$d/bin:/usr/bin:/bin run sh -e "$d/postrm" remove
	assert_success
	assert_output 'gpuvm: update-initramfs -u -k all failed: an initramfs may still hold gpuvm; run it again'
	# No update-initramfs (dracut is the generator: its trigger rebuilds every image): nothing.
	: >"$d/calls"
	cp "$d/bin/systemctl" "$d/bin/deb-systemd-helper" "$d/nobin/"
	PATH=$d/nobin:/usr/bin:/bin run sh -e "$d/postrm" remove
	assert_success
	run grep -c '^update-initramfs' "$d/calls"
	assert_output 0
}

# The .deb installed and removed for real (dpkg, in the root of hostroot) on a host with two
# kernels, the older one pinned (an NVIDIA driver's): both images get gpuvm at the install and
# lose it at the removal. The generator stands for initramfs-tools: a package that declares
# the same interest in the update-initramfs trigger and answers it as initramfs-tools'
# postinst does (`update-initramfs -u`), and an update-initramfs that updates as
# initramfs-tools' does (-u: the newest kernel that has an image; -u -k all: every kernel that
# has one) but has the host's real dracut build each image.
@test "the .deb in a root with two kernels: install and removal rebuild both kernels' images; /run/gpuvm made at once" {
	built "deb/gpuvm_${VERSION}_amd64.deb"
	hostroot
	kernel 6.1.0-90-amd64 vmlinuz image
	kernel 6.1.0-91-amd64 vmlinuz image
	g=$BATS_TEST_TMPDIR/gen
	mkdir -p "$g/DEBIAN" "$g/usr/sbin"
	printf '%s\n' 'Package: gpuvm-test-initramfs' 'Version: 1' 'Architecture: all' \
		'Maintainer: gpuvm tests <tests@gpuvm.invalid>' 'Description: initramfs-tools, as gpuvm sees it' \
		' Its trigger and its update-initramfs, each image built by dracut.' >"$g/DEBIAN/control"
	echo 'interest-await update-initramfs' >"$g/DEBIAN/triggers"
	# shellcheck disable=SC2016 # the stand-in's own $1
	printf '%s\n' '#!/bin/sh' 'set -e' \
		'[ "$1" != triggered ] || DPKG_MAINTSCRIPT_PACKAGE="" update-initramfs -u' >"$g/DEBIAN/postinst"
	# shellcheck disable=SC2016 # the stand-in's own variables
	printf '%s\n' '#!/bin/sh' 'set -eu' 'echo "update-initramfs $*" >>/run/update-initramfs.calls' \
		'[ "$1" = -u ] || exit 2' \
		'have=$(for v in /boot/vmlinuz-*; do k=${v#/boot/vmlinuz-}; [ ! -e "/boot/initrd.img-$k" ] || echo "$k"; done | sort -rV)' \
		'case ${3-} in all) want=$have ;; "") want=${have%%[[:space:]]*} ;; *) want=$3 ;; esac' \
		'for k in $want; do' \
		'	echo "update-initramfs: Generating /boot/initrd.img-$k"' \
		'	dracut -f -q "/boot/initrd.img-$k" "$k" 2>/dev/null' \
		'done' >"$g/usr/sbin/update-initramfs"
	chmod 0755 "$g/DEBIAN/postinst" "$g/usr/sbin/update-initramfs"
	dpkg-deb --root-owner-group --build "$g" "$HR/upper/tmp/gen.deb" >/dev/null
	cp "$TOP/build/deb/gpuvm_${VERSION}_amd64.deb" "$HR/upper/tmp/"
	in_hostroot dpkg -i --force-overwrite /tmp/gen.deb >/dev/null
	[ ! -e "$HR/run/update-initramfs.calls" ]

	run in_hostroot dpkg -i "/tmp/gpuvm_${VERSION}_amd64.deb"
	assert_success
	image_has 6.1.0-90-amd64 yes
	image_has 6.1.0-91-amd64 yes
	# The postinst: every kernel; the trigger after it: the newest again.
	run cat "$HR/run/update-initramfs.calls"
	assert_line --index 0 'update-initramfs -u -k all'
	assert_line --index 1 'update-initramfs -u'
	# tmpfiles.d: the directories the label mirror mounts, there before any reboot.
	[ -d "$HR/run/gpuvm" ]
	[ -d "$HR/run/gpuvm-reboot" ]
	[ "$(stat -c '%a %U' "$HR/run/gpuvm" "$HR/run/gpuvm-reboot" | sort -u)" = '755 root' ]

	: >"$HR/run/update-initramfs.calls"
	run in_hostroot dpkg -r gpuvm
	assert_success
	image_has 6.1.0-90-amd64 no
	image_has 6.1.0-91-amd64 no
	run cat "$HR/run/update-initramfs.calls"
	assert_line --index 0 'update-initramfs -u -k all'
	assert_line --index 1 'update-initramfs -u'
}

@test "lintian: nothing but what packaging/deb/lintian-overrides overrides, on both .debs" {
	need lintian command -v lintian
	built "deb/gpuvm_${VERSION}_amd64.deb"
	debs=("$TOP/build/deb/gpuvm_${VERSION}_amd64.deb")
	[ ! -f "$TOP/build/deb/gpuvm_${VERSION}_arm64.deb" ] || debs+=("$TOP/build/deb/gpuvm_${VERSION}_arm64.deb")
	run lintian --pedantic --display-info --display-experimental --tag-display-limit 0 \
		--fail-on error,warning,info,pedantic,experimental "${debs[@]}"
	echo "$output"
	assert_success
	# No tag at all, an unused override included (lintian says it as a tag of its own).
	refute_line --regexp '^[EWIPXC]: '
}

@test "the .rpm carries make install's files but initramfs-tools', /etc as %config(noreplace), the binary as built" {
	need rpm command -v rpm
	built "rpm/gpuvm-${VERSION}-1.x86_64.rpm"
	stage
	r=$TOP/build/rpm/gpuvm-${VERSION}-1.x86_64.rpm
	# The files (not directories) of the package, against the stage without initramfs-tools'.
	rpm -qp --qf '[%{FILEMODES:perms} %{FILENAMES}\n]' "$r" | awk '$1 !~ /^d/ { print substr($2, 2) }' |
		LC_ALL=C sort >"$BATS_TEST_TMPDIR/rpm.list"
	grep -v '^usr/share/initramfs-tools/' "$BATS_TEST_TMPDIR/stage.list" |
		sed 's|^\(usr/share/man/.*\)$|\1.gz|' >"$BATS_TEST_TMPDIR/want.list"
	run comm -3 "$BATS_TEST_TMPDIR/want.list" "$BATS_TEST_TMPDIR/rpm.list"
	assert_output '	usr/share/doc/gpuvm/THIRD-PARTY-NOTICES
	usr/share/doc/gpuvm/gpuvm.spdx.json
	usr/share/licenses/gpuvm/LICENSE
	usr/share/licenses/gpuvm/copyright'
	# Its directories: gpuvm's own, not the system's.
	run rpm -qp --qf '[%{FILEMODES:perms} %{FILENAMES}\n]' "$r"
	assert_line 'drwxr-xr-x /usr/lib/dracut/modules.d/90gpuvm'
	assert_line 'drwxr-xr-x /etc/gpuvm'
	refute_line 'drwxr-xr-x /usr/lib/dracut/modules.d'
	refute_line --regexp ' /usr/share/initramfs-tools'
	for u in service timer path; do
		grep -qx "usr/lib/systemd/system/gpuvm-nfd.$u" "$BATS_TEST_TMPDIR/rpm.list"
	done
	grep -qx usr/lib/tmpfiles.d/gpuvm.conf "$BATS_TEST_TMPDIR/rpm.list"
	refute_line 'drwxr-xr-x /usr/lib/tmpfiles.d'
	grep -qx usr/share/gpuvm/pci.ids "$BATS_TEST_TMPDIR/rpm.list"
	run rpm -qp --qf '[%{FILEFLAGS:fflags} %{FILENAMES}\n]' "$r"
	assert_line 'cn /etc/gpuvm/gpuvm.conf'
	[ "$(rpm -qp --qf '%{VERSION}-%{RELEASE} %{ARCH}' "$r")" = "$VERSION-1 x86_64" ]
	x=$BATS_TEST_TMPDIR/x
	mkdir -p "$x"
	(cd "$x" && rpm2cpio "$r" | cpio -id --quiet)
	cmp "$TOP/build/gpuvm" "$x/usr/sbin/gpuvm"
	cmp "$TOP/build/pciids/pci.ids" "$x/usr/share/gpuvm/pci.ids"
	if [ -f "$TOP/build/rpm/gpuvm-${VERSION}-1.aarch64.rpm" ]; then
		diff <(rpm -qpl "$r") <(rpm -qpl "$TOP/build/rpm/gpuvm-${VERSION}-1.aarch64.rpm")
	fi
}

# The scriptlets, run with stand-ins for dracut and systemd-tmpfiles, over a /lib/modules and
# a /boot of the test: a rebuild of the image of each kernel whose kernel image is there (in
# /boot or in its module tree) after an install or upgrade (%posttrans) and after an erase
# (%postun with 0), none in the middle of an upgrade (%postun with 1) or on an rpm-ostree
# host, and never a failed transaction. %post makes tmpfiles.d's directories. An erase
# removes the NFD feature file gpuvm-nfd.service wrote, as the .deb's postrm does; an upgrade
# keeps it.
@test "the .rpm's scriptlets: dracut for each kernel after install, upgrade and erase; systemd-tmpfiles; never fatal" {
	need rpm command -v rpm
	built "rpm/gpuvm-${VERSION}-1.x86_64.rpm"
	r=$TOP/build/rpm/gpuvm-${VERSION}-1.x86_64.rpm
	run rpm -qp --scripts "$r"
	assert_success
	assert_line --regexp '^postinstall scriptlet \(using /bin/sh\):$'
	assert_line --regexp '^posttrans scriptlet \(using /bin/sh\):$'
	assert_line --regexp '^postuninstall scriptlet \(using /bin/sh\):$'
	refute_line --regexp '^(preinstall|preuninstall) scriptlet'
	d=$BATS_TEST_TMPDIR
	for t in dracut systemd-tmpfiles; do
		# shellcheck disable=SC2016 # the stand-in's own $0, $* and $FAKE_RC
		printf '#!/bin/sh\necho "${0##*/} $*" >>%s/calls\nexit "${FAKE_RC:-0}"\n' "$d" >"$d/$t"
		chmod +x "$d/$t"
	done
	features=/etc/kubernetes/node-feature-discovery/features.d
	for s in postin posttrans postun; do
		rpm -qp --qf "%{${s^^}}\n" "$r" | sed -e "s|/usr/bin/dracut|$d/dracut|g" \
			-e "s|/usr/bin/systemd-tmpfiles|$d/systemd-tmpfiles|g" -e "s|/lib/modules/|$d/modules/|g" \
			-e "s|/boot/|$d/boot/|g" -e "s|/run/ostree-booted|$d/ostree-booted|g" \
			-e "s|$features|$d/features.d|g" >"$d/$s.sh"
		shellcheck -s sh "$d/$s.sh"
	done
	# Three module trees: a kernel with its image in /boot, one with it in the tree (RHEL's and
	# Fedora's kernel-core), and one a removed kernel left (extra modules, no kernel).
	mkdir -p "$d/features.d" "$d/boot" "$d/modules/5.14.0-1.el9.x86_64" "$d/modules/5.14.0-2.el9.x86_64" \
		"$d/modules/5.14.0-0.el9.x86_64/extra"
	: >"$d/boot/vmlinuz-5.14.0-1.el9.x86_64"
	: >"$d/modules/5.14.0-2.el9.x86_64/vmlinuz"
	touch "$d/features.d/gpuvm" "$d/features.d/.gpuvm.tmp" "$d/features.d/other"
	sh -e "$d/postin.sh" 1
	run cat "$d/calls"
	assert_output 'systemd-tmpfiles --create gpuvm.conf'
	: >"$d/calls"
	sh -e "$d/posttrans.sh"
	sh -e "$d/postun.sh" 1
	run cat "$d/calls"
	assert_output 'dracut -f -q --kver 5.14.0-1.el9.x86_64
dracut -f -q --kver 5.14.0-2.el9.x86_64'
	[ -e "$d/features.d/gpuvm" ] # an upgrade keeps the feature file
	: >"$d/calls"
	sh -e "$d/postun.sh" 0
	run cat "$d/calls"
	assert_output 'dracut -f -q --kver 5.14.0-1.el9.x86_64
dracut -f -q --kver 5.14.0-2.el9.x86_64'
	[ ! -e "$d/features.d/gpuvm" ]
	[ ! -e "$d/features.d/.gpuvm.tmp" ]
	[ -e "$d/features.d/other" ] # another source's features stay
	# A failed build goes on to the next kernel and fails nothing; nor does systemd-tmpfiles.
	: >"$d/calls"
	FAKE_RC=1 sh -e "$d/posttrans.sh"
	FAKE_RC=1 sh -e "$d/postun.sh" 0
	FAKE_RC=1 sh -e "$d/postin.sh" 1
	[ "$(grep -c . "$d/calls")" = 5 ]
	# rpm-ostree builds its initramfs itself; no dracut, nothing; no kernel, nothing.
	: >"$d/calls"
	touch "$d/ostree-booted"
	sh -e "$d/posttrans.sh"
	sh -e "$d/postun.sh" 0
	rm "$d/ostree-booted" "$d/dracut"
	sh -e "$d/posttrans.sh"
	[ ! -s "$d/calls" ]
}

# The .rpm installed and erased for real (rpm, in the root of hostroot) with the host's dracut:
# each kernel whose image is there (in /boot, or in its module tree as kernel-core ships it)
# gets gpuvm at the install (%posttrans) and loses it at the erase (%postun); a module tree
# with no kernel image (what a removed kernel left) gets no image. %post makes the
# directories of tmpfiles.d's gpuvm.conf.
@test "the .rpm in a root with two kernels: install and erase rebuild both kernels' images with dracut; /run/gpuvm made at once" {
	need rpm command -v rpm
	built "rpm/gpuvm-${VERSION}-1.x86_64.rpm"
	hostroot
	kernel 6.1.0-90-amd64 vmlinuz
	kernel 6.1.0-91-amd64 modvmlinuz
	kernel 6.1.0-80-amd64 none
	cp "$TOP/build/rpm/gpuvm-${VERSION}-1.x86_64.rpm" "$HR/upper/tmp/"
	run in_hostroot rpm -i --nodeps "/tmp/gpuvm-${VERSION}-1.x86_64.rpm"
	assert_success
	image_has 6.1.0-90-amd64 yes
	image_has 6.1.0-91-amd64 yes
	[ ! -e "$HR/boot/initrd.img-6.1.0-80-amd64" ]
	[ -d "$HR/run/gpuvm" ]
	[ -d "$HR/run/gpuvm-reboot" ]
	run in_hostroot rpm -e gpuvm
	assert_success
	image_has 6.1.0-90-amd64 no
	image_has 6.1.0-91-amd64 no
	[ ! -e "$HR/boot/initrd.img-6.1.0-80-amd64" ]
}

@test "rpmlint: clean with packaging/rpmlint.toml and the filters of packaging/gpuvm.rpmlintrc, each used" {
	need rpmlint command -v rpmlint
	built "rpm/gpuvm-${VERSION}-1.x86_64.rpm"
	rpms=("$TOP/build/rpm/gpuvm-${VERSION}-1.x86_64.rpm")
	[ ! -f "$TOP/build/rpm/gpuvm-${VERSION}-1.aarch64.rpm" ] || rpms+=("$TOP/build/rpm/gpuvm-${VERSION}-1.aarch64.rpm")
	run rpmlint -c "$TOP/packaging/rpmlint.toml" -r "$TOP/packaging/gpuvm.rpmlintrc" "${rpms[@]}"
	echo "$output"
	assert_success
	assert_line --partial '0 errors, 0 warnings'
	refute_line --partial 'unused-rpmlintrc-filter'
}
