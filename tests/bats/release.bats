#!/usr/bin/env bats
# shellcheck disable=SC2154,SC2016 # $stderr and $output are set by bats' run; jq programs in single quotes
# What a team redistributes: the licence, the third-party notices of the libraries the static
# binary holds, its bill of materials (SPDX), and a build that gives the same bytes wherever
# it runs.

load helpers

VERSION=$(sed -n 's/^VERSION := //p' "$TOP/Makefile")
NOTICES=$TOP/build/deps/NOTICES
VERSIONS=$TOP/build/deps/VERSIONS

@test "LICENSE is the MIT licence every source file names" {
	run head -n 1 "$TOP/LICENSE"
	assert_output "MIT License"
	grep -q 'THE SOFTWARE IS PROVIDED "AS IS"' "$TOP/LICENSE"
	# every C file and header says the same, in its first line
	run bash -c "cd '$TOP' && git ls-files 'src/*.c' 'src/*.h' | xargs grep -L -m1 'SPDX-License-Identifier: MIT'"
	assert_output ""
}

@test "the notices name each library the binary holds, with its Debian version and licence text" {
	[ -s "$VERSIONS" ]
	local n=0 pkg ver
	while read -r pkg ver _; do
		n=$((n + 1))
		grep -qF "(Debian source package $pkg $ver)" "$NOTICES" || fail "$pkg $ver not in the notices"
	done <"$VERSIONS"
	[ "$n" -eq 4 ]
	grep -qF "(Debian source package musl $(dpkg-query -W -f='${Version}' musl-dev))" "$NOTICES"
	# the texts themselves, not a pointer to a Debian path an RPM host does not have
	[ "$(grep -c 'GNU LESSER GENERAL PUBLIC LICENSE' "$NOTICES")" -ge 2 ]
	grep -q 'Redistributions in binary form must reproduce' "$NOTICES"
	grep -q 'public domain' "$NOTICES"
	grep -qi 'Rich Felker' "$NOTICES"
	# no path of the machine that built it
	run grep -c "$TOP" "$NOTICES"
	assert_output 0
}

@test "the bill of materials: SPDX 2.3, the binary's checksums, each library with version, licence and purl" {
	run sh "$TOP/packaging/sbom.sh" "$VERSION" amd64
	assert_success
	sbom=$output
	j() { printf '%s' "$sbom" | jq -r "$@"; }
	[ "$(j .spdxVersion)" = SPDX-2.3 ]
	[ "$(j .dataLicense)" = CC0-1.0 ]
	[ "$(j '.files[0].checksums[] | select(.algorithm == "SHA256") | .checksumValue')" = \
		"$(sha256sum "$TOP/build/gpuvm" | cut -d' ' -f1)" ]
	[ "$(j '.files[0].checksums[] | select(.algorithm == "SHA1") | .checksumValue')" = \
		"$(sha1sum "$TOP/build/gpuvm" | cut -d' ' -f1)" ]
	# SPDX's verification code: the SHA-1 of the files' SHA-1s, sorted, one after another (the
	# binary and the pci.ids the packages ship beside it)
	[ "$(j '.packages[0].packageVerificationCode.packageVerificationCodeValue')" = \
		"$(sha1sum "$TOP/build/gpuvm" "$TOP/build/pciids/pci.ids" | cut -d' ' -f1 | LC_ALL=C sort | tr -d '\n' | sha1sum | cut -d' ' -f1)" ]
	# the pci.ids: the file, GENERATED_FROM both Debian packages of build/pciids/SOURCES, its
	# licence as its header gives it
	[ "$(j '.files[] | select(.fileName == "./usr/share/gpuvm/pci.ids") | .checksums[] | select(.algorithm == "SHA256") | .checksumValue')" = \
		"$(sha256sum "$TOP/build/pciids/pci.ids" | cut -d' ' -f1)" ]
	grep -q '^#	This file can be distributed under either the GNU General Public License$' "$TOP/build/pciids/pci.ids"
	grep -q '^#	(version 2 or higher) or the 3-clause BSD License.$' "$TOP/build/pciids/pci.ids"
	[ "$(j '.files[] | select(.fileName == "./usr/share/gpuvm/pci.ids") | .licenseConcluded')" = "GPL-2.0-or-later OR BSD-3-Clause" ]
	while read -r role _ ver _; do
		[ "$(j --arg v "$ver" '[.relationships[] | select(.spdxElementId == "SPDXRef-File-pci.ids" and .relationshipType == "GENERATED_FROM") | .relatedSpdxElement] as $from
			| [.packages[] | select(.name == "pci.ids" and .versionInfo == $v and IN(.SPDXID; $from[]) and .licenseDeclared == "GPL-2.0-or-later OR BSD-3-Clause")] | length')" = 1 ] ||
			fail "the $role pci.ids $ver: not in the SBOM"
	done <"$TOP/build/pciids/SOURCES"
	local pkg ver
	while read -r pkg ver _; do
		[ "$(j --arg p "$pkg" '.packages[] | select(.sourceInfo | tostring | test(" \($p) ")) | .versionInfo')" = "$ver" ] ||
			fail "$pkg $ver: not in the SBOM"
	done <"$VERSIONS"
	[ "$(j '[.packages[] | select(.supplier == "Organization: Debian")] | length')" = 7 ]
	[ "$(j '[.relationships[] | select(.relationshipType == "STATIC_LINK")] | length')" = 5 ]
	# every ID a relationship names is an element of the document
	[ "$(j '[.SPDXID, .packages[].SPDXID, .files[].SPDXID] as $ids |
		[.relationships[] | .spdxElementId, .relatedSpdxElement | select(IN($ids[]) | not)] | length')" = 0 ]
	# every licence identifier is on SPDX's list (Debian's node-spdx-license-ids), or a
	# LicenseRef the document defines
	ids=/usr/share/nodejs/spdx-license-ids/index.json
	[ -f "$ids" ] || fail "no $ids (scripts/install-packages.sh installs node-spdx-license-ids)"
	run bash -c "printf '%s' \"\$1\" | jq -r '.packages[].licenseConcluded, .packages[].licenseDeclared, .files[].licenseConcluded' |
		tr '()' '  ' | tr ' ' '\n' | grep -v -e '^$' -e '^AND$' -e '^OR$' | sort -u" sh "$sbom"
	assert_success
	[ -n "$output" ]
	for id in $output; do
		case $id in
		LicenseRef-*) [ "$(j --arg i "$id" '[.hasExtractedLicensingInfos[] | select(.licenseId == $i)] | length')" = 1 ] ||
			fail "$id is not defined in the document" ;;
		*) jq -e --arg i "$id" 'index($i) != null' "$ids" >/dev/null || fail "$id is not an SPDX licence identifier" ;;
		esac
	done
	# the same tree, the same document
	run sh "$TOP/packaging/sbom.sh" "$VERSION" amd64
	[ "$output" = "$sbom" ]
}

@test "the packages carry LICENSE, the notices and the bill of materials of the binary they hold" {
	built "deb/gpuvm_${VERSION}_amd64.deb"
	deb=$TOP/build/deb/gpuvm_${VERSION}_amd64.deb
	x=$BATS_TEST_TMPDIR/x
	dpkg-deb -x "$deb" "$x"
	cmp "$x/usr/share/doc/gpuvm/THIRD-PARTY-NOTICES" "$NOTICES"
	[ "$(jq -r '.files[0].checksums[] | select(.algorithm == "SHA256") | .checksumValue' "$x/usr/share/doc/gpuvm/gpuvm.spdx.json")" = \
		"$(sha256sum "$x/usr/sbin/gpuvm" | cut -d' ' -f1)" ]
	built "rpm/gpuvm-${VERSION}-1.x86_64.rpm"
	rpm=$TOP/build/rpm/gpuvm-${VERSION}-1.x86_64.rpm
	run rpm -qpL "$rpm"
	assert_line /usr/share/licenses/gpuvm/LICENSE
}

@test "the binary holds no path of the machine that built it" {
	run bash -c "strings -a '$TOP/build/gpuvm' | grep -c -e '$TOP' -e '/deps-src/'"
	assert_output 0
	# libkmod's and libblkid's own file names are there, relative
	strings -a "$TOP/build/gpuvm" | grep -q '^kmod-[^/]*/libkmod/libkmod.c$'
}

@test "a build of the same tree in another directory gives the same bytes" {
	tree=$BATS_TEST_TMPDIR/elsewhere/gpuvm
	mkdir -p "$tree"
	(cd "$TOP" && git ls-files -z src dra Makefile scripts | xargs -0 cp --parents -t "$tree")
	# the libraries as this tree built them: their bytes hold no path either (above). -o: the
	# copy's newer scripts/deps.sh must not touch this tree's VERSIONS, which would relink
	# build/gpuvm under the suites running beside this one.
	run make -s -C "$tree" -o "$TOP/build/deps/VERSIONS" "DEPS=$TOP/build/deps" build/gpuvm
	assert_success
	cmp "$TOP/build/gpuvm" "$tree/build/gpuvm"
}

# srcpkg DIR NAME VERSION: a Debian source package (3.0 native) of NAME at VERSION, built in DIR.
srcpkg() {
	local d=$1/$2-$3
	mkdir -p "$d/debian/source"
	echo '3.0 (native)' >"$d/debian/source/format"
	printf '%s\n' "Source: $2" 'Maintainer: gpuvm tests <tests@gpuvm.invalid>' '' "Package: $2" \
		'Architecture: all' 'Description: a source package of the test' ' Nothing in it.' >"$d/debian/control"
	printf '%s\n' "$2 ($3) unstable; urgency=low" '' "  * $3" '' \
		' -- gpuvm tests <tests@gpuvm.invalid>  Thu, 01 Jan 2026 00:00:00 +0000' >"$d/debian/changelog"
	echo "$3" >"$d/COPYING"
	(cd "$1" && dpkg-source -b "$2-$3" >/dev/null 2>&1)
}

# scripts/deps.sh against an archive of the test (a file: repository of deb-src, through
# DEPS_APT_SOURCES, no network) that lists two versions of a source package and serves only
# the older one, as a mirror does whose files lag its index: the newest is a security update
# the build would miss. deps.sh --fetch resolves and unpacks as a build does, and prints the
# library's VERSIONS line.
@test "deps.sh: the archive's newest source cannot be had: an error; DEPS_ALLOW_OLDER=1 or --allow-older takes the older, said in VERSIONS" {
	need "dpkg-source, apt-ftparchive (dpkg-dev, apt-utils)" command -v dpkg-source apt-ftparchive
	t=$BATS_TEST_TMPDIR
	mkdir -p "$t/src" "$t/archive"
	srcpkg "$t/src" gpuvm-test-src 1.0
	srcpkg "$t/src" gpuvm-test-src 1.1
	cp "$t/src"/*.dsc "$t/src"/*.tar.xz "$t/archive/"
	(cd "$t/archive" && apt-ftparchive sources . >Sources 2>/dev/null && apt-ftparchive release . >Release)
	rm "$t/archive/gpuvm-test-src_1.1.tar.xz"
	echo "deb-src [trusted=yes] file:$t/archive ./" >"$t/sources.list"
	# make test allows the older source for its own build (DEPS_ALLOW_OLDER=1 in the
	# environment): each call here says for itself whether it does.
	unset DEPS_ALLOW_OLDER
	fetch() {
		DEPS_APT_SOURCES=$t/sources.list run --separate-stderr sh "$TOP/scripts/deps.sh" "$@" --fetch gpuvm-test-src "$t/out/deps"
	}
	fetch
	assert_failure
	[[ $stderr == *"deps: gpuvm-test-src 1.1, the archive's newest, cannot be downloaded"* ]] || fail "$stderr"
	[[ $stderr == *"DEPS_ALLOW_OLDER=1 (or --allow-older)"* ]] || fail "$stderr"
	[ ! -e "$t/out/deps-src/gpuvm-test-src-1.0" ]
	DEPS_ALLOW_OLDER=1 fetch
	assert_success
	assert_line --index 0 'deps: apt-get update (private lists in '"$t"'/out/deps-src/apt)'
	[ "${lines[-1]}" = 'gpuvm-test-src 1.0 older-than=1.1' ]
	assert_line 'deps: WARNING: gpuvm-test-src 1.0 stands in for 1.1, the archive'"'"'s newest'
	# The older source unpacked is not taken as it stands by a later run: the archive is asked
	# again, and without the flag the answer is the same refusal.
	fetch
	assert_failure
	fetch --allow-older
	assert_success
	[ "${lines[-1]}" = 'gpuvm-test-src 1.0 older-than=1.1' ]
	# Once the newest can be had, it is taken, with or without the flag; then reused as it is.
	cp "$t/src/gpuvm-test-src_1.1.tar.xz" "$t/archive/"
	DEPS_ALLOW_OLDER=1 fetch
	assert_success
	[ "${lines[-1]}" = 'gpuvm-test-src 1.1' ]
	fetch
	assert_success
	assert_output 'gpuvm-test-src 1.1'
	DEPS_ALLOW_OLDER=yes fetch
	assert_failure 2
}

# A VERSIONS line of a library built from an older source (deps.sh above): the SBOM says it of
# that library alone, naming the newer version it lacks; Built-Using names the version built.
# sbom.sh runs from a copy of packaging/ beside a build/ holding such a VERSIONS.
@test "a library built from an older source: the SBOM says so, naming the newer, and Built-Using names the one built" {
	t=$BATS_TEST_TMPDIR/tree
	mkdir -p "$t/packaging" "$t/build/deps" "$t/build/pciids"
	cp "$TOP/packaging/sbom.sh" "$TOP/packaging/stage.sh" "$TOP/packaging/deb.sh" "$TOP/packaging/changelog" "$t/packaging/"
	cp "$TOP/build/gpuvm" "$t/build/"
	cp "$TOP/build/pciids/pci.ids" "$TOP/build/pciids/SOURCES" "$t/build/pciids/"
	cp "$NOTICES" "$t/build/deps/"
	awk '$1 == "util-linux" { print $1, "2.38.1-5+deb12u1", "older-than=" $2; next } { print $1, $2 }' \
		"$VERSIONS" >"$t/build/deps/VERSIONS"
	newest=$(awk '$1 == "util-linux" { print $2 }' "$VERSIONS")
	run sh "$t/packaging/sbom.sh" "$VERSION" amd64
	assert_success
	sbom=$output
	j() { printf '%s' "$sbom" | jq -r "$@"; }
	[ "$(j '.packages[] | select(.name == "libblkid") | .versionInfo')" = 2.38.1-5+deb12u1 ]
	[ "$(j '.packages[] | select(.name == "libblkid") | .sourceInfo')" = \
		"built from the Debian source package util-linux 2.38.1-5+deb12u1, older than the archive's newest, $newest" ]
	[[ "$(j '.packages[] | select(.name == "libblkid") | .comment')" == "OLDER SOURCE: built from util-linux 2.38.1-5+deb12u1; the Debian archive's newest, $newest, could not be downloaded"* ]]
	[ "$(j '[.packages[] | select(.comment)] | length')" = 1 ]
	[ "$(j '.packages[] | select(.name == "libblkid") | .externalRefs[0].referenceLocator')" = \
		'pkg:deb/debian/util-linux@2.38.1-5%2Bdeb12u1?arch=source' ]
	run bash -c ". '$t/packaging/stage.sh'; PKG_DEPS='$t/build/deps/VERSIONS' PKG_MUSL=1.2.3-1; pkg_built_using"
	assert_success
	[[ $output == *"util-linux (= 2.38.1-5+deb12u1)"* ]] || fail "Built-Using: $output"
	[[ $output != *older-than* ]] || fail "Built-Using: $output"
	[ "$(grep -o '(= ' <<<"$output" | wc -l)" = 5 ]
	# Shipped only where allowed for that build too: deb.sh stops, naming the library; the
	# gate passes with DEPS_ALLOW_OLDER=1 (make test and make demo set it).
	run env -u DEPS_ALLOW_OLDER sh "$t/packaging/deb.sh" "$VERSION" amd64
	assert_failure
	[[ $output == *"built from an older source than the archive's newest (util-linux 2.38.1-5+deb12u1 (older-than=$newest))"* ]] ||
		fail "$output"
	run env DEPS_ALLOW_OLDER=1 bash -c ". '$t/packaging/stage.sh'; PKG_DEPS='$t/build/deps/VERSIONS'; pkg_older_gate"
	assert_success
	awk '{ print $1, $2 }' "$VERSIONS" >"$t/newest"
	run env -u DEPS_ALLOW_OLDER bash -c ". '$t/packaging/stage.sh'; PKG_DEPS='$t/newest'; pkg_older_gate"
	assert_success
}

# iddeb DIR VERSION VERSION-LINE: a pci.ids binary package of VERSION whose
# usr/share/misc/pci.ids says VERSION-LINE and names one NVIDIA device, in DIR.
iddeb() {
	local d=$BATS_TEST_TMPDIR/deb-$2
	mkdir -p "$d/DEBIAN" "$d/usr/share/misc" "$1"
	printf '%s\n' "Package: pci.ids" "Version: $2" 'Architecture: all' \
		'Maintainer: gpuvm tests <tests@gpuvm.invalid>' 'Description: a pci.ids of the test' >"$d/DEBIAN/control"
	printf '%s\n' "#	Version: $3" \
		'#	This file can be distributed under either the GNU General Public License' \
		'#	(version 2 or higher) or the 3-clause BSD License.' '' '10de  NVIDIA Corporation' \
		"	2330  named in $3" >"$d/usr/share/misc/pci.ids"
	dpkg-deb --root-owner-group -b "$d" "$1/pci.ids_$2_all.deb" >/dev/null
}

# suite ARCHIVE SUITE: the suite's index and Release of the packages in ARCHIVE/pool/SUITE.
suite() {
	local i=dists/$2/main/binary-amd64
	mkdir -p "$1/$i"
	(cd "$1" && apt-ftparchive packages "pool/$2" >"$i/Packages" 2>/dev/null &&
		apt-ftparchive -o APT::FTPArchive::Release::Suite="$2" release "dists/$2" >"dists/$2/Release")
}

# scripts/pciids-ship.sh DIR against an archive of the test (file:, through PCIIDS_APT_SOURCES,
# no network) with trixie and sid suites: the pinned packages taken and kept, no archive asked
# once both are kept; sid moved past its pin: its newest taken and said; trixie without its pin,
# or sid with nothing at or past it: an error naming the pin.
@test "pciids-ship.sh: the pinned Debian packages, kept; a newer sid taken and said; a missing pin named" {
	need "dpkg-deb, apt-ftparchive (dpkg, apt-utils)" command -v dpkg-deb apt-ftparchive
	t=$BATS_TEST_TMPDIR
	old=$(sed -n 's/^OLD_REL=trixie OLD_VER=//p' "$TOP/scripts/pciids-ship.sh")
	new=$(sed -n 's/^NEW_REL=sid NEW_VER=//p' "$TOP/scripts/pciids-ship.sh")
	[ -n "$old" ] && [ -n "$new" ]
	iddeb "$t/a/pool/trixie" "$old" 2025.06.09
	iddeb "$t/a/pool/sid" "$new" 2026.10.24
	suite "$t/a" trixie
	suite "$t/a" sid
	printf '%s\n' "deb [trusted=yes] file:$t/a trixie main" "deb [trusted=yes] file:$t/a sid main" >"$t/sources.list"
	ship() {
		PCIIDS_APT_SOURCES=$t/sources.list run --separate-stderr sh "$TOP/scripts/pciids-ship.sh" "$@"
	}
	ship "$t/out"
	assert_success
	[[ $stderr == *"pciids-ship: apt-get update"* ]] || fail "$stderr"
	[ "$(cat "$t/out/SOURCES")" = "shipped pci.ids $old trixie
compared pci.ids $new sid" ]
	grep -qx '#gpuvm-uncertain 2330' "$t/out/pci.ids"
	grep -qx '	2330  named in 2025.06.09' "$t/out/pci.ids"
	grep -qxF "#	The NVIDIA block only, by gpuvm's scripts/pciids-ship.sh from Debian's pci.ids $old." "$t/out/pci.ids"
	# no path of the machine that made it
	run grep -cF "$t" "$t/out/pci.ids"
	assert_output 0
	cp "$t/out/pci.ids" "$t/first.ids"
	# Kept: the archive gone, the file is made again from the packages in out/debs alone.
	mv "$t/a" "$t/a.gone"
	rm "$t/out/pci.ids"
	ship "$t/out"
	assert_success
	[[ $stderr != *"apt-get update"* ]] || fail "$stderr"
	cmp "$t/first.ids" "$t/out/pci.ids"
	mv "$t/a.gone" "$t/a"
	# sid past its pin (Debian keeps only its newest): that one, said on stderr and in SOURCES.
	rm "$t/a/pool/sid/"*.deb
	iddeb "$t/a/pool/sid" "${new%-1}.1-1" 2026.11.01
	suite "$t/a" sid
	ship "$t/newer"
	assert_success
	[[ $stderr == *"pciids-ship: sid has pci.ids ${new%-1}.1-1, past the pinned $new: ${new%-1}.1-1 is compared (pin it in scripts/pciids-ship.sh)"* ]] ||
		fail "$stderr"
	grep -qx "compared pci.ids ${new%-1}.1-1 sid" "$t/newer/SOURCES"
	# sid with nothing at or past its pin; trixie without its pin: each an error naming it.
	rm "$t/a/pool/sid/"*.deb
	iddeb "$t/a/pool/sid" "$old" 2025.06.09
	suite "$t/a" sid
	ship "$t/older"
	assert_failure 1
	[[ $stderr == *"pciids-ship: Debian's pci.ids $new, pinned for sid, is not in its archive (it lists: $old)"* ]] || fail "$stderr"
	rm "$t/a/pool/trixie/"*.deb
	iddeb "$t/a/pool/trixie" 0.0~2025.08.01-1 2025.08.01
	suite "$t/a" trixie
	ship "$t/none"
	assert_failure 1
	[[ $stderr == *"pciids-ship: Debian's pci.ids $old, pinned for trixie, is not in its archive (it lists: 0.0~2025.08.01-1)"* ]] || fail "$stderr"
	[ ! -e "$t/none/pci.ids" ]
}
