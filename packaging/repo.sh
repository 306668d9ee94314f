#!/bin/sh
# packaging/repo.sh VERSION — the repositories a fleet points apt and dnf at (make repo), from
# the packages `make packages` built (build/deb/gpuvm_VERSION_{amd64,arm64}.deb,
# build/rpm/gpuvm-VERSION-1.{x86_64,aarch64}.rpm): every architecture whose two packages are
# there (a tree that built amd64's alone, make deb rpm, publishes amd64 alone and says so);
# no package at all, or an architecture's .deb without its .rpm or the other way round, is an
# error. Laid out under REPO_DIR (build/repo) ready to be served as it is over HTTPS at REPO_URL:
#     deb/            an apt repository (apt-ftparchive): dists/stable/{InRelease,Release,
#                     Release.gpg}, dists/stable/main/binary-ARCH/Packages*, pool/
#     rpm/ARCH/       a dnf repository for each of x86_64 and aarch64 built (createrepo_c), the
#                     packages signed (rpmsign) and repodata/repomd.xml.asc beside repomd.xml
#     gpuvm.asc       the public key, armored
#     gpuvm.sources   for /etc/apt/sources.list.d/ (deb822, Signed-By: the key's path on a host)
#     gpuvm.repo      for /etc/yum.repos.d/ (gpgcheck=1, repo_gpgcheck=1, gpgkey=)
# The environment (make passes its variables on):
#     REPO_URL                  where REPO_DIR will be served (https://…), required
#     REPO_GPG_KEY              the signing key's fingerprint, in GNUPGHOME (or ~/.gnupg)
#     REPO_GPG_KEY_FILE         or an armored secret key file, imported into a temporary
#                               GNUPGHOME that is removed afterwards
#     REPO_GPG_PASSPHRASE_FILE  the key's passphrase, if it has one
#     REPO_UNSIGNED=1           no signature at all: only with a file:// REPO_URL (a local test)
#     REPO_ADD                  a folder of earlier gpuvm packages to publish too (rollback)
#     REPO_DIR                  the output (build/repo); rebuilt from scratch each time
#     REPO_APT_KEYRING          the key's path on a Debian host (/etc/apt/keyrings/gpuvm.asc)
#     REPO_RPM_KEY              the key's path on an RPM host (/etc/pki/rpm-gpg/RPM-GPG-KEY-gpuvm)
# packaging/README.md ("The repositories") says why it is laid out so.
set -eu
[ $# -eq 1 ] || { echo "usage: $0 VERSION" >&2; exit 2; }
version=$1
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
me=${0##*/}
die() {
	echo "$me: $*" >&2
	exit 1
}

# The inputs, all checked before anything is written.
url=${REPO_URL-}
[ -n "$url" ] || die "REPO_URL: where $top/build/repo will be served (https://host/path), e.g. make repo REPO_URL=https://repo.example.com/gpuvm"
case $url in
https://* | file:///*) ;;
http://*) die "REPO_URL=$url: serve the repository over HTTPS (the signatures protect its contents, TLS who reads what)" ;;
*) die "REPO_URL=$url: an https:// URL (or file:/// for a local test)" ;;
esac
url=${url%/}
unsigned=${REPO_UNSIGNED-}
case $unsigned in
'' | 0) unsigned='' ;;
1) ;;
*) die "REPO_UNSIGNED=$unsigned: 1 or nothing" ;;
esac
if [ -n "$unsigned" ]; then
	[ -z "${REPO_GPG_KEY-}${REPO_GPG_KEY_FILE-}" ] || die "REPO_UNSIGNED=1 and a key: one or the other"
	case $url in
	file:///*) ;;
	*) die "REPO_UNSIGNED=1 with REPO_URL=$url: an unsigned repository is for a local test only (a file:/// URL); give a key (REPO_GPG_KEY or REPO_GPG_KEY_FILE) to publish" ;;
	esac
elif [ -z "${REPO_GPG_KEY-}${REPO_GPG_KEY_FILE-}" ]; then
	die "no signing key: REPO_GPG_KEY=FINGERPRINT (in GNUPGHOME) or REPO_GPG_KEY_FILE=FILE (an armored secret key); REPO_UNSIGNED=1 with a file:/// REPO_URL for a local test only"
fi
out=${REPO_DIR:-$top/build/repo}
apt_keyring=${REPO_APT_KEYRING:-/etc/apt/keyrings/gpuvm.asc}
rpm_key=${REPO_RPM_KEY:-/etc/pki/rpm-gpg/RPM-GPG-KEY-gpuvm}
for p in "$apt_keyring" "$rpm_key"; do
	case $p in /*) ;; *) die "$p: the key's path on a host must be absolute" ;; esac
done
for t in apt-ftparchive createrepo_c gpg gpgv rpmsign rpmkeys dpkg-deb; do
	command -v "$t" >/dev/null || die "no $t (scripts/install-packages.sh installs it)"
done

# The architectures whose packages were built, each with its .deb and its .rpm: the apt and the
# dnf repository hold the same ones. Those not built are named; none at all is an error.
debs='' rpms='' took='' left=''
for a in amd64 arm64; do
	case $a in amd64) ra=x86_64 mk='' ;; arm64) ra=aarch64 mk=' ARCH=arm64' ;; esac
	deb=$top/build/deb/gpuvm_${version}_$a.deb
	rpm=$top/build/rpm/gpuvm-$version-1.$ra.rpm
	if [ -f "$deb" ] && [ -f "$rpm" ]; then
		debs="$debs $deb" rpms="$rpms $rpm" took="${took:+$took }$a"
	elif [ -f "$deb" ]; then
		die "$deb without $rpm: make rpm$mk, or take the .deb away (make packages builds all four)"
	elif [ -f "$rpm" ]; then
		die "$rpm without $deb: make deb$mk, or take the .rpm away (make packages builds all four)"
	else
		left="${left:+$left }$a"
	fi
done
[ -n "$took" ] ||
	die "no package of gpuvm $version: neither $top/build/deb/gpuvm_${version}_amd64.deb nor the arm64 one (make packages first; make deb rpm: amd64's alone)"
added_debs='' added_rpms=''
if [ -n "${REPO_ADD-}" ]; then
	[ -d "$REPO_ADD" ] || die "REPO_ADD=$REPO_ADD: not a folder"
	added_debs=$(find "$REPO_ADD" -type f -name 'gpuvm_*.deb' | LC_ALL=C sort)
	added_rpms=$(find "$REPO_ADD" -type f -name 'gpuvm-*.rpm' | LC_ALL=C sort)
	[ -n "$added_debs$added_rpms" ] || die "REPO_ADD=$REPO_ADD holds no gpuvm_*.deb nor gpuvm-*.rpm"
	for f in $added_debs $added_rpms; do
		case $f in *[[:space:]]*) die "$f: a blank in the path" ;; esac
	done
fi

# The key: a fingerprint in GNUPGHOME, or a file imported into a temporary one.
work=$(mktemp -d "${TMPDIR:-/tmp}/gpuvm-repo.XXXXXX")
cleanup() {
	if [ -n "${REPO_GPG_KEY_FILE-}" ] && [ -z "$unsigned" ]; then
		GNUPGHOME=$work/gnupg gpgconf --kill gpg-agent 2>/dev/null || :
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM
set -- --batch --no-tty --quiet
if [ -n "${REPO_GPG_PASSPHRASE_FILE-}" ]; then
	[ -r "$REPO_GPG_PASSPHRASE_FILE" ] || die "REPO_GPG_PASSPHRASE_FILE=$REPO_GPG_PASSPHRASE_FILE: cannot read it"
	set -- "$@" --pinentry-mode loopback --passphrase-file "$REPO_GPG_PASSPHRASE_FILE"
fi
fpr=''
if [ -z "$unsigned" ]; then
	if [ -n "${REPO_GPG_KEY_FILE-}" ]; then
		[ -r "$REPO_GPG_KEY_FILE" ] || die "REPO_GPG_KEY_FILE=$REPO_GPG_KEY_FILE: cannot read it"
		mkdir -m 0700 "$work/gnupg"
		# The agent protects its copy of the key with the fewest rounds (each signature
		# unlocks it: seconds apiece with the default): the copy lives only for this run, in a
		# folder readable by nobody who could not read REPO_GPG_PASSPHRASE_FILE as well.
		echo 's2k-count 65536' >"$work/gnupg/gpg-agent.conf"
		GNUPGHOME=$work/gnupg
		export GNUPGHOME
		gpg "$@" --import "$REPO_GPG_KEY_FILE" 2>"$work/import.log" ||
			{ cat "$work/import.log" >&2; die "REPO_GPG_KEY_FILE=$REPO_GPG_KEY_FILE: gpg cannot import it"; }
	fi
	key=${REPO_GPG_KEY-}
	if [ -z "$key" ]; then
		key=$(gpg --batch --with-colons --list-secret-keys 2>/dev/null | awk -F: '$1 == "fpr" && prev == "sec" { print $10 } { prev = $1 }')
		[ -n "$key" ] || die "REPO_GPG_KEY_FILE=$REPO_GPG_KEY_FILE holds no secret key"
		[ "$(printf '%s\n' "$key" | wc -l)" -eq 1 ] ||
			die "REPO_GPG_KEY_FILE=$REPO_GPG_KEY_FILE holds several secret keys: name one with REPO_GPG_KEY"
	fi
	# The primary key's fingerprint, and a secret key to sign with: gpg says which is missing.
	fpr=$(gpg --batch --with-colons --list-secret-keys -- "$key" 2>/dev/null |
		awk -F: '$1 == "fpr" { print $10; exit }') || fpr=''
	[ -n "$fpr" ] || die "REPO_GPG_KEY=$key: no such secret key in ${GNUPGHOME:-~/.gnupg}"
	gpg --batch --quiet --export --armor -- "$fpr" >"$work/key.asc" 2>/dev/null
	gpg --batch --quiet --export -- "$fpr" >"$work/key.gpg" 2>/dev/null
	[ -s "$work/key.gpg" ] || die "REPO_GPG_KEY=$key: gpg exports no public key"
fi

# gpgsign FILE OUT clear|armored: FILE signed by the key, then verified with the
# exported public key alone, as a client does; dies with gpg's words.
gpgsign() {
	f=$1 o=$2 how=$3
	set -- --batch --no-tty --quiet --yes
	if [ -n "${REPO_GPG_PASSPHRASE_FILE-}" ]; then
		set -- "$@" --pinentry-mode loopback --passphrase-file "$REPO_GPG_PASSPHRASE_FILE"
	fi
	case $how in
	clear) set -- "$@" --clearsign ;;
	armored) set -- "$@" --detach-sign --armor ;;
	esac
	gpg "$@" --local-user "$fpr" --digest-algo SHA512 --output "$o" -- "$f" 2>"$work/sign.log" ||
		{ cat "$work/sign.log" >&2; die "gpg could not sign $f with $fpr"; }
	# What a client does: verify it against the exported public key alone.
	case $how in
	clear) gpgv --quiet --keyring "$work/key.gpg" -- "$o" 2>"$work/verify.log" ;;
	*) gpgv --quiet --keyring "$work/key.gpg" -- "$o" "$f" 2>"$work/verify.log" ;;
	esac || { cat "$work/verify.log" >&2; die "$o does not verify against the exported key $fpr"; }
}

echo "repo: gpuvm $version, architectures: $took${left:+ (not built, left out: $left)}"
rm -rf "$out"
mkdir -p "$out"

# The apt repository: a pool and one suite, stable, component main; apt-ftparchive writes the
# indices from the pool (every version in it: what a rollback installs) and the Release file.
d=$out/deb
pool=pool/main/g/gpuvm
mkdir -p "$d/$pool"
for f in $debs $added_debs; do
	[ "$(dpkg-deb -f "$f" Package)" = gpuvm ] || die "$f: not a gpuvm package"
	cp "$f" "$d/$pool/"
done
arches=$(for f in "$d/$pool"/*.deb; do dpkg-deb -f "$f" Architecture; done | LC_ALL=C sort -u | tr '\n' ' ')
arches=${arches% }
for a in $arches; do
	b=$d/dists/stable/main/binary-$a
	mkdir -p "$b"
	(cd "$d" && apt-ftparchive --arch "$a" packages "$pool") >"$b/Packages"
	gzip -9n <"$b/Packages" >"$b/Packages.gz"
	xz -9 <"$b/Packages" >"$b/Packages.xz"
done
(cd "$d/dists/stable" && apt-ftparchive \
	-o APT::FTPArchive::Release::Origin=gpuvm \
	-o APT::FTPArchive::Release::Label=gpuvm \
	-o APT::FTPArchive::Release::Suite=stable \
	-o APT::FTPArchive::Release::Codename=stable \
	-o "APT::FTPArchive::Release::Architectures=$arches" \
	-o APT::FTPArchive::Release::Components=main \
	-o "APT::FTPArchive::Release::Description=gpuvm: NVIDIA GPUs bound at boot as the host asks" \
	release .) >"$work/Release"
mv "$work/Release" "$d/dists/stable/Release"
if [ -z "$unsigned" ]; then
	gpgsign "$d/dists/stable/Release" "$d/dists/stable/InRelease" clear
	# armored, as Debian's own: apt 2.6 refuses a binary Release.gpg ("unsupported binary format")
	gpgsign "$d/dists/stable/Release" "$d/dists/stable/Release.gpg" armored
fi

# The dnf repositories, one an architecture ($basearch): the packages signed, then the
# metadata (gzip: what every dnf and yum reads), then repomd.xml's signature.
for f in $rpms $added_rpms; do
	a=$(rpm -qp --nosignature --qf '%{ARCH}' "$f" 2>/dev/null) || die "$f: rpm cannot read it"
	[ "$(rpm -qp --nosignature --qf '%{NAME}' "$f")" = gpuvm ] || die "$f: not a gpuvm package"
	mkdir -p "$out/rpm/$a"
	cp "$f" "$out/rpm/$a/"
done
for r in "$out"/rpm/*/; do
	r=${r%/}
	if [ -z "$unsigned" ]; then
		# Debian's rpm names gpg2, which Debian 12 no longer has: the gpg of PATH.
		set -- --define "__gpg $(command -v gpg)" --define "_gpg_name $fpr" --define "_gpg_digest_algo sha256"
		if [ -n "${GNUPGHOME-}" ]; then set -- "$@" --define "_gpg_path $GNUPGHOME"; fi
		if [ -n "${REPO_GPG_PASSPHRASE_FILE-}" ]; then
			set -- "$@" --define "_gpg_sign_cmd_extra_args --batch --pinentry-mode loopback --passphrase-file $REPO_GPG_PASSPHRASE_FILE"
		fi
		rpmsign --addsign "$@" "$r"/*.rpm >"$work/rpmsign.log" 2>&1 </dev/null ||
			{ cat "$work/rpmsign.log" >&2; die "rpmsign could not sign $r/*.rpm with $fpr"; }
		# What dnf's rpm does: every package's signature checked against the key alone.
		mkdir -p "$work/rpmdb"
		rpmkeys --dbpath "$work/rpmdb" --import "$work/key.asc" ||
			die "rpmkeys cannot import the exported key $fpr"
		# (an unsigned package passes --checksig: its line must say "signatures OK")
		for f in "$r"/*.rpm; do
			rpmkeys --dbpath "$work/rpmdb" --checksig -- "$f" >"$work/checksig.log" 2>&1 || :
			if ! grep -q ': digests signatures OK$' "$work/checksig.log"; then
				cat "$work/checksig.log" >&2
				die "$f does not verify against $fpr"
			fi
		done
		rm -rf "$work/rpmdb"
	fi
	createrepo_c --quiet --no-database --general-compress-type=gz "$r" >"$work/createrepo.log" 2>&1 ||
		{ cat "$work/createrepo.log" >&2; die "createrepo_c failed on $r"; }
	if [ -z "$unsigned" ]; then
		gpgsign "$r/repodata/repomd.xml" "$r/repodata/repomd.xml.asc" armored
	fi
done

# What a host needs: the key and the two files, with REPO_URL in them.
if [ -z "$unsigned" ]; then
	cp "$work/key.asc" "$out/gpuvm.asc"
	trust="Signed-By: $apt_keyring"
	rpmtrust="gpgcheck=1
repo_gpgcheck=1
gpgkey=file://$rpm_key"
	note="# The key: $url/gpuvm.asc (fingerprint $fpr), at $apt_keyring."
	rpmnote="# The key: $url/gpuvm.asc (fingerprint $fpr), at $rpm_key."
else
	trust='Trusted: yes'
	rpmtrust='gpgcheck=0
repo_gpgcheck=0'
	note='# UNSIGNED (REPO_UNSIGNED=1): for a local test only; apt trusts it without a signature.'
	rpmnote='# UNSIGNED (REPO_UNSIGNED=1): for a local test only; dnf checks no signature.'
fi
cat >"$out/gpuvm.sources" <<EOF
# gpuvm's apt repository: /etc/apt/sources.list.d/gpuvm.sources (make repo).
$note
Types: deb
URIs: $url/deb
Suites: stable
Components: main
$trust
EOF
# shellcheck disable=SC2016 # $basearch is dnf's
printf '%s\n' '# gpuvm'"'"'s dnf repository: /etc/yum.repos.d/gpuvm.repo (make repo).' "$rpmnote" \
	'[gpuvm]' 'name=gpuvm' "baseurl=$url/rpm/\$basearch" 'enabled=1' "$rpmtrust" >"$out/gpuvm.repo"

echo "repo: $out ($(find "$out" -name '*.deb' | wc -l) .deb, $(find "$out" -name '*.rpm' | wc -l) .rpm$([ -n "$unsigned" ] && echo ', UNSIGNED' || echo ", signed by $fpr"))"
echo "repo: serve $out at $url; on a host:"
if [ -z "$unsigned" ]; then
	echo "    $out/gpuvm.asc     -> $apt_keyring (Debian, Ubuntu) or $rpm_key (RHEL, Fedora)"
fi
echo "    $out/gpuvm.sources -> /etc/apt/sources.list.d/gpuvm.sources"
sed 's/^/        /' "$out/gpuvm.sources"
echo "    $out/gpuvm.repo    -> /etc/yum.repos.d/gpuvm.repo"
sed 's/^/        /' "$out/gpuvm.repo"
