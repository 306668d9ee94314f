#!/bin/sh
# packaging/mirror-image.sh — the label mirror's OCI image, for amd64 and arm64, from Debian's
# archive only and without a container daemon (mirror/README.md, "The image"):
#
#   mirror-image.sh versions ARCH   build/mirror-image/versions-ARCH, the Debian layer's packages
#                                   and their versions as the archive has them now ("PACKAGE
#                                   VERSION ARCH" a line), rewritten only when they differ
#   mirror-image.sh root ARCH       build/mirror-image/root-ARCH.tar, the Debian layer of those
#   mirror-image.sh image VERSION   build/mirror-image/oci/ (an OCI layout: VERSION-amd64,
#                                   VERSION-arm64 and VERSION, the index of both) and
#                                   build/mirror-image/gpuvm-mirror-VERSION.tar, that layout as
#                                   an OCI archive: skopeo copy --all oci-archive:FILE:VERSION …
#
# The Debian layer: the packages below and what they depend on, from bookworm (its -updates
# and -security suites) on the system's Debian mirror, fetched through a private apt state
# (scripts/apt-private.sh) and unpacked with dpkg-deb --extract, as mmdebstrap's extract
# variant does: nothing of another architecture runs, so arm64 needs no emulation. No package
# is configured (no maintainer script runs); what their scripts would make and the image needs
# is made here: /etc/passwd and /etc/group (root and the image's user), the CA bundle, the dpkg
# status that scanners read. Left out, as Debian's slim images do: documentation but each
# package's copyright, man and info pages, locales; and glibc's iconv modules (gconv), which
# neither jq nor curl loads. The .debs and apt's lists stay in build/mirror-image/apt-ARCH (a
# rerun downloads only what changed). The layer follows Debian's updates: make mirror-image
# runs `versions` each time (apt-get update, then what apt would install), and the versions
# file changes, and with it the layer is made again, when a package's version does (a
# security update) or this script does; otherwise both stay as they are. Offline, a failed
# apt-get update keeps the versions file as it is, with a warning; MIRROR_IMAGE_OFFLINE=1
# resolves against the lists apt-ARCH holds without asking the archive.
#
# ca-certificates is unpacked without its dependencies (debconf, and through it perl-base;
# openssl): they serve only its maintainer script, whose bundle is made here. The mirror itself
# trusts only the service account's ca.crt.
#
# The image: that layer, then one of gpuvm's (the static gpuvm of the architecture,
# gpuvm-label-mirror, gpuvm-kubevirt-patch, gpuvm-dra (the DRA plugin, dra/deploy), the pci.ids, notices, copyright, licence and SBOM
# the packages ship), put together with umoci. Times are packaging/changelog's (SOURCE_DATE_EPOCH,
# as the packages): the same layers give the same image, byte for byte.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=packaging/stage.sh
. "$here/stage.sh"
# shellcheck source=scripts/apt-private.sh
. "$here/../scripts/apt-private.sh"
top=$(cd "$here/.." && pwd)
PKG_TOP=$top
# MIRROR_IMAGE_DIR: another place for all of it (a test rebuilds the image there).
IMG=${MIRROR_IMAGE_DIR:-$top/build/mirror-image}
case $IMG in /*) ;; *) IMG=$(pwd)/$IMG ;; esac

# What the mirror runs: sh, coreutils, sed, grep, awk, jq and curl; base-files for
# /etc/os-release (which scanners read to tell the distribution). What gpuvm-dra (a dynamic
# glibc program, doc/dra.md) loads: libnghttp2, libprotobuf-c, libcurl (OpenSSL) and json-c.
PKGS="base-files dash coreutils sed grep mawk jq curl libnghttp2-14 libprotobuf-c1 libcurl4 libjson-c5"
# The image's own user: no shell, no home. The DaemonSets run it as root (securityContext
# runAsUser 0): the host's /etc/gpuvm is root's.
IMG_UID=65532
PATH_ENV=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

die() {
	echo "mirror-image: $*" >&2
	exit 1
}

# The changelog's date (packaging/deb.sh's SOURCE_DATE_EPOCH), unless one is given.
changelog_epoch() {
	date -d "$(sed -n 's/^ -- .*>  //p' "$top/packaging/changelog" | head -n 1)" +%s
}
: "${SOURCE_DATE_EPOCH:=$(changelog_epoch)}"
export SOURCE_DATE_EPOCH

# det_tar DIR OUT: DIR as a tar that depends on nothing but its content (names sorted,
# numeric owners, times clamped to SOURCE_DATE_EPOCH, no atime or ctime).
det_tar() {
	tar -C "$1" --sort=name --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" --clamp-mtime \
		--format=pax --pax-option='exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime' \
		-cf "$2.tmp" . && mv "$2.tmp" "$2"
}

# deb_file DIR PKG VERSION ARCH: the .deb apt keeps for it in DIR.
deb_file() {
	printf '%s/%s_%s_%s.deb\n' "$1" "$2" "$(printf '%s' "$3" | sed 's/:/%3a/')" "$4"
}

# apt_state ARCH: the private apt state of ARCH (state, archives), its sources.list written.
apt_state() {
	arch=$1
	case $arch in amd64 | arm64) ;; *) die "ARCH: amd64 or arm64, not $arch" ;; esac
	state=$IMG/apt-$arch
	archives=$state/cache/archives
	apt_private_init "$state" deb "$arch" bookworm
	# bookworm-updates too, on the mirror of bookworm's line.
	updates=$(sed -n 's/ bookworm main$/ bookworm-updates main/p' "$state/sources.list")
	printf '%s\n' "$updates" >>"$state/sources.list"
}

# resolve (after apt_state): $state/packages, "PACKAGE VERSION ARCH" a line: the packages of
# the layer and what they depend on, as apt resolves them for an empty system from the lists
# it holds, and ca-certificates alone.
resolve() {
	# shellcheck disable=SC2086 # the package list is split on purpose
	apt_private apt-get install -s --no-install-recommends $PKGS >"$state/plan" 2>&1 ||
		{ cat "$state/plan" >&2; die "$arch: apt cannot install $PKGS"; }
	# "Inst PKG (VERSION ARCHIVES [ARCH])", and " []" after it where apt breaks a loop.
	sed -n 's/^Inst \([^ ]*\) (\([^ ]*\) [^[]*\[\([a-z0-9]*\)\]).*/\1 \2 \3/p' "$state/plan" |
		LC_ALL=C sort >"$state/packages"
	if [ "$(wc -l <"$state/packages")" != "$(grep -c '^Inst ' "$state/plan")" ] ||
		! grep -q '^libc6 ' "$state/packages"; then
		die "$arch: cannot read apt's plan ($state/plan)"
	fi
	# ca-certificates alone (see above).
	ca_ver=$(apt_private apt-cache show --no-all-versions ca-certificates | sed -n 's/^Version: //p')
	[ -n "$ca_ver" ] || die "$arch: no ca-certificates in the archive"
	echo "ca-certificates $ca_ver all" >>"$state/packages"
}

# build_versions ARCH: build/mirror-image/versions-ARCH, rewritten only when what apt resolves
# now differs from what it holds (its time then says when the layer's packages last changed).
build_versions() {
	apt_state "$1"
	out=$IMG/versions-$arch
	if [ "${MIRROR_IMAGE_OFFLINE-}" = 1 ]; then
		echo "mirror-image: $arch: the lists in $state as they are (MIRROR_IMAGE_OFFLINE=1)"
	else
		echo "mirror-image: $arch: apt-get update ($state)"
		if ! apt_private apt-get update >"$state/update.log" 2>&1; then
			cat "$state/update.log" >&2
			[ -f "$out" ] || die "$arch: apt-get update failed"
			echo "mirror-image: $arch: WARNING: apt-get update failed: $out stays as it is, unchecked against the archive" >&2
			return 0
		fi
	fi
	resolve
	if cmp -s "$state/packages" "$out"; then
		echo "mirror-image: $arch: $(wc -l <"$out") packages, as in $out"
		return 0
	fi
	if [ -f "$out" ]; then
		echo "mirror-image: $arch: the layer's packages changed:"
		diff "$out" "$state/packages" | sed -n 's/^\([<>]\) /    \1 /p'
	fi
	cp "$state/packages" "$out.tmp"
	mv "$out.tmp" "$out"
	echo "mirror-image: $arch: $(wc -l <"$out") packages: $out"
}

# build_root ARCH: build/mirror-image/root-ARCH.tar, of the packages versions-ARCH names (made
# first if there is none).
build_root() {
	arch=$1
	command -v dpkg-deb >/dev/null || die "no dpkg-deb"
	[ -f "$IMG/versions-$arch" ] || build_versions "$arch"
	apt_state "$arch"
	root=$IMG/root-$arch
	list=$IMG/versions-$arch
	# shellcheck disable=SC2086
	apt_private apt-get install -y -q --download-only --no-install-recommends $PKGS \
		>"$state/download.log" 2>&1 || { cat "$state/download.log" >&2; die "$arch: download failed"; }
	ca_ver=$(awk '$1 == "ca-certificates" { print $2 }' "$list")
	[ -f "$(deb_file "$archives" ca-certificates "$ca_ver" all)" ] ||
		(cd "$archives" && apt_private apt-get download -q "ca-certificates=$ca_ver" >"$state/download-ca.log" 2>&1) ||
		{ cat "$state/download-ca.log" >&2; die "$arch: ca-certificates: download failed"; }

	rm -rf "$root"
	mkdir -p "$root/var/lib/dpkg"
	: >"$root/var/lib/dpkg/status.new"
	while read -r pkg ver parch; do
		deb=$(deb_file "$archives" "$pkg" "$ver" "$parch")
		[ -f "$deb" ] || die "$arch: apt left no $deb (the archive changed since $list: make mirror-image again)"
		dpkg-deb --extract "$deb" "$root" || die "$arch: cannot unpack $deb"
		{
			dpkg-deb --field "$deb" | awk '{ print } /^Package:/ { print "Status: install ok installed" }'
			echo
		} >>"$root/var/lib/dpkg/status.new"
	done <"$list"
	mv "$root/var/lib/dpkg/status.new" "$root/var/lib/dpkg/status"
	if [ ! -x "$root/bin/dash" ] || [ "$(readlink "$root/bin/sh")" != dash ]; then
		die "$arch: no /bin/sh -> dash in the root"
	fi

	# What the left-out maintainer scripts would have made, as far as the image needs it.
	cat >"$root/etc/passwd" <<-EOF
		root:x:0:0:root:/root:/bin/sh
		gpuvm:x:$IMG_UID:$IMG_UID:gpuvm label mirror:/nonexistent:/bin/false
	EOF
	cat >"$root/etc/group" <<-EOF
		root:x:0:
		gpuvm:x:$IMG_UID:
	EOF
	printf '%s\n' 'passwd: files' 'group: files' 'hosts: files dns' >"$root/etc/nsswitch.conf"
	# update-ca-certificates: every certificate ca-certificates ships, one bundle.
	(cd "$root/usr/share/ca-certificates" && find . -name '*.crt' | sed 's|^\./||' | LC_ALL=C sort) \
		>"$root/etc/ca-certificates.conf"
	mkdir -p "$root/etc/ssl/certs"
	while read -r crt; do
		cat "$root/usr/share/ca-certificates/$crt"
		[ -z "$(tail -c 1 "$root/usr/share/ca-certificates/$crt")" ] || echo
	done <"$root/etc/ca-certificates.conf" >"$root/etc/ssl/certs/ca-certificates.crt"
	[ -s "$root/etc/ssl/certs/ca-certificates.crt" ] || die "$arch: empty CA bundle"
	mkdir -p "$root/tmp" "$root/root"
	chmod 1777 "$root/tmp"
	chmod 0700 "$root/root"
	rm -rf "$root/usr/share/man" "$root/usr/share/info" "$root/usr/share/locale" \
		"$root/usr/share/lintian" "$root"/usr/lib/*-linux-gnu/gconv
	find "$root/usr/share/doc" -mindepth 1 ! -type d ! -type l ! -name copyright -delete
	find "$root/usr/share/doc" -mindepth 1 -type d -empty -delete
	det_tar "$root" "$IMG/root-$arch.tar"
	rm -rf "$root"
	echo "mirror-image: $IMG/root-$arch.tar: $(($(stat -c %s "$IMG/root-$arch.tar") / 1048576)) MiB"
}

# The Debian packages of what gpuvm-dra loads, and their licences as their copyright files say.
DRA_DEBS="libnghttp2-14:MIT libprotobuf-c1:BSD-2-Clause libcurl4:curl libjson-c5:MIT"

# dra_sbom ARCH FILE: packaging/sbom.sh's document (stdin) with gpuvm-dra besides (stdout): the
# package and its file FILE (./usr/bin/gpuvm-dra, its checksums), and each Debian package of
# DRA_DEBS at its version in the Debian layer's dpkg status (root-ARCH.tar), related to the file
# by DYNAMIC_LINK, as sbom.sh relates the static binary's libraries by STATIC_LINK.
dra_sbom() {
	tar -xOf "$IMG/root-$1.tar" ./var/lib/dpkg/status >"$IMG/status-$1" ||
		die "no dpkg status in $IMG/root-$1.tar"
	debs=''
	for d in $DRA_DEBS; do
		v=$(awk -v p="${d%%:*}" '/^Package:/ { n = $2 } /^Version:/ && n == p { print $2 }' "$IMG/status-$1")
		[ -n "$v" ] || die "the Debian layer ($IMG/root-$1.tar) has no ${d%%:*}, which gpuvm-dra loads"
		debs="$debs${d%%:*} $v ${d#*:}
"
	done
	rm -f "$IMG/status-$1"
	jq --arg debs "$debs" --arg arch "$1" \
		--arg sha1 "$(sha1sum "$2" | cut -d' ' -f1)" --arg sha256 "$(sha256sum "$2" | cut -d' ' -f1)" \
		--arg version "$3" '
		[$debs | split("\n")[] | select(length > 0) | split(" ") | { name: .[0], ver: .[1], lic: .[2] }] as $debs |
		.packages += [{
			SPDXID: "SPDXRef-Package-gpuvm-dra",
			name: "gpuvm-dra",
			versionInfo: $version,
			downloadLocation: "NOASSERTION",
			filesAnalyzed: false,
			licenseConcluded: "MIT",
			licenseDeclared: "MIT",
			copyrightText: "Copyright (c) 2026 gpuvm maintainers",
			hasFiles: ["SPDXRef-File-gpuvm-dra"]
		}] + ($debs | map({
			SPDXID: "SPDXRef-Package-deb-\(.name)",
			name: .name,
			versionInfo: .ver,
			supplier: "Organization: Debian",
			downloadLocation: "NOASSERTION",
			filesAnalyzed: false,
			licenseConcluded: .lic,
			licenseDeclared: .lic,
			copyrightText: "NOASSERTION",
			sourceInfo: "the Debian 12 binary package \(.name) \(.ver) of the image'"'"'s Debian layer",
			externalRefs: [{
				referenceCategory: "PACKAGE-MANAGER",
				referenceType: "purl",
				referenceLocator: "pkg:deb/debian/\(.name)@\(.ver | @uri)?arch=\($arch)"
			}]
		}))
		| .files += [{
			SPDXID: "SPDXRef-File-gpuvm-dra",
			fileName: "./usr/bin/gpuvm-dra",
			fileTypes: ["BINARY"],
			checksums: [
				{ algorithm: "SHA1", checksumValue: $sha1 },
				{ algorithm: "SHA256", checksumValue: $sha256 }
			],
			licenseConcluded: "MIT",
			licenseInfoInFiles: ["NOASSERTION"],
			copyrightText: "NOASSERTION"
		}]
		| .relationships += [
			{ spdxElementId: "SPDXRef-DOCUMENT", relationshipType: "DESCRIBES",
			  relatedSpdxElement: "SPDXRef-Package-gpuvm-dra" },
			{ spdxElementId: "SPDXRef-Package-gpuvm-dra", relationshipType: "CONTAINS",
			  relatedSpdxElement: "SPDXRef-File-gpuvm-dra" }
		] + ($debs | map({
			spdxElementId: "SPDXRef-Package-deb-\(.name)",
			relationshipType: "DYNAMIC_LINK",
			relatedSpdxElement: "SPDXRef-File-gpuvm-dra"
		}))'
}

# app_layer VERSION ARCH: build/mirror-image/app-ARCH.tar, gpuvm's layer.
app_layer() {
	pkg_vars "$2"
	pkg_older_gate
	app=$IMG/app-$2
	rm -rf "$app"
	umask 022
	install -D -m 0755 "$PKG_BIN" "$app/usr/sbin/gpuvm"
	# gpuvm-dra of the architecture (make dra, make dra-arm64), linked against the libraries
	# the Debian layer carries.
	case $2 in
	amd64) dra=$top/build/gpuvm-dra want='x86-64' ;;
	arm64) dra=$top/build/arm64/gpuvm-dra want='ARM aarch64' ;;
	esac
	file -b "$dra" | grep -q "$want.*dynamically linked" ||
		die "no $want gpuvm-dra at $dra (make $([ "$2" = amd64 ] && echo dra || echo dra-arm64))"
	install -D -m 0755 "$dra" "$app/usr/bin/gpuvm-dra"
	install -D -m 0755 "$top/mirror/gpuvm-label-mirror" "$app/usr/bin/gpuvm-label-mirror"
	install -D -m 0755 "$top/mirror/gpuvm-kubevirt-patch" "$app/usr/bin/gpuvm-kubevirt-patch"
	# What the packages ship beside the binary (packaging/stage.sh, deb.sh, rpm.sh): the
	# pci.ids of scripts/pciids-ship.sh, which gpuvm kubevirt names devices from here.
	install -D -m 0644 "$PKG_PCIIDS" "$app/usr/share/gpuvm/pci.ids"
	install -D -m 0644 "${PKG_DEPS%/*}/NOTICES" "$app/usr/share/doc/gpuvm/THIRD-PARTY-NOTICES"
	install -D -m 0644 "$top/packaging/deb/copyright" "$app/usr/share/doc/gpuvm/copyright"
	install -D -m 0644 "$top/LICENSE" "$app/usr/share/doc/gpuvm/LICENSE"
	# the SBOM: the packages' (the static gpuvm, its libraries, the pci.ids), and gpuvm-dra with
	# the Debian libraries it loads
	sh "$top/packaging/sbom.sh" "$1" "$2" >"$IMG/sbom-$2.json" || die "packaging/sbom.sh $1 $2 failed"
	dra_sbom "$2" "$app/usr/bin/gpuvm-dra" "$1" <"$IMG/sbom-$2.json" \
		>"$app/usr/share/doc/gpuvm/gpuvm.spdx.json" || die "gpuvm-dra's part of the SBOM failed"
	rm -f "$IMG/sbom-$2.json"
	chmod 0644 "$app/usr/share/doc/gpuvm/gpuvm.spdx.json"
	det_tar "$app" "$IMG/app-$2.tar"
	rm -rf "$app"
}

# build_image VERSION: the layout, its index and the archive.
build_image() {
	version=$1
	command -v umoci >/dev/null || die "no umoci (scripts/install-packages.sh)"
	[ "$(pkg_changelog_version)" = "$version" ] ||
		die "packaging/changelog begins with $(pkg_changelog_version), the Makefile says $version"
	when=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
	lay=$IMG/oci
	rm -rf "$lay"
	umoci init --layout "$lay"
	for arch in amd64 arm64; do
		[ -f "$IMG/root-$arch.tar" ] || die "no $IMG/root-$arch.tar ($0 root $arch)"
		app_layer "$version" "$arch"
		ref=$lay:$version-$arch
		umoci new --image "$ref"
		umoci raw add-layer --image "$ref" --history.created "$when" \
			--history.created_by "packaging/mirror-image.sh root $arch: Debian 12: $PKGS ca-certificates" \
			"$IMG/root-$arch.tar"
		umoci raw add-layer --image "$ref" --history.created "$when" \
			--history.created_by "packaging/mirror-image.sh image $version: gpuvm ($arch), the mirror, gpuvm-dra" \
			"$IMG/app-$arch.tar"
		umoci config --image "$ref" --no-history --created "$when" --os linux --architecture "$arch" \
			--config.user "$IMG_UID:$IMG_UID" --config.env "PATH=$PATH_ENV" --config.workingdir / \
			--config.entrypoint /usr/bin/gpuvm-label-mirror \
			--config.label "org.opencontainers.image.title=gpuvm-mirror" \
			--config.label "org.opencontainers.image.description=gpuvm's label mirror (mirror/README.md)" \
			--config.label "org.opencontainers.image.version=$version" \
			--config.label "org.opencontainers.image.created=$when" \
			--config.label "org.opencontainers.image.source=gpuvm's repository: mirror/, packaging/mirror-image.sh" \
			--config.label "org.opencontainers.image.licenses=MIT"
	done
	umoci gc --layout "$lay"
	# The index of both (umoci makes none): a blob, and its reference VERSION in index.json.
	idx=$(jq -c --arg v "$version" '{schemaVersion: 2, mediaType: "application/vnd.oci.image.index.v1+json",
		manifests: [.manifests[] | (.annotations["org.opencontainers.image.ref.name"] | ltrimstr($v + "-")) as $a |
			{mediaType, digest, size, platform: ({architecture: $a, os: "linux"} +
				(if $a == "arm64" then {variant: "v8"} else {} end))}] | sort_by(.platform.architecture)}' \
		"$lay/index.json")
	[ "$(printf '%s' "$idx" | jq '.manifests | length')" = 2 ] || die "the layout has not both images"
	sum=$(printf '%s' "$idx" | sha256sum | cut -d' ' -f1)
	printf '%s' "$idx" >"$lay/blobs/sha256/$sum"
	jq -c --arg d "sha256:$sum" --argjson n "$(printf '%s' "$idx" | wc -c)" --arg v "$version" \
		'.manifests += [{mediaType: "application/vnd.oci.image.index.v1+json", digest: $d, size: $n,
			annotations: {"org.opencontainers.image.ref.name": $v}}]' "$lay/index.json" >"$lay/index.json.new"
	mv "$lay/index.json.new" "$lay/index.json"
	det_tar "$lay" "$IMG/gpuvm-mirror-$version.tar"
	rm -f "$IMG"/app-*.tar
	echo "mirror-image: $IMG/gpuvm-mirror-$version.tar ($(($(stat -c %s "$IMG/gpuvm-mirror-$version.tar") / 1048576)) MiB): $version, $version-amd64, $version-arm64 (index sha256:$sum)"
}

mkdir -p "$IMG"
case ${1-} in
versions) [ $# -eq 2 ] || die "usage: $0 versions amd64|arm64"; build_versions "$2" ;;
root) [ $# -eq 2 ] || die "usage: $0 root amd64|arm64"; build_root "$2" ;;
image) [ $# -eq 2 ] || die "usage: $0 image VERSION"; build_image "$2" ;;
*) die "usage: $0 versions amd64|arm64 | root amd64|arm64 | image VERSION" ;;
esac
