#!/usr/bin/env bats
# shellcheck disable=SC2154 # $stderr and $output are set by bats' run
# The label mirror's image as `make mirror-image` builds it (packaging/mirror-image.sh;
# mirror/README.md, "The image"): the OCI archive unpacked with umoci, its index and configs,
# its contents, and the image run: chrooted (amd64) and under qemu-user (arm64), gpuvm, gpuvm-dra,
# the mirror's scripts, jq and curl being the image's own. Then the push a team makes, into a
# registry on loopback (Debian's docker-registry), and the image rebuilt byte for byte. And one
# pass of the mirror, chrooted in the amd64 image as its user, against the API stand-in
# (tests/api/) over HTTPS: the label read, the host config written, the node patched.

load helpers
load ../api/standin

VERSION=$(sed -n 's/^VERSION := //p' "$TOP/Makefile")
IMG=$TOP/build/mirror-image
ARCHIVE=$IMG/gpuvm-mirror-$VERSION.tar
IMG_USER=65532:65532
IMG_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# qemu-user for aarch64, as Debian's qemu-user-static registers it (F: the interpreter is
# opened at registration, so it serves inside a chroot).
BINFMT=':qemu-aarch64:M::\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00:\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff:/usr/bin/qemu-aarch64-static:F'

# The archive unpacked once: the layout in $BATS_FILE_TMPDIR/oci, each architecture's bundle
# (umoci unpack: rootfs/ and the runtime's config.json) in $BATS_FILE_TMPDIR/ARCH.
setup_file() {
	[ "$GPUVM" = "$TOP/build/gpuvm" ] || return 0
	[ -f "$ARCHIVE" ] && command -v umoci >/dev/null || return 0
	mkdir -p "$BATS_FILE_TMPDIR/oci"
	tar -C "$BATS_FILE_TMPDIR/oci" -xf "$ARCHIVE"
	for a in amd64 arm64; do
		umoci unpack --image "$BATS_FILE_TMPDIR/oci:$VERSION-$a" "$BATS_FILE_TMPDIR/$a" >/dev/null
		# What a container runtime gives every container; the image has none of its own.
		mknod -m 666 "$BATS_FILE_TMPDIR/$a/rootfs/dev/null" c 1 3
		cp "$TOP/tests/fixture/kubevirt/nodes.json" "$BATS_FILE_TMPDIR/$a/rootfs/tmp/nodes.json"
	done
}

teardown_file() {
	[ ! -e "$BATS_FILE_TMPDIR/api/pid" ] || standin_stop
}

# image: the archive must have been built; a skip says how, CI=true fails instead.
image() {
	# make test-arm64 runs every suite again with GPUVM=tests/arm64/gpuvm-qemu.sh: this one runs
	# no $GPUVM (the image holds both binaries), so that run would add nothing but time.
	[ "$GPUVM" = "$TOP/build/gpuvm" ] || skip "runs no \$GPUVM: make test-arm64 adds nothing here"
	need umoci command -v umoci
	[ -f "$ARCHIVE" ] && return 0
	[ "${CI:-}" != true ] || fail "$ARCHIVE is missing under CI=true (make test builds it: make mirror-image)"
	skip "$ARCHIVE is not built (make mirror-image)"
}

# blob DIGEST: the layout's blob.
blob() {
	cat "$BATS_FILE_TMPDIR/oci/blobs/sha256/${1#sha256:}"
}

# config ARCH: the image config of VERSION-ARCH.
config() {
	local m
	m=$(jq -r --arg r "$VERSION-$1" '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == $r) | .digest' \
		"$BATS_FILE_TMPDIR/oci/index.json")
	blob "$(blob "$m" | jq -r .config.digest)"
}

# in_root ARCH CMD...: CMD chrooted in ARCH's rootfs with the image's environment (env -i,
# its PATH); amd64 as the image's user. arm64 runs under qemu-user: through the host's
# binfmt_misc when it has qemu-aarch64 (with F), else through one of a user namespace of its
# own (Linux 6.7 and later; root there, the only user it maps), so that nothing is registered
# on the host; every program the command starts is then the image's, emulated too.
in_root() {
	local arch=$1 root=$BATS_FILE_TMPDIR/$1/rootfs
	shift
	set -- /usr/bin/env -i "PATH=$IMG_PATH" "$@"
	if [ "$arch" = amd64 ]; then
		chroot --userspec="$IMG_USER" "$root" "$@"
	elif grep -qs '^flags:.*F' /proc/sys/fs/binfmt_misc/qemu-aarch64; then
		chroot "$root" "$@"
	else
		# shellcheck disable=SC2016 # the script is sh -c's, with its own $1
		unshare --user --map-root-user --mount --fork sh -c '
			mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc &&
			printf "%s" "$1" >/proc/sys/fs/binfmt_misc/register || exit 99
			shift
			exec chroot "$@"' sh "$BINFMT" "$root" "$@"
	fi
}

# arm64_ok: qemu-user can run the arm64 root here, or the test is skipped saying why.
arm64_ok() {
	need qemu-user-static test -x /usr/bin/qemu-aarch64-static
	run in_root arm64 /bin/true
	[ "$status" -ne 99 ] ||
		skip "no qemu-aarch64 in the host's binfmt_misc, and no binfmt_misc of a user namespace (Linux < 6.7?)"
	assert_success
}

@test "the archive: one index of amd64 and arm64, each config with its platform, the mirror as entrypoint, a user, the labels" {
	image
	local when idx a c
	when=$(date -u -d "$(sed -n 's/^ -- .*>  //p' "$TOP/packaging/changelog" | head -n 1)" +%Y-%m-%dT%H:%M:%SZ)
	run jq -r '.manifests[].annotations["org.opencontainers.image.ref.name"]' "$BATS_FILE_TMPDIR/oci/index.json"
	assert_output "$(printf '%s\n' "$VERSION-amd64" "$VERSION-arm64" "$VERSION")"
	idx=$(jq -r --arg r "$VERSION" '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == $r) | .digest' \
		"$BATS_FILE_TMPDIR/oci/index.json")
	run sh -c "cat '$BATS_FILE_TMPDIR/oci/blobs/sha256/${idx#sha256:}' | sha256sum"
	assert_output "${idx#sha256:}  -"
	run sh -c "cat '$BATS_FILE_TMPDIR/oci/blobs/sha256/${idx#sha256:}' | jq -c '[.mediaType, (.manifests[] | .platform)]'"
	assert_output '["application/vnd.oci.image.index.v1+json",{"architecture":"amd64","os":"linux"},{"architecture":"arm64","os":"linux","variant":"v8"}]'
	for a in amd64 arm64; do
		c=$(config "$a")
		printf '%s' "$c" | jq -e --arg a "$a" --arg v "$VERSION" --arg u "$IMG_USER" --arg p "PATH=$IMG_PATH" --arg t "$when" '
			.architecture == $a and .os == "linux" and .created == $t and
			.config.Entrypoint == ["/usr/bin/gpuvm-label-mirror"] and .config.Cmd == null and
			.config.User == $u and .config.Env == [$p] and
			.config.Labels["org.opencontainers.image.version"] == $v and
			.config.Labels["org.opencontainers.image.licenses"] == "MIT" and
			(.config.Labels["org.opencontainers.image.source"] | test("mirror/")) and
			(.rootfs.diff_ids | length) == 2 and ([.history[].created] | unique) == [$t]' >/dev/null ||
			fail "config of $a: $c"
	done
}

@test "contents: gpuvm of each architecture as built, the mirror's scripts, no kubectl, the notices, licence and pci.ids the packages ship" {
	image
	local a r bin notices want
	for a in amd64 arm64; do
		r=$BATS_FILE_TMPDIR/$a/rootfs
		case $a in
		amd64) bin=$TOP/build/gpuvm notices=$TOP/build/deps/NOTICES want='x86-64' ;;
		arm64) bin=$TOP/build/arm64/gpuvm notices=$TOP/build/arm64/deps/NOTICES want='ARM aarch64' ;;
		esac
		run file -b "$r/usr/sbin/gpuvm"
		assert_output --regexp "^ELF 64-bit LSB executable, $want,.*statically linked"
		cmp "$bin" "$r/usr/sbin/gpuvm"
		# the Debian layer is of the same architecture: its jq, curl and sh
		for p in usr/bin/jq usr/bin/curl bin/dash; do
			run file -b "$r/$p"
			assert_output --regexp "^ELF 64-bit LSB .*, $want,"
		done
		cmp "$TOP/mirror/gpuvm-label-mirror" "$r/usr/bin/gpuvm-label-mirror"
		cmp "$TOP/mirror/gpuvm-kubevirt-patch" "$r/usr/bin/gpuvm-kubevirt-patch"
		[ -x "$r/usr/bin/gpuvm-label-mirror" ]
		[ -x "$r/usr/bin/gpuvm-kubevirt-patch" ]
		run find "$r" -iname '*kubectl*'
		assert_output ''
		cmp "$notices" "$r/usr/share/doc/gpuvm/THIRD-PARTY-NOTICES"
		cmp "$TOP/LICENSE" "$r/usr/share/doc/gpuvm/LICENSE"
		cmp "$TOP/packaging/deb/copyright" "$r/usr/share/doc/gpuvm/copyright"
		# the pci.ids the packages ship, which the mirror's gpuvm kubevirt names devices from
		cmp "$TOP/build/pciids/pci.ids" "$r/usr/share/gpuvm/pci.ids"
		# the SBOM names this very binary
		jq -e --arg s "$(sha256sum <"$bin" | cut -d' ' -f1)" \
			'[.files[].checksums[] | select(.algorithm == "SHA256") | .checksumValue] | index($s) != null' \
			"$r/usr/share/doc/gpuvm/gpuvm.spdx.json" >/dev/null
		# and gpuvm-dra: its file's checksum, and the Debian packages it loads at the versions
		# the image's dpkg records, each DYNAMIC_LINK to it
		jq -e --arg s "$(sha256sum <"$r/usr/bin/gpuvm-dra" | cut -d' ' -f1)" \
			'[.files[] | select(.fileName == "./usr/bin/gpuvm-dra") | .checksums[] | select(.algorithm == "SHA256") | .checksumValue] == [$s]' \
			"$r/usr/share/doc/gpuvm/gpuvm.spdx.json" >/dev/null
		run jq -r '. as $d | [.relationships[] | select(.relationshipType == "DYNAMIC_LINK" and .relatedSpdxElement == "SPDXRef-File-gpuvm-dra") | .spdxElementId] as $ids
			| [.packages[] | select(.SPDXID as $i | $ids | index($i)) | "\(.name) \(.versionInfo)"] | sort | .[]' "$r/usr/share/doc/gpuvm/gpuvm.spdx.json"
		assert_output "$(awk '/^Package:/ { p = $2 } /^Version:/ && p ~ /^(libnghttp2-14|libprotobuf-c1|libcurl4|libjson-c5)$/ { print p, $2 }' \
			"$r/var/lib/dpkg/status" | sort)"
		[ "${#lines[@]}" = 4 ]
		# Debian 12, its packages recorded for scanners, a CA bundle, the user without a shell
		grep -qx 'VERSION_ID="12"' "$r/etc/os-release"
		run awk -v a="$a" '/^Package:/ { p = $2 } /^Architecture:/ && (p == "jq" || p == "curl" || p == "dash") { print p, $2 }' \
			"$r/var/lib/dpkg/status"
		assert_output "$(printf '%s\n' "curl $a" "dash $a" "jq $a")"
		[ "$(grep -c 'BEGIN CERTIFICATE' "$r/etc/ssl/certs/ca-certificates.crt")" -gt 100 ]
		grep -qx "gpuvm:x:$IMG_USER:gpuvm label mirror:/nonexistent:/bin/false" "$r/etc/passwd"
	done
}

@test "amd64, chrooted as the image's user: gpuvm --version, gpuvm-label-mirror --help, jq and curl" {
	image
	run in_root amd64 sh -c 'id -u; gpuvm --version'
	assert_success
	assert_line 65532
	assert_line --regexp "^gpuvm $VERSION"
	run in_root amd64 gpuvm-label-mirror --help
	assert_success
	assert_line --index 0 'Usage: gpuvm-label-mirror [--once] [--interval SECONDS]'
	run in_root amd64 jq --version
	assert_output jq-1.6
	run in_root amd64 curl --version
	assert_success
	assert_line --regexp '^curl 7\.88\.1 \(x86_64-pc-linux-gnu\)'
}

@test "arm64, under qemu-user: the same, every program the image's own" {
	image
	arm64_ok
	run in_root arm64 sh -c 'uname -m; gpuvm --version'
	assert_success
	assert_line --index 0 aarch64
	assert_line --regexp "^gpuvm $VERSION"
	run in_root arm64 gpuvm-label-mirror --help
	assert_success
	assert_line --index 0 'Usage: gpuvm-label-mirror [--once] [--interval SECONDS]'
	run in_root arm64 jq --version
	assert_output jq-1.6
	run in_root arm64 curl --version
	assert_success
	assert_line --regexp '^curl 7\.88\.1 \(aarch64-unknown-linux-gnu\)'
}

# gpuvm-dra (dra/, dra/deploy) is a dynamic glibc program: the Debian layer of each
# architecture carries what it loads, as Debian packages the versions file and the dpkg status
# name, and it runs from the image (amd64 chrooted as the image's user, arm64 under qemu-user).
@test "gpuvm-dra of each architecture as built, its libraries the Debian layer's, named in versions and the dpkg status; it runs" {
	image
	local a r bin want triplet lib p
	for a in amd64 arm64; do
		r=$BATS_FILE_TMPDIR/$a/rootfs
		case $a in
		amd64) bin=$TOP/build/gpuvm-dra want='x86-64' triplet=x86_64-linux-gnu ;;
		arm64) bin=$TOP/build/arm64/gpuvm-dra want='ARM aarch64' triplet=aarch64-linux-gnu ;;
		esac
		cmp "$bin" "$r/usr/bin/gpuvm-dra"
		run file -b "$r/usr/bin/gpuvm-dra"
		assert_output --regexp "^ELF 64-bit LSB pie executable, $want,.*dynamically linked"
		# every library it names is in the layer, of its architecture
		for lib in $(readelf -d "$r/usr/bin/gpuvm-dra" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
			p=$r/usr/lib/$triplet/$lib
			[ -e "$p" ] || p=$r/lib/$triplet/$lib
			[ -e "$p" ] || fail "$a: $lib, which gpuvm-dra needs, is not in the image"
			run file -L -b "$p"
			assert_output --regexp "^ELF 64-bit LSB shared object, $want,"
		done
		# the packages that ship them, named as the layer's others are
		for p in libnghttp2-14 libprotobuf-c1 libcurl4 libjson-c5; do
			grep -q "^$p [^ ]* $a\$" "$IMG/versions-$a" || fail "$p is not in versions-$a"
			awk -v p="$p" -v a="$a" '/^Package:/ { n = $2 } /^Architecture:/ && n == p && $2 == a { f = 1 } END { exit !f }' \
				"$r/var/lib/dpkg/status" || fail "$p ($a) is not in the image's dpkg status"
		done
	done
	run in_root amd64 gpuvm-dra --version
	assert_success
	assert_output "gpuvm-dra $VERSION"
	# its API client: libcurl from the layer, and no plugin socket there (--alive fails, saying why)
	run in_root amd64 gpuvm-dra --alive --plugin-socket /tmp/none.sock
	assert_failure 1
	assert_output 'gpuvm-dra: /tmp/none.sock: No such file or directory'
	arm64_ok
	run in_root arm64 gpuvm-dra --version
	assert_success
	assert_output "gpuvm-dra $VERSION"
}

@test "gpuvm-kubevirt-patch from the image, both architectures, on a fleet's nodes: the tree's patch" {
	image
	local want
	want=$("$TOP/mirror/gpuvm-kubevirt-patch" --replace "$TOP/tests/fixture/kubevirt/nodes.json" 2>/dev/null)
	printf '%s' "$want" | jq -e '.spec.configuration.permittedHostDevices.pciHostDevices | length > 3' >/dev/null
	run --separate-stderr in_root amd64 gpuvm-kubevirt-patch --replace /tmp/nodes.json
	assert_success
	assert_output "$want"
	arm64_ok
	run --separate-stderr in_root arm64 gpuvm-kubevirt-patch --replace /tmp/nodes.json
	assert_success
	assert_output "$want"
}

@test "the push a team makes: skopeo copy --all into a registry on loopback, both platforms there" {
	image
	need skopeo command -v skopeo
	need docker-registry command -v docker-registry
	local d=$BATS_TEST_TMPDIR/registry port pid idx
	# a free port on loopback
	port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	mkdir -p "$d"
	printf '%s\n' 'version: 0.1' 'log: {level: error}' "storage: {filesystem: {rootdirectory: $d/data}}" \
		"http: {addr: 127.0.0.1:$port}" >"$d/config.yml"
	docker-registry serve "$d/config.yml" >"$d/log" 2>&1 &
	pid=$!
	for _ in $(seq 50); do
		curl -sf "http://127.0.0.1:$port/v2/" >/dev/null && break
		sleep 0.1
	done
	run skopeo copy -q --all --dest-tls-verify=false "oci-archive:$ARCHIVE:$VERSION" \
		"docker://127.0.0.1:$port/gpuvm-mirror:$VERSION"
	local copied=$status
	run skopeo inspect --tls-verify=false --raw "docker://127.0.0.1:$port/gpuvm-mirror:$VERSION"
	local raw=$output
	run skopeo inspect --tls-verify=false --override-arch arm64 "docker://127.0.0.1:$port/gpuvm-mirror:$VERSION"
	local arm=$output
	kill "$pid"
	wait "$pid" || true
	[ "$copied" -eq 0 ] || fail "skopeo copy failed: $(cat "$d/log")"
	# the registry holds the index the build made, byte for byte
	idx=$(jq -r --arg r "$VERSION" '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == $r) | .digest' \
		"$BATS_FILE_TMPDIR/oci/index.json")
	[ "$(printf '%s' "$raw" | sha256sum | cut -d' ' -f1)" = "${idx#sha256:}" ]
	printf '%s' "$arm" | jq -e --arg v "$VERSION" '.Architecture == "arm64" and .Labels["org.opencontainers.image.version"] == $v' >/dev/null
}

@test "the image rebuilt from the same layers is the same archive, byte for byte" {
	image
	local d=$BATS_TEST_TMPDIR/again
	mkdir -p "$d"
	cp "$IMG/root-amd64.tar" "$IMG/root-arm64.tar" "$d/"
	run env MIRROR_IMAGE_DIR="$d" sh "$TOP/packaging/mirror-image.sh" image "$VERSION"
	assert_success
	cmp "$ARCHIVE" "$d/gpuvm-mirror-$VERSION.tar"
}

# The Debian layer follows Debian's updates (the Makefile's versions-ARCH, mirror-image.sh
# versions): make resolves the layer's packages again each time and rewrites versions-ARCH only
# when a version differs, and the layer (root-ARCH.tar) is made again then only. Run with make
# itself (B= a folder of the test) over a copy of the lists make mirror-image left, without the
# network (MIRROR_IMAGE_OFFLINE=1); Debian's update is a newer base-files added to the copy's
# bookworm-updates list, as a point release or a security update adds one. Whether the layer is
# out of date is make -q's answer with MIRROR_IMAGE_RESOLVE= (versions-ARCH as it stands).
@test "the Debian layer's versions: resolved again by make, rewritten only when one changes, the layer made again then only" {
	image
	[ -f "$IMG/versions-amd64" ] || fail "no $IMG/versions-amd64 (make mirror-image makes it)"
	b=$BATS_TEST_TMPDIR/b
	m=$b/mirror-image
	l=$m/apt-amd64/lists
	mkdir -p "$m/apt-amd64"
	cp -r "$IMG/apt-amd64/lists" "$m/apt-amd64/"
	mk() { run make -s -C "$TOP" B="$b" MIRROR_IMAGE_OFFLINE=1 "$@"; }
	mk "$m/versions-amd64"
	assert_success
	# What the layer of make mirror-image was made of.
	cmp "$IMG/versions-amd64" "$m/versions-amd64"
	grep -q '^libc6 [^ ]* amd64$' "$m/versions-amd64"
	grep -q '^ca-certificates [^ ]* all$' "$m/versions-amd64"
	# A layer made after it; the same archive: versions-amd64 as it was, the layer up to date.
	touch -d '-1 hour' "$m/versions-amd64"
	: >"$m/root-amd64.tar"
	before=$(stat -c %Y "$m/versions-amd64")
	mk "$m/versions-amd64"
	assert_success
	assert_output --partial "packages, as in $m/versions-amd64"
	[ "$(stat -c %Y "$m/versions-amd64")" = "$before" ]
	run make -s -C "$TOP" B="$b" -q MIRROR_IMAGE_RESOLVE= "$m/root-amd64.tar"
	assert_success
	# Debian's update: versions-amd64 rewritten, saying what changed; the layer out of date.
	u=deb.debian.org_debian_dists_bookworm-updates_main_binary-amd64_Packages
	[ -f "$l/$u.lz4" ] || skip "no $u.lz4 in $IMG/apt-amd64/lists (another mirror)"
	old=$(awk '$1 == "base-files" { print $2 }' "$m/versions-amd64")
	{
		/usr/lib/apt/apt-helper cat-file "$l/$u.lz4"
		for f in "$l"/*_Packages.lz4; do /usr/lib/apt/apt-helper cat-file "$f"; done 2>/dev/null |
			awk -v RS= -v v="$old" '/(^|\n)Package: base-files\n/ && index($0, "\nVersion: " v "\n") {
				print; print ""; exit }' | sed 's/^Version: .*/&+gpuvmtest1/'
	} >"$l/$u"
	rm "$l/$u.lz4"
	mk "$m/versions-amd64"
	assert_success
	assert_line "    < base-files $old amd64"
	assert_line "    > base-files $old+gpuvmtest1 amd64"
	[ "$(stat -c %Y "$m/versions-amd64")" -gt "$before" ]
	grep -qx "base-files $old+gpuvmtest1 amd64" "$m/versions-amd64"
	run make -s -C "$TOP" B="$b" -q MIRROR_IMAGE_RESOLVE= "$m/root-amd64.tar"
	assert_failure
}

@test "a pass of the mirror from the image (amd64, its user), over HTTPS to the API stand-in: label to host config" {
	image
	local r=$BATS_FILE_TMPDIR/amd64/rootfs node=gpu-node-1 h
	standin_start
	standin_vars
	# the host's paths the DaemonSet mounts, under the image's /host, the image user's to write
	h=$r/host
	mkdir -p "$h/etc/gpuvm" "$h/run/gpuvm" "$h/run/gpuvm-reboot" "$h/proc" "$r/var/run/secrets"
	printf '# provisioned\nmode=container\n' >"$h/etc/gpuvm/gpuvm.conf"
	# gpuvm installed on the host, under its /usr (mounted read-only): the binary, dracut's module
	mkdir -p "$h/usr/sbin" "$h/usr/lib/dracut/modules.d/90gpuvm"
	cp "$TOP/build/gpuvm" "$h/usr/sbin/gpuvm"
	cp "$TOP/dracut/90gpuvm/module-setup.sh" "$h/usr/lib/dracut/modules.d/90gpuvm/"
	echo 11111111-1111-1111-1111-111111111111 >"$h/proc/boot_id"
	cp "$API/tls/ca.crt" "$r/var/run/secrets/ca.crt"
	cp "$API/token" "$r/var/run/secrets/token"
	chown -R "$IMG_USER" "$h" "$r/var/run/secrets"
	jq -n --arg n "$node" '{apiVersion: "v1", kind: "Node", metadata: {name: $n,
		uid: "5f0c3a6e-9d1b-4c2e-8a7f-0123456789ab", resourceVersion: "1",
		labels: {"nvidia.com/gpu.workload.config": "vm-passthrough"}}}' >"$STORE/api/v1/nodes/$node.json"
	run in_root amd64 NODE_NAME="$node" GPUVM_HOST=/host GPUVM_BOOT_ID_FILE=/host/proc/boot_id \
		GPUVM_API_SERVER="$SERVER" GPUVM_API_TOKEN_FILE=/var/run/secrets/token \
		GPUVM_API_CA_FILE=/var/run/secrets/ca.crt GPUVM_KUBEVIRT=never GPUVM_EVENTS=never \
		GPUVM_REBOOT_SENTINEL=none GPUVM_HEARTBEAT=/tmp/alive gpuvm-label-mirror --once
	echo "$output"
	assert_success
	assert_output --partial "vm-passthrough"
	# the image's gpuvm wrote the host config; the image's curl asked the API
	grep -qx 'nvidia.com/gpu.workload.config=vm-passthrough\|mode=vm-passthrough' "$h/etc/gpuvm/gpuvm.conf"
	[ "$(jq -r 'select(.method == "GET") | .path' "$API/requests.jsonl" | head -n 1)" = "/api/v1/nodes/$node" ]
	[ "$(jq -r .user "$API/requests.jsonl" | sort -u)" = "$SA_USER" ]
}
