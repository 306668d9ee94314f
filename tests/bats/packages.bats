#!/usr/bin/env bats
# shellcheck disable=SC2154 # $stderr and $output are set by bats' run
# The packages make deb and make rpm built (make test builds them first, both architectures):
# what they carry against a staged `make install`, the Debian package's conffile, trigger and
# control fields, lintian, the RPM's %config, scriptlets and rpmlint (packaging/README.md).

load helpers

VERSION=$(sed -n 's/^VERSION := //p' "$TOP/Makefile")

# stage: `make install` into $STAGE; its files (and links) as paths without the leading
# slash, sorted, in $BATS_TEST_TMPDIR/stage.list.
stage() {
	STAGE=$BATS_TEST_TMPDIR/stage
	run make -s -C "$TOP" install DESTDIR="$STAGE"
	assert_success
	(cd "$STAGE" && find . ! -type d | sed 's|^\./||' | LC_ALL=C sort) >"$BATS_TEST_TMPDIR/stage.list"
	[ -s "$BATS_TEST_TMPDIR/stage.list" ]
}

# deb_list DEB: the files (and links) of DEB, as stage() lists them.
deb_list() {
	dpkg-deb --fsys-tarfile "$1" | tar -tf - | grep -v '/$' | sed 's|^\./||' | LC_ALL=C sort
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
	for u in service timer path; do
		grep -qx "usr/lib/systemd/system/gpuvm-nfd.$u" "$BATS_TEST_TMPDIR/deb.list"
	done
	# Modes as make install gives them, and the binary as it was built and tested.
	x=$BATS_TEST_TMPDIR/x
	dpkg-deb -x "$TOP/build/deb/gpuvm_${VERSION}_amd64.deb" "$x"
	while read -r f; do
		case $f in usr/share/man/*) continue ;; esac
		[ "$(stat -c %a "$STAGE/$f")" = "$(stat -c %a "$x/$f")" ] || fail "$f: mode $(stat -c %a "$x/$f"), make install gives $(stat -c %a "$STAGE/$f")"
	done <"$BATS_TEST_TMPDIR/stage.list"
	cmp "$TOP/build/gpuvm" "$x/usr/sbin/gpuvm"
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
	while read -r src ver; do
		[[ $built_using == *"$src (= $ver)"* ]] || fail "Built-Using lacks $src (= $ver): $built_using"
	done <"$TOP/build/deps/VERSIONS"
	[[ $built_using == *"musl (= "* ]]
	# The maintainer scripts are the tree's, executable; install and upgrade leave the
	# initramfs to the trigger, removal also rebuilds every kernel's image (below).
	for s in postinst postrm; do
		[ -x "$c/$s" ]
		cmp "$TOP/packaging/deb/$s" "$c/$s"
	done
	run grep -E 'update-initramfs -|dracut ' "$c/postinst"
	assert_failure
	run grep -E '^[[:space:]]*(update-initramfs|dracut) ' "$c/postrm"
	assert_output '	update-initramfs -u -k all ||'
	[ ! -e "$c/preinst" ]
	[ ! -e "$c/prerm" ]
	# The changelog's version is the package's.
	zcat <(dpkg-deb --fsys-tarfile "$deb" | tar -xOf - ./usr/share/doc/gpuvm/changelog.gz) |
		head -n 1 | grep -q "^gpuvm ($VERSION) "
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
	run rpm -qp --qf '[%{FILEFLAGS:fflags} %{FILENAMES}\n]' "$r"
	assert_line 'cn /etc/gpuvm/gpuvm.conf'
	[ "$(rpm -qp --qf '%{VERSION}-%{RELEASE} %{ARCH}' "$r")" = "$VERSION-1 x86_64" ]
	x=$BATS_TEST_TMPDIR/x
	mkdir -p "$x"
	(cd "$x" && rpm2cpio "$r" | cpio -id --quiet)
	cmp "$TOP/build/gpuvm" "$x/usr/sbin/gpuvm"
	if [ -f "$TOP/build/rpm/gpuvm-${VERSION}-1.aarch64.rpm" ]; then
		diff <(rpm -qpl "$r") <(rpm -qpl "$TOP/build/rpm/gpuvm-${VERSION}-1.aarch64.rpm")
	fi
}

# The scriptlets, run with a stand-in for dracut: a rebuild of every kernel's image after an
# install or upgrade (%posttrans) and after an erase (%postun with 0), none in the middle of an
# upgrade (%postun with 1) or on an rpm-ostree host, and never a failed transaction. An erase
# removes the NFD feature file gpuvm-nfd.service wrote, as the .deb's postrm does; an upgrade
# keeps it.
@test "the .rpm's scriptlets: dracut --regenerate-all after install, upgrade and erase; never fatal" {
	need rpm command -v rpm
	built "rpm/gpuvm-${VERSION}-1.x86_64.rpm"
	r=$TOP/build/rpm/gpuvm-${VERSION}-1.x86_64.rpm
	run rpm -qp --scripts "$r"
	assert_success
	assert_line --regexp '^posttrans scriptlet \(using /bin/sh\):$'
	assert_line --regexp '^postuninstall scriptlet \(using /bin/sh\):$'
	refute_line --regexp '^(preinstall|postinstall|preuninstall) scriptlet'
	d=$BATS_TEST_TMPDIR
	# shellcheck disable=SC2016 # the stand-in's own $* and $FAKE_RC
	printf '#!/bin/sh\necho "dracut $*" >>%s/calls\nexit "${FAKE_RC:-0}"\n' "$d" >"$d/dracut"
	chmod +x "$d/dracut"
	features=/etc/kubernetes/node-feature-discovery/features.d
	for s in posttrans postun; do
		rpm -qp --qf "%{${s^^}}\n" "$r" | sed -e "s|/usr/bin/dracut|$d/dracut|g" \
			-e "s|/run/ostree-booted|$d/ostree-booted|g" -e "s|$features|$d/features.d|g" >"$d/$s.sh"
		shellcheck -s sh "$d/$s.sh"
	done
	mkdir -p "$d/features.d"
	touch "$d/features.d/gpuvm" "$d/features.d/.gpuvm.tmp" "$d/features.d/other"
	sh -e "$d/posttrans.sh"
	sh -e "$d/postun.sh" 1
	run cat "$d/calls"
	assert_output 'dracut -f -q --regenerate-all'
	[ -e "$d/features.d/gpuvm" ] # an upgrade keeps the feature file
	sh -e "$d/postun.sh" 0
	[ "$(grep -c . "$d/calls")" = 2 ]
	[ ! -e "$d/features.d/gpuvm" ]
	[ ! -e "$d/features.d/.gpuvm.tmp" ]
	[ -e "$d/features.d/other" ] # another source's features stay
	FAKE_RC=1 sh -e "$d/posttrans.sh"
	FAKE_RC=1 sh -e "$d/postun.sh" 0
	[ "$(grep -c . "$d/calls")" = 4 ]
	touch "$d/ostree-booted"
	sh -e "$d/posttrans.sh"
	sh -e "$d/postun.sh" 0
	[ "$(grep -c . "$d/calls")" = 4 ]
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
