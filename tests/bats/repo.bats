#!/usr/bin/env bats
# shellcheck disable=SC2154 # $stderr and $output are set by bats' run
# make repo (packaging/repo.sh): the apt and dnf repositories of the four packages, signed
# with a throwaway key made here (gpg --batch, a temporary GNUPGHOME), and real clients that
# trust them: apt with a private state and configuration (update, policy, download), dnf with
# an installroot and the repository's own gpuvm.repo (repo_gpgcheck and gpgcheck, a download
# that imports the key and checks the package's signature); each refuses a tampered Release,
# repomd.xml or package and a key that is not the repository's. make repo never runs the
# gpuvm binary: under make sanitize and make test-arm64 (GPUVM set to another binary) the
# suite is not run a second time.

load helpers

VERSION=$(sed -n 's/^VERSION := //p' "$TOP/Makefile")

setup_file() {
	export REPO_SKIP=''
	if [ "$GPUVM" != "$TOP/build/gpuvm" ]; then
		REPO_SKIP="make repo runs no gpuvm binary: this suite runs with build/gpuvm only (GPUVM=$GPUVM)"
		return 0
	fi
	local f
	for f in "deb/gpuvm_${VERSION}_amd64.deb" "deb/gpuvm_${VERSION}_arm64.deb" \
		"rpm/gpuvm-${VERSION}-1.x86_64.rpm" "rpm/gpuvm-${VERSION}-1.aarch64.rpm"; do
		[ -f "$TOP/build/$f" ] && continue
		[ "${CI:-}" != true ] || {
			echo "build/$f is missing under CI=true (make test builds it: make packages)" >&2
			return 1
		}
		REPO_SKIP="build/$f is not built (make packages)"
		return 0
	done
	for f in apt-ftparchive createrepo_c dnf rpmsign; do
		command -v "$f" >/dev/null && continue
		[ "${CI:-}" != true ] || {
			echo "$f is missing under CI=true (scripts/install-packages.sh installs it)" >&2
			return 1
		}
		REPO_SKIP="$f is missing (scripts/install-packages.sh installs it)"
		return 0
	done
	# A short home: gpg-agent's socket path has a length limit.
	GNUPGHOME=$(mktemp -d /tmp/gpuvm-gpg.XXXXXX)
	export GNUPGHOME
	# A passphrase costs the fewest rounds in these throwaway keys (the key file's too).
	echo 's2k-count 65536' >"$GNUPGHOME/gpg-agent.conf"
	gpg --batch --quiet --passphrase '' --quick-gen-key 'gpuvm repository test <repo@gpuvm.invalid>' rsa2048 sign never 2>/dev/null
	gpg --batch --quiet --passphrase '' --quick-gen-key 'not the repository <other@gpuvm.invalid>' ed25519 sign never 2>/dev/null
	FPR=$(fpr repo@gpuvm.invalid)
	OTHER=$(fpr other@gpuvm.invalid)
	export FPR OTHER
	REPO=$BATS_FILE_TMPDIR/repo
	export REPO
	# The host's key is the one in the repository itself (/etc/apt/keyrings/… on a host).
	REPO_URL=file://$REPO REPO_GPG_KEY=$FPR REPO_DIR=$REPO REPO_APT_KEYRING=$REPO/gpuvm.asc \
		REPO_RPM_KEY=$REPO/gpuvm.asc make -s -C "$TOP" repo >"$BATS_FILE_TMPDIR/make.log" 2>&1 ||
		{ cat "$BATS_FILE_TMPDIR/make.log" >&2; return 1; }
	# What stands for a host's shells, which gpuvm's RPM requires (/bin/sh, /bin/bash).
	mkdir -p "$BATS_FILE_TMPDIR/base"
	printf '%s\n' 'Name: test-base' 'Version: 1' 'Release: 1' 'Summary: the shells of a host' \
		'License: MIT' 'BuildArch: noarch' 'Provides: /bin/sh' 'Provides: /bin/bash' \
		'%description' 'The shells of a host.' '%files' >"$BATS_FILE_TMPDIR/base.spec"
	rpmbuild -bb --quiet --define "_topdir $BATS_FILE_TMPDIR/rpmbuild" \
		--define "_rpmdir $BATS_FILE_TMPDIR/base" --define '_build_name_fmt %%{NAME}.rpm' \
		"$BATS_FILE_TMPDIR/base.spec" >/dev/null 2>&1
	createrepo_c --quiet --no-database "$BATS_FILE_TMPDIR/base"
}

teardown_file() {
	[ -z "${GNUPGHOME:-}" ] || {
		gpgconf --kill gpg-agent 2>/dev/null
		rm -rf "$GNUPGHOME"
	}
	# dnf's librepo keeps each repository's keys in a GNUPGHOME of its cache, with an agent.
	local h
	for h in "$BATS_FILE_TMPDIR"/*/cache/*/pubring; do
		[ -d "$h" ] && GNUPGHOME=$h gpgconf --kill gpg-agent 2>/dev/null
	done
	return 0
}

setup() {
	[ -z "$REPO_SKIP" ] || skip "$REPO_SKIP"
}

# fpr EMAIL: the fingerprint of the throwaway key of EMAIL.
fpr() {
	gpg --batch --with-colons --list-secret-keys "$1" 2>/dev/null | awk -F: '$1 == "fpr" { print $10; exit }'
}

# apt_env DIR SOURCES: an apt configuration of its own in DIR (state, cache, no other
# source, no other trusted key, none of the host's apt.conf.d) reading SOURCES; sets
# APT_CONFIG. Both architectures of the repository.
apt_env() {
	mkdir -p "$1/state/lists/partial" "$1/cache/archives/partial" "$1/empty"
	: >"$1/status"
	cat >"$1/apt.conf" <<EOF
Dir::State "$1/state";
Dir::State::status "$1/status";
Dir::Cache "$1/cache";
Dir::Etc::SourceList "$2";
Dir::Etc::SourceParts "$1/empty";
Dir::Etc::Parts "$1/empty";
Dir::Etc::Preferences "$1/empty/none";
Dir::Etc::PreferencesParts "$1/empty";
Dir::Etc::Trusted "$1/empty/none.gpg";
Dir::Etc::TrustedParts "$1/empty";
Dir::Log "$1";
APT::Architecture "amd64";
APT::Architectures { "amd64"; "arm64"; };
APT::Sandbox::User "root";
EOF
	export APT_CONFIG=$1/apt.conf
}

# dnf_run DIR REPOFILE ARGS…: dnf with an installroot and a cache of its own in DIR, the
# repositories of REPOFILE and the stand-in for a host's shells, nothing of the host's.
dnf_run() {
	local d=$1 repo=$2
	shift 2
	mkdir -p "$d/repos" "$d/root"
	cp "$repo" "$d/repos/"
	printf '[base]\nname=base\nbaseurl=file://%s\ngpgcheck=0\n' "$BATS_FILE_TMPDIR/base" >"$d/repos/base.repo"
	printf '[main]\n' >"$d/dnf.conf"
	run dnf -y --config="$d/dnf.conf" --installroot="$d/root" --releasever=12 --noplugins \
		--setopt=reposdir="$d/repos" --setopt=cachedir="$d/cache" --setopt=logdir="$d" \
		--setopt=persistdir="$d/persist" "$@"
}

@test "make repo refuses: no REPO_URL, no key, an unsigned repository to publish, plain http, an unknown key, a package not built" {
	run make -s -C "$TOP" repo REPO_GPG_KEY="$FPR"
	assert_failure
	assert_output --partial 'REPO_URL: where'
	run make -s -C "$TOP" repo REPO_URL=https://repo.example.com/gpuvm
	assert_failure
	assert_output --partial 'no signing key: REPO_GPG_KEY=FINGERPRINT'
	run make -s -C "$TOP" repo REPO_URL=https://repo.example.com/gpuvm REPO_UNSIGNED=1
	assert_failure
	assert_output --partial 'an unsigned repository is for a local test only'
	run make -s -C "$TOP" repo REPO_URL=http://repo.example.com/gpuvm REPO_GPG_KEY="$FPR"
	assert_failure
	assert_output --partial 'serve the repository over HTTPS'
	run make -s -C "$TOP" repo REPO_URL=https://repo.example.com/gpuvm REPO_GPG_KEY=0123456789ABCDEF0123456789ABCDEF01234567 \
		REPO_DIR="$BATS_TEST_TMPDIR/r"
	assert_failure
	assert_output --partial 'REPO_GPG_KEY=0123456789ABCDEF0123456789ABCDEF01234567: no such secret key'
	run make -s -C "$TOP" repo VERSION=9.9.9 REPO_URL=https://repo.example.com/gpuvm REPO_GPG_KEY="$FPR" \
		REPO_DIR="$BATS_TEST_TMPDIR/r"
	assert_failure
	assert_output --partial "no package of gpuvm 9.9.9: neither $TOP/build/deb/gpuvm_9.9.9_amd64.deb nor the arm64 one"
	[ ! -e "$BATS_TEST_TMPDIR/r" ]
}

@test "make repo: the layout, the key, the host's two files, every signature verified by gpgv and rpmkeys" {
	for f in deb/dists/stable/InRelease deb/dists/stable/Release deb/dists/stable/Release.gpg \
		deb/dists/stable/main/binary-amd64/Packages.xz deb/dists/stable/main/binary-arm64/Packages.gz \
		"deb/pool/main/g/gpuvm/gpuvm_${VERSION}_amd64.deb" "deb/pool/main/g/gpuvm/gpuvm_${VERSION}_arm64.deb" \
		"rpm/x86_64/gpuvm-${VERSION}-1.x86_64.rpm" "rpm/aarch64/gpuvm-${VERSION}-1.aarch64.rpm" \
		rpm/x86_64/repodata/repomd.xml rpm/x86_64/repodata/repomd.xml.asc rpm/aarch64/repodata/repomd.xml.asc \
		gpuvm.asc gpuvm.sources gpuvm.repo; do
		[ -s "$REPO/$f" ] || fail "no $f in the repository"
	done
	# The public key exported, the secret one never.
	run gpg --batch --with-colons --show-keys "$REPO/gpuvm.asc"
	assert_line "fpr:::::::::$FPR:"
	refute_line --regexp '^sec'
	refute_line --partial "$OTHER"
	run grep -c 'PRIVATE KEY' "$REPO/gpuvm.asc"
	assert_output 0
	run grep -v '^#' "$REPO/gpuvm.sources"
	assert_output "Types: deb
URIs: file://$REPO/deb
Suites: stable
Components: main
Signed-By: $REPO/gpuvm.asc"
	run grep -v '^#' "$REPO/gpuvm.repo"
	assert_output "[gpuvm]
name=gpuvm
baseurl=file://$REPO/rpm/\$basearch
enabled=1
gpgcheck=1
repo_gpgcheck=1
gpgkey=file://$REPO/gpuvm.asc"
	grep -qx 'Architectures: amd64 arm64' "$REPO/deb/dists/stable/Release"
	grep -qx 'Origin: gpuvm' "$REPO/deb/dists/stable/Release"
	# The Debian side's signatures, as apt's gpgv reads them, against the exported key alone.
	gpg --batch --dearmor <"$REPO/gpuvm.asc" >"$BATS_TEST_TMPDIR/key.gpg"
	gpgv --keyring "$BATS_TEST_TMPDIR/key.gpg" "$REPO/deb/dists/stable/InRelease"
	gpgv --keyring "$BATS_TEST_TMPDIR/key.gpg" "$REPO/deb/dists/stable/Release.gpg" "$REPO/deb/dists/stable/Release"
	gpgv --keyring "$BATS_TEST_TMPDIR/key.gpg" "$REPO/rpm/x86_64/repodata/repomd.xml.asc" "$REPO/rpm/x86_64/repodata/repomd.xml"
	# The RPMs carry the signature; the packages make packages built stay as they were.
	mkdir "$BATS_TEST_TMPDIR/rpmdb"
	rpmkeys --dbpath "$BATS_TEST_TMPDIR/rpmdb" --import "$REPO/gpuvm.asc"
	run rpmkeys --dbpath "$BATS_TEST_TMPDIR/rpmdb" --checksig "$REPO"/rpm/*/*.rpm "$TOP/build/rpm/gpuvm-${VERSION}-1.x86_64.rpm"
	assert_line "$REPO/rpm/x86_64/gpuvm-${VERSION}-1.x86_64.rpm: digests signatures OK"
	assert_line "$REPO/rpm/aarch64/gpuvm-${VERSION}-1.aarch64.rpm: digests signatures OK"
	assert_line "$TOP/build/rpm/gpuvm-${VERSION}-1.x86_64.rpm: digests OK"
	cmp "$TOP/build/deb/gpuvm_${VERSION}_amd64.deb" "$REPO/deb/pool/main/g/gpuvm/gpuvm_${VERSION}_amd64.deb"
}

@test "apt, with the repository's gpuvm.sources: update trusts it, policy finds gpuvm on amd64 and arm64, the download is the package built" {
	a=$BATS_TEST_TMPDIR/apt
	apt_env "$a" "$REPO/gpuvm.sources"
	run apt-get update
	assert_success
	refute_output --regexp '^(W|E|Err):'
	run apt-cache policy gpuvm gpuvm:arm64
	assert_success
	assert_line "gpuvm:"
	assert_line "gpuvm:arm64:"
	assert_line "  Candidate: $VERSION"
	assert_line "        500 file:$REPO/deb stable/main amd64 Packages"
	assert_line "        500 file:$REPO/deb stable/main arm64 Packages"
	run apt-get install --download-only -y gpuvm
	assert_success
	cd "$BATS_TEST_TMPDIR"
	run apt-get download gpuvm gpuvm:arm64
	assert_success
	cmp "$TOP/build/deb/gpuvm_${VERSION}_amd64.deb" "$BATS_TEST_TMPDIR/gpuvm_${VERSION}_amd64.deb"
	cmp "$TOP/build/deb/gpuvm_${VERSION}_arm64.deb" "$BATS_TEST_TMPDIR/gpuvm_${VERSION}_arm64.deb"
}

@test "apt refuses: a changed InRelease, a changed Release without InRelease, another key in Signed-By, a changed package" {
	t=$BATS_TEST_TMPDIR
	# copy NAME: the repository at $t/NAME, its gpuvm.sources naming it.
	copy() {
		cp -a "$REPO" "$t/$1"
		sed -i "s|file://$REPO/|file://$t/$1/|" "$t/$1/gpuvm.sources"
		apt_env "$t/apt-$1" "$t/$1/gpuvm.sources"
	}
	copy inrelease
	sed -i 's/^Label: gpuvm$/Label: evil/' "$t/inrelease/deb/dists/stable/InRelease"
	run apt-get update
	assert_failure
	assert_output --partial 'The following signatures were invalid: BADSIG'
	assert_output --partial "E: The repository 'file:$t/inrelease/deb stable InRelease' is not signed."
	run apt-cache policy gpuvm
	refute_output --partial Candidate

	copy release
	rm "$t/release/deb/dists/stable/InRelease"
	sed -i 's/^Label: gpuvm$/Label: evil/' "$t/release/deb/dists/stable/Release"
	run apt-get update
	assert_failure
	assert_output --partial 'The following signatures were invalid: BADSIG'
	run apt-cache policy gpuvm
	refute_output --partial Candidate

	copy otherkey
	gpg --batch --armor --export "$OTHER" >"$t/otherkey/gpuvm.asc"
	sed -i "s|^Signed-By: .*|Signed-By: $t/otherkey/gpuvm.asc|" "$t/otherkey/gpuvm.sources"
	run apt-get update
	assert_failure
	assert_output --partial "NO_PUBKEY ${FPR:24}"
	run apt-cache policy gpuvm
	refute_output --partial Candidate

	# The indices are signed, the package is not: its hash in Packages is what apt checks.
	copy package
	deb=$t/package/deb/pool/main/g/gpuvm/gpuvm_${VERSION}_amd64.deb
	printf 'x' | dd of="$deb" bs=1 seek=2000 conv=notrunc status=none
	run apt-get update
	assert_success
	cd "$t"
	run apt-get download gpuvm
	assert_failure
	assert_output --regexp 'Hash Sum mismatch|Size mismatch'
	[ ! -e "$t/gpuvm_${VERSION}_amd64.deb" ]
}

@test "dnf, with the repository's gpuvm.repo: repo_gpgcheck and gpgcheck pass, the key is imported, gpuvm downloads on x86_64 and aarch64" {
	d=$BATS_TEST_TMPDIR/dnf
	dnf_run "$d" "$REPO/gpuvm.repo" install --downloadonly --downloaddir="$d/dl" gpuvm
	assert_success
	# dnf's spelling of the fingerprint: groups of four.
	assert_line " Fingerprint: $(echo "$FPR" | sed 's/..../& /g; s/ $//')"
	assert_line 'Key imported successfully'
	assert_line 'Complete!'
	cmp "$REPO/rpm/x86_64/gpuvm-${VERSION}-1.x86_64.rpm" "$d/dl/gpuvm-${VERSION}-1.x86_64.rpm"
	dnf_run "$BATS_TEST_TMPDIR/dnf-aarch64" "$REPO/gpuvm.repo" --forcearch=aarch64 \
		install --downloadonly --downloaddir="$d/dl64" gpuvm
	assert_success
	cmp "$REPO/rpm/aarch64/gpuvm-${VERSION}-1.aarch64.rpm" "$d/dl64/gpuvm-${VERSION}-1.aarch64.rpm"
}

@test "dnf refuses: a changed repomd.xml; a package signed by another key under metadata signed right" {
	t=$BATS_TEST_TMPDIR
	cp -a "$REPO" "$t/repomd"
	sed -i "s|$REPO/|$t/repomd/|" "$t/repomd/gpuvm.repo"
	sed -i 's|<revision>|<revision>1|' "$t/repomd/rpm/x86_64/repodata/repomd.xml"
	dnf_run "$t/dnf-repomd" "$t/repomd/gpuvm.repo" install --downloadonly --downloaddir="$t/dl" gpuvm
	assert_failure
	assert_output --partial "repomd.xml GPG signature verification error: Bad GPG signature"
	[ ! -e "$t/dl/gpuvm-${VERSION}-1.x86_64.rpm" ]

	# Whoever can write the repository and holds another key: the package re-signed, the
	# metadata made again and signed with the repository's key (as if that leaked too).
	cp -a "$REPO" "$t/pkg"
	sed -i "s|$REPO/|$t/pkg/|" "$t/pkg/gpuvm.repo"
	rpmsign --addsign --define "__gpg $(command -v gpg)" --define "_gpg_name $OTHER" \
		"$t/pkg/rpm/x86_64/gpuvm-${VERSION}-1.x86_64.rpm" >/dev/null 2>&1 </dev/null
	createrepo_c --quiet --no-database --general-compress-type=gz "$t/pkg/rpm/x86_64"
	gpg --batch --yes --armor --detach-sign --local-user "$FPR" "$t/pkg/rpm/x86_64/repodata/repomd.xml"
	dnf_run "$t/dnf-pkg" "$t/pkg/gpuvm.repo" install --downloadonly --downloaddir="$t/dl" gpuvm
	assert_failure
	assert_line "Public key for gpuvm-${VERSION}-1.x86_64.rpm is not installed. Failing package is: gpuvm-${VERSION}-1.x86_64"
	assert_line 'Error: GPG check FAILED'
	# (the file is downloaded before it is checked, and left in the download folder)
}

@test "REPO_GPG_KEY_FILE with REPO_GPG_PASSPHRASE_FILE: signed the same, nothing left behind; a wrong passphrase refuses" {
	t=$BATS_TEST_TMPDIR
	mkdir -m 0700 "$t/tmp"
	printf 'correct horse\n' >"$t/pass"
	printf 'wrong horse\n' >"$t/wrong"
	gpg --batch --quiet --pinentry-mode loopback --passphrase-file "$t/pass" \
		--quick-gen-key 'gpuvm key file <file@gpuvm.invalid>' ed25519 sign never 2>/dev/null
	k=$(fpr file@gpuvm.invalid)
	gpg --batch --quiet --pinentry-mode loopback --passphrase-file "$t/pass" --armor \
		--export-secret-keys "$k" >"$t/secret.asc"
	grep -q 'BEGIN PGP PRIVATE KEY BLOCK' "$t/secret.asc"
	# The caller's GNUPGHOME plays no part: the key file is imported into a home of its own.
	TMPDIR=$t/tmp GNUPGHOME=$t/none run make -s -C "$TOP" repo REPO_URL="file://$t/repo" \
		REPO_GPG_KEY_FILE="$t/secret.asc" REPO_GPG_PASSPHRASE_FILE="$t/pass" REPO_DIR="$t/repo"
	assert_success
	assert_line --partial "signed by $k"
	gpg --batch --dearmor <"$t/repo/gpuvm.asc" >"$t/key.gpg"
	gpgv --keyring "$t/key.gpg" "$t/repo/deb/dists/stable/InRelease"
	gpgv --keyring "$t/key.gpg" "$t/repo/rpm/aarch64/repodata/repomd.xml.asc" "$t/repo/rpm/aarch64/repodata/repomd.xml"
	mkdir "$t/rpmdb"
	rpmkeys --dbpath "$t/rpmdb" --import "$t/repo/gpuvm.asc"
	run rpmkeys --dbpath "$t/rpmdb" --checksig "$t/repo/rpm/x86_64/gpuvm-${VERSION}-1.x86_64.rpm"
	assert_output "$t/repo/rpm/x86_64/gpuvm-${VERSION}-1.x86_64.rpm: digests signatures OK"
	# Its temporary home (the imported secret key) is gone, and its agent with it.
	run ls -A "$t/tmp"
	assert_output ''
	run bash -c "ps -eo stat=,args= | awk '\$1 !~ /^Z/' | grep -F '$t/tmp' | grep -v grep"
	assert_output ''
	[ ! -e "$t/none" ]
	TMPDIR=$t/tmp GNUPGHOME=$t/none run make -s -C "$TOP" repo REPO_URL="file://$t/repo2" \
		REPO_GPG_KEY_FILE="$t/secret.asc" REPO_GPG_PASSPHRASE_FILE="$t/wrong" REPO_DIR="$t/repo2"
	assert_failure
	assert_output --partial "gpg could not sign $t/repo2/deb/dists/stable/Release with $k"
	run ls -A "$t/tmp"
	assert_output ''
}

@test "REPO_ADD: an earlier version beside the new one, for a rollback; REPO_UNSIGNED=1 for a local test, and the host files say so" {
	t=$BATS_TEST_TMPDIR
	# gpuvm 0.0.9: the .deb with its version changed, an RPM of that name and version.
	mkdir -p "$t/old"
	dpkg-deb -R "$TOP/build/deb/gpuvm_${VERSION}_amd64.deb" "$t/x"
	sed -i 's/^Version: .*/Version: 0.0.9/' "$t/x/DEBIAN/control"
	dpkg-deb --root-owner-group -Zgzip -z1 -b "$t/x" "$t/old/gpuvm_0.0.9_amd64.deb" >/dev/null
	printf '%s\n' 'Name: gpuvm' 'Version: 0.0.9' 'Release: 1' 'Summary: an earlier gpuvm' 'License: MIT' \
		'%description' 'An earlier gpuvm.' '%files' >"$t/old.spec"
	rpmbuild -bb --quiet --target x86_64 --define "_topdir $t/rpmbuild" --define "_rpmdir $t/old" \
		--define '_build_name_fmt %%{NAME}-%%{VERSION}-%%{RELEASE}.%%{ARCH}.rpm' "$t/old.spec" >/dev/null 2>&1
	[ -f "$t/old/gpuvm-0.0.9-1.x86_64.rpm" ]
	run make -s -C "$TOP" repo REPO_URL="file://$t/repo" REPO_UNSIGNED=1 REPO_ADD="$t/old" REPO_DIR="$t/repo"
	assert_success
	assert_line --partial 'UNSIGNED'
	[ ! -e "$t/repo/deb/dists/stable/InRelease" ]
	[ ! -e "$t/repo/deb/dists/stable/Release.gpg" ]
	[ ! -e "$t/repo/rpm/x86_64/repodata/repomd.xml.asc" ]
	[ ! -e "$t/repo/gpuvm.asc" ]
	grep -qx 'Trusted: yes' "$t/repo/gpuvm.sources"
	grep -qx 'gpgcheck=0' "$t/repo/gpuvm.repo"
	grep -q '^# UNSIGNED' "$t/repo/gpuvm.sources"
	grep -q '^# UNSIGNED' "$t/repo/gpuvm.repo"
	apt_env "$t/apt" "$t/repo/gpuvm.sources"
	run apt-get update
	assert_success
	run apt-cache policy gpuvm
	assert_line "  Candidate: $VERSION"
	assert_line --regexp '^     0\.0\.9 500$'
	cd "$t"
	run apt-get download gpuvm=0.0.9
	assert_success
	[ "$(dpkg-deb -f "$t/gpuvm_0.0.9_amd64.deb" Version)" = 0.0.9 ]
	dnf_run "$t/dnf" "$t/repo/gpuvm.repo" --showduplicates list gpuvm
	assert_success
	assert_line --regexp '^gpuvm\.x86_64 +0\.0\.9-1 +gpuvm$'
	assert_line --regexp "^gpuvm\.x86_64 +${VERSION//./\\.}-1 +gpuvm\$"
	# A folder with no gpuvm package in it is a mistake, said so.
	mkdir "$t/empty"
	run make -s -C "$TOP" repo REPO_URL="file://$t/repo3" REPO_UNSIGNED=1 REPO_ADD="$t/empty" REPO_DIR="$t/repo3"
	assert_failure
	assert_output --partial "REPO_ADD=$t/empty holds no gpuvm_*.deb nor gpuvm-*.rpm"
}

# A tree that built amd64's packages alone (make deb rpm, no make arm64): make repo publishes
# amd64 and says which architectures it took; apt on the host file updates without a word about
# arm64. An architecture's .deb without its .rpm is refused, naming what is missing. The
# script runs from a copy of the tree's packaging/ with such a build/ beside it.
@test "make repo with amd64's packages alone: amd64's repositories, said so; a .deb without its .rpm refused" {
	t=$BATS_TEST_TMPDIR
	mkdir -p "$t/tree/packaging" "$t/tree/build/deb" "$t/tree/build/rpm"
	cp "$TOP/packaging/repo.sh" "$t/tree/packaging/"
	cp "$TOP/build/deb/gpuvm_${VERSION}_amd64.deb" "$t/tree/build/deb/"
	cp "$TOP/build/rpm/gpuvm-${VERSION}-1.x86_64.rpm" "$t/tree/build/rpm/"
	REPO_URL=file://$t/repo REPO_UNSIGNED=1 REPO_DIR=$t/repo run sh "$t/tree/packaging/repo.sh" "$VERSION"
	assert_success
	assert_line "repo: gpuvm $VERSION, architectures: amd64 (not built, left out: arm64)"
	grep -qx 'Architectures: amd64' "$t/repo/deb/dists/stable/Release"
	[ -s "$t/repo/deb/dists/stable/main/binary-amd64/Packages" ]
	[ ! -e "$t/repo/deb/dists/stable/main/binary-arm64" ]
	[ -s "$t/repo/rpm/x86_64/repodata/repomd.xml" ]
	[ ! -e "$t/repo/rpm/aarch64" ]
	apt_env "$t/apt" "$t/repo/gpuvm.sources"
	run apt-get update
	assert_success
	refute_output --regexp '^(W|E|Err):'
	run apt-cache policy gpuvm
	assert_line "  Candidate: $VERSION"
	# Half an architecture: refused, nothing written.
	cp "$TOP/build/deb/gpuvm_${VERSION}_arm64.deb" "$t/tree/build/deb/"
	REPO_URL=file://$t/repo2 REPO_UNSIGNED=1 REPO_DIR=$t/repo2 run sh "$t/tree/packaging/repo.sh" "$VERSION"
	assert_failure
	assert_output "repo.sh: $t/tree/build/deb/gpuvm_${VERSION}_arm64.deb without $t/tree/build/rpm/gpuvm-${VERSION}-1.aarch64.rpm: make rpm ARCH=arm64, or take the .deb away (make packages builds all four)"
	[ ! -e "$t/repo2" ]
	# And all four: both architectures, nothing left out.
	cp "$TOP/build/rpm/gpuvm-${VERSION}-1.aarch64.rpm" "$t/tree/build/rpm/"
	REPO_URL=file://$t/repo3 REPO_UNSIGNED=1 REPO_DIR=$t/repo3 run sh "$t/tree/packaging/repo.sh" "$VERSION"
	assert_success
	assert_line "repo: gpuvm $VERSION, architectures: amd64 arm64"
}
