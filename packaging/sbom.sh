#!/bin/sh
# packaging/sbom.sh VERSION ARCH — the software bill of materials of the static gpuvm binary
# of ARCH (amd64: build/gpuvm, arm64: build/arm64/gpuvm) on stdout, as an SPDX 2.3 JSON
# document: gpuvm itself (MIT), the file with its SHA-1 and SHA-256, and each library it
# holds (musl, libkmod, libblkid, liblzma, libzstd) with its Debian source package and
# version (the VERSIONS file scripts/deps.sh wrote, musl-dev's version), its licence and a
# package URL; each library is related to gpuvm by STATIC_LINK. A library built from an older
# source than the archive's newest (scripts/deps.sh --allow-older, DEPS_ALLOW_OLDER=1: its
# VERSIONS line says "older-than=NEWEST") says so in its sourceInfo and its comment, naming the
# newer version it lacks. The packages install it as
# /usr/share/doc/gpuvm/gpuvm.spdx.json; `make sbom` writes build/gpuvm.spdx.json. The date is
# packaging/changelog's (SOURCE_DATE_EPOCH), so the same tree gives the same document.
set -eu
[ $# -eq 2 ] || { echo "usage: $0 VERSION amd64|arm64" >&2; exit 2; }
version=$1 arch=$2
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=packaging/stage.sh
. "$here/stage.sh"
pkg_vars "$arch"
command -v jq >/dev/null || pkg_die "no jq (scripts/install-packages.sh)"

changelog=$PKG_TOP/packaging/changelog
when=$(date -u -d "$(sed -n 's/^ -- .*>  //p' "$changelog" | head -n 1)" +%Y-%m-%dT%H:%M:%SZ)
sha1=$(sha1sum "$PKG_BIN" | cut -d' ' -f1)
sha256=$(sha256sum "$PKG_BIN" | cut -d' ' -f1)
# SPDX's verification code of a package of one file: the SHA-1 of that file's SHA-1 in hex.
vcode=$(printf '%s' "$sha1" | sha1sum | cut -d' ' -f1)

# One line a library: NAME SOURCE-PACKAGE VERSION NEWEST LICENCE (NEWEST: the archive's newer
# version it was built without, or "-"; the licence last: it has blanks).
libs=$(
	awk '
		{ newer = "-"; if ($3 ~ /^older-than=./) { newer = $3; sub(/^older-than=/, "", newer) } }
		$1 == "kmod" { print "libkmod", $1, $2, newer, "LGPL-2.1-or-later" }
		$1 == "util-linux" { print "libblkid", $1, $2, newer, "LGPL-2.1-or-later" }
		$1 == "xz-utils" { print "liblzma", $1, $2, newer, "LicenseRef-public-domain" }
		$1 == "libzstd" { print "libzstd", $1, $2, newer, "BSD-3-Clause OR GPL-2.0-only" }
	' "$PKG_DEPS"
	echo "musl musl $PKG_MUSL - MIT"
)
[ "$(printf '%s\n' "$libs" | wc -l)" -eq 5 ] ||
	pkg_die "$PKG_DEPS does not name the four libraries: $(tr '\n' ' ' <"$PKG_DEPS")"

printf '%s\n' "$libs" | jq -R -s --arg version "$version" --arg arch "$arch" --arg when "$when" \
	--arg sha1 "$sha1" --arg sha256 "$sha256" --arg vcode "$vcode" '
	[split("\n")[] | select(length > 0) | split(" ") |
	 { name: .[0], src: .[1], ver: .[2], newer: (if .[3] == "-" then null else .[3] end),
	   lic: (.[4:] | join(" ")) }] as $libs |
	(["MIT"] + ($libs | map(.lic)) | unique |
	 map(if test(" OR ") then "(\(.))" else . end) | join(" AND ")) as $all |
	{
		spdxVersion: "SPDX-2.3",
		dataLicense: "CC0-1.0",
		SPDXID: "SPDXRef-DOCUMENT",
		name: "gpuvm-\($version)-\($arch)",
		documentNamespace: "urn:gpuvm:sbom:\($version):\($arch):\($sha256)",
		creationInfo: { created: $when, creators: ["Tool: gpuvm packaging/sbom.sh"] },
		packages: ([{
			SPDXID: "SPDXRef-Package-gpuvm",
			name: "gpuvm",
			versionInfo: $version,
			downloadLocation: "NOASSERTION",
			filesAnalyzed: true,
			packageVerificationCode: { packageVerificationCodeValue: $vcode },
			licenseConcluded: $all,
			licenseDeclared: "MIT",
			licenseInfoFromFiles: ["NOASSERTION"],
			copyrightText: "Copyright (c) 2026 gpuvm maintainers",
			hasFiles: ["SPDXRef-File-gpuvm"]
		}] + ($libs | map({
			SPDXID: "SPDXRef-Package-\(.name)",
			name: .name,
			versionInfo: .ver,
			supplier: "Organization: Debian",
			downloadLocation: "NOASSERTION",
			filesAnalyzed: false,
			licenseConcluded: .lic,
			licenseDeclared: .lic,
			copyrightText: "NOASSERTION",
			sourceInfo: ("built from the Debian source package \(.src) \(.ver)" +
				(if .newer then ", older than the archive'"'"'s newest, \(.newer)" else "" end)),
			externalRefs: [{
				referenceCategory: "PACKAGE-MANAGER",
				referenceType: "purl",
				referenceLocator: "pkg:deb/debian/\(.src)@\(.ver | @uri)?arch=source"
			}]
		} + (if .newer then { comment: ("OLDER SOURCE: built from \(.src) \(.ver); the Debian " +
			"archive'"'"'s newest, \(.newer), could not be downloaded when it was built and " +
			"DEPS_ALLOW_OLDER=1 let the older one stand in: what \(.newer) fixes is not in " +
			"this binary") } else {} end)))),
		files: [{
			SPDXID: "SPDXRef-File-gpuvm",
			fileName: "./usr/sbin/gpuvm",
			fileTypes: ["BINARY"],
			checksums: [
				{ algorithm: "SHA1", checksumValue: $sha1 },
				{ algorithm: "SHA256", checksumValue: $sha256 }
			],
			licenseConcluded: $all,
			licenseInfoInFiles: ["NOASSERTION"],
			copyrightText: "NOASSERTION"
		}],
		hasExtractedLicensingInfos: [{
			licenseId: "LicenseRef-public-domain",
			name: "public domain",
			extractedText: "liblzma has been put in the public domain (xz-utils COPYING)."
		}],
		relationships: ([
			{ spdxElementId: "SPDXRef-DOCUMENT", relationshipType: "DESCRIBES",
			  relatedSpdxElement: "SPDXRef-Package-gpuvm" },
			{ spdxElementId: "SPDXRef-Package-gpuvm", relationshipType: "CONTAINS",
			  relatedSpdxElement: "SPDXRef-File-gpuvm" }
		] + ($libs | map({
			spdxElementId: "SPDXRef-Package-\(.name)",
			relationshipType: "STATIC_LINK",
			relatedSpdxElement: "SPDXRef-File-gpuvm"
		})))
	}'
