#!/usr/bin/env bats
# shellcheck disable=SC2154 # $stderr and $output are set by bats' run
# make install into a temporary DESTDIR: what lands where; make uninstall takes it away.

load helpers

@test "make install lays out the binary, the dracut module, the man page, the fragments" {
	d="$BATS_TEST_TMPDIR/dest"
	run make -s -C "$TOP" install DESTDIR="$d"
	assert_success
	run sh -c "cd '$d' && find . -type f | sort"
	assert_success
	assert_line ./usr/sbin/gpuvm
	assert_line ./usr/lib/dracut/modules.d/90gpuvm/module-setup.sh
	assert_line ./usr/lib/dracut/modules.d/90gpuvm/gpuvm-pre-udev.sh
	assert_line ./usr/share/man/man8/gpuvm.8
	assert_line ./usr/share/man/man5/gpuvm.conf.5
	assert_line ./usr/lib/systemd/system/gpuvm-nfd.service
	assert_line ./usr/lib/systemd/system/gpuvm-nfd.timer
	assert_line ./usr/lib/systemd/system/gpuvm-nfd.path
	refute_line ./usr/share/gpuvm/pci.ids
	assert_line ./usr/share/gpuvm/kernel-cmdline/vm-passthrough-intel/grub.cfg
	assert_line ./usr/share/gpuvm/gpuvm.conf.example
	assert_line ./usr/share/gpuvm/mirror/gpuvm-label-mirror
	assert_line ./usr/share/gpuvm/mirror/gpuvm-kubevirt-patch
	# the kustomize base, its components and overlays, every level (mirror/README.md, "Deploy")
	assert_line ./usr/share/gpuvm/mirror/deploy/base/kustomization.yaml
	assert_line ./usr/share/gpuvm/mirror/deploy/base/daemonset.yaml
	assert_line ./usr/share/gpuvm/mirror/deploy/base/rbac.yaml
	assert_line ./usr/share/gpuvm/mirror/deploy/components/admission-policy/admission-policy.yaml
	assert_line ./usr/share/gpuvm/mirror/deploy/components/gpu-operator/rbac.yaml
	assert_line ./usr/share/gpuvm/mirror/deploy/components/live/daemonset.yaml
	assert_line ./usr/share/gpuvm/mirror/deploy/overlays/default/kustomization.yaml
	assert_line ./usr/share/gpuvm/mirror/deploy/overlays/pre-1.30/kustomization.yaml
	assert_line ./usr/share/gpuvm/mirror/deploy/overlays/live/kustomization.yaml
	assert_line ./usr/share/gpuvm/mirror/deploy/overlays/image/kustomization.yaml
	assert_line ./etc/gpuvm/gpuvm.conf
	[ -x "$d/usr/sbin/gpuvm" ]
	[ -x "$d/usr/lib/dracut/modules.d/90gpuvm/module-setup.sh" ]
	[ -x "$d/usr/share/gpuvm/kernel-cmdline/vm-vgpu-amd/grubby.sh" ]
	"$d/usr/sbin/gpuvm" --version
	# every file of mirror/deploy, and no Containerfile any more
	run sh -c "cd '$d/usr/share/gpuvm/mirror/deploy' && find . -type f | LC_ALL=C sort"
	assert_output "$(cd "$TOP/mirror/deploy" && find . -type f | LC_ALL=C sort)"
	[ ! -e "$d/usr/share/gpuvm/mirror/Containerfile" ]
	# every file of dra/deploy (gpuvm-dra's component, its overlay beside the mirror's, the
	# examples), where its overlay's path to the mirror's install still leads
	run sh -c "cd '$d/usr/share/gpuvm/dra/deploy' && find . -type f | LC_ALL=C sort"
	assert_output "$(cd "$TOP/dra/deploy" && find . -type f | LC_ALL=C sort)"
	[ -f "$d/usr/share/gpuvm/dra/deploy/overlays/default/../../../../mirror/deploy/overlays/default/kustomization.yaml" ]
}

# No pci.ids is shipped; PCI_IDS=FILE (the sandbox device plugin's) installs its NVIDIA block.
@test "make install PCI_IDS=FILE: /usr/share/gpuvm/pci.ids, the header and NVIDIA block of FILE" {
	d="$BATS_TEST_TMPDIR/dest"
	printf '%s\n' '# Version: 2025.07.11' '10de  NVIDIA Corporation' '	2330  GH100 [H100 SXM5 80GB]' \
		'10df  Emulex Corporation' '	2330  not this one' >"$BATS_TEST_TMPDIR/plugin.ids"
	run make -s -C "$TOP" install DESTDIR="$d" PCI_IDS="$BATS_TEST_TMPDIR/plugin.ids"
	assert_success
	grep -qx '# Version: 2025.07.11' "$d/usr/share/gpuvm/pci.ids"
	grep -qx '	2330  GH100 \[H100 SXM5 80GB\]' "$d/usr/share/gpuvm/pci.ids"
	run grep -c Emulex "$d/usr/share/gpuvm/pci.ids"
	assert_output 0
	printf '8086  Intel Corporation\n' >"$BATS_TEST_TMPDIR/none.ids"
	run make -s -C "$TOP" install DESTDIR="$BATS_TEST_TMPDIR/d2" PCI_IDS="$BATS_TEST_TMPDIR/none.ids"
	assert_failure
	assert_output --partial "no 10de in"
	run make -s -C "$TOP" uninstall DESTDIR="$d"
	[ ! -e "$d/usr/share/gpuvm/pci.ids" ]
	[ ! -e "$d/usr/lib/systemd/system/gpuvm-nfd.timer" ]
	[ ! -e "$d/usr/lib/systemd/system/gpuvm-nfd.path" ]
	[ ! -e "$d/usr/share/man/man5/gpuvm.conf.5" ]
}

@test "make install never replaces an existing host config; uninstall leaves it" {
	d="$BATS_TEST_TMPDIR/dest"
	mkdir -p "$d/etc/gpuvm"
	echo "mode=vm-passthrough" >"$d/etc/gpuvm/gpuvm.conf"
	run make -s -C "$TOP" install DESTDIR="$d"
	assert_success
	[ "$(cat "$d/etc/gpuvm/gpuvm.conf")" = "mode=vm-passthrough" ]
	run make -s -C "$TOP" uninstall DESTDIR="$d"
	assert_success
	[ ! -e "$d/usr/sbin/gpuvm" ]
	[ ! -e "$d/usr/lib/dracut/modules.d/90gpuvm" ]
	[ "$(cat "$d/etc/gpuvm/gpuvm.conf")" = "mode=vm-passthrough" ]
}

# The directories the label mirror's DaemonSet mounts (hostPath type Directory, which makes
# nothing): tmpfiles.d makes them at every boot of a host with gpuvm installed, and systemd's
# own reading of the file makes exactly those two, as root's, 0755.
@test "make install lays out tmpfiles.d's gpuvm.conf: /run/gpuvm and /run/gpuvm-reboot; uninstall takes it" {
	d="$BATS_TEST_TMPDIR/dest"
	run make -s -C "$TOP" install DESTDIR="$d"
	assert_success
	f=$d/usr/lib/tmpfiles.d/gpuvm.conf
	[ "$(stat -c %a "$f")" = 644 ]
	run grep -v '^#' "$f"
	assert_output 'd /run/gpuvm 0755 root root -
d /run/gpuvm-reboot 0755 root root -'
	need "systemd-tmpfiles (systemd)" command -v systemd-tmpfiles
	systemd-tmpfiles --root="$BATS_TEST_TMPDIR/host" --create "$f"
	run sh -c "find '$BATS_TEST_TMPDIR/host' -mindepth 1 -printf '%P %m %u\\n' | LC_ALL=C sort"
	assert_output 'run 755 root
run/gpuvm 755 root
run/gpuvm-reboot 755 root'
	# Where systemd looks under another PREFIX too (/usr/local/lib/tmpfiles.d).
	run make -s -C "$TOP" install DESTDIR="$BATS_TEST_TMPDIR/local" PREFIX=/usr/local
	assert_success
	cmp "$f" "$BATS_TEST_TMPDIR/local/usr/local/lib/tmpfiles.d/gpuvm.conf"
	run make -s -C "$TOP" uninstall DESTDIR="$d"
	assert_success
	[ ! -e "$f" ]
}

# initramfs-tools reads /usr/share/initramfs-tools only: the hook and the boot script go
# there whatever the PREFIX, executable (mkinitramfs runs only executable hooks and scripts);
# the one boot script in each stage it acts in.
@test "make install lays out the initramfs-tools hook and boot scripts; uninstall takes them" {
	d="$BATS_TEST_TMPDIR/dest"
	run make -s -C "$TOP" install DESTDIR="$d" PREFIX=/usr/local
	assert_success
	[ -x "$d/usr/share/initramfs-tools/hooks/gpuvm" ]
	cmp "$TOP/initramfs-tools/hooks/gpuvm" "$d/usr/share/initramfs-tools/hooks/gpuvm"
	run "$d/usr/share/initramfs-tools/hooks/gpuvm" prereqs
	assert_success
	assert_output ""
	for s in init-top init-premount local-block init-bottom; do
		[ -x "$d/usr/share/initramfs-tools/scripts/$s/gpuvm" ]
		cmp "$TOP/initramfs-tools/scripts/gpuvm" "$d/usr/share/initramfs-tools/scripts/$s/gpuvm"
		run "$d/usr/share/initramfs-tools/scripts/$s/gpuvm" prereqs
		assert_success
		assert_output ""
	done
	run find "$d/usr/share/initramfs-tools" -type f
	assert_success
	assert_equal "$(echo "$output" | wc -l)" 5
	run make -s -C "$TOP" uninstall DESTDIR="$d" PREFIX=/usr/local
	assert_success
	run find "$d/usr/share/initramfs-tools" -type f
	assert_output ""
}

@test "the example config is all comments: installing it changes no setting" {
	mkfx workstation
	cp "$TOP/doc/gpuvm.conf.example" "$ROOT/etc/gpuvm/gpuvm.conf" 2>/dev/null ||
		{ mkdir -p "$ROOT/etc/gpuvm" && cp "$TOP/doc/gpuvm.conf.example" "$ROOT/etc/gpuvm/gpuvm.conf"; }
	gv --cmdline "" plan --json
	assert_success
	[ "$(jqr '.errors | length')" = 0 ]
	[ "$(jqr '.warnings | length')" = 0 ]
	[ "$(jqr .mode_source)" = default ]
}

# The dracut module against the layouts of dracut 059/106 (the initqueue in base) and 108 and
# later (its own module, 77initqueue in 112): depends() names it only where it exists.
@test "dracut module: depends() names the initqueue module where this dracut has one" {
	b=$BATS_TEST_TMPDIR/dracut
	mkdir -p "$b/modules.d/77initqueue" "$b/modules.d/80base"
	run bash -c ". '$TOP/dracut/90gpuvm/module-setup.sh' && dracutbasedir='$b' depends"
	assert_success
	assert_output initqueue
	rm -r "$b/modules.d/77initqueue" "$b/modules.d/80base"
	mkdir -p "$b/modules.d/99base"
	run bash -c ". '$TOP/dracut/90gpuvm/module-setup.sh' && dracutbasedir='$b' depends"
	assert_success
	assert_output ''
}

# systemd 257 and later make /usr (and /lib, a link into it) read-only in the initramfs: the
# image asks for dracut-initqueue.service when it is built, the hooks write nothing there.
@test "dracut module: install() asks for the initqueue; the boot-time hooks write nothing under /lib or /usr" {
	run bash -c "
		inst_simple() { :; }; inst_script() { :; }; inst_hook() { :; }
		dracut_need_initqueue() { echo need-initqueue; }
		. '$TOP/dracut/90gpuvm/module-setup.sh'
		GPUVM_BINARY='$TOP/build/gpuvm' GPUVM_CONFIG=/dev/null moddir=/m install"
	assert_success
	assert_line need-initqueue
	run grep -nE '>>?[[:space:]]*"?/(lib|usr)/' "$TOP/dracut/90gpuvm/gpuvm-pre-udev.sh" \
		"$TOP/dracut/90gpuvm/gpuvm-resume.sh"
	assert_failure
}

# check() of a host (dracutsysrootdir standing for its /) with the gpuvm binary: what
# dracut decides alone, 0 (include) or 255 (only when asked for).
modcheck() {
	run bash -c ". '$TOP/dracut/90gpuvm/module-setup.sh'
		dracutsysrootdir='$1' kernel_cmdline='${2-}' GPUVM_BINARY='$TOP/build/gpuvm' check"
}

# The mode is the root's at boot and may change without a rebuild: every image built while
# gpuvm is installed has it, whatever the host config says now; none without the binary.
@test "dracut module: check() includes gpuvm whenever the binary is installed, and never copies the config" {
	r=$BATS_TEST_TMPDIR/host
	mkdir -p "$r/etc/gpuvm"
	modcheck "$r"
	assert_success
	printf 'mode=container\n' >"$r/etc/gpuvm/gpuvm.conf"
	modcheck "$r"
	assert_success
	run bash -c ". '$TOP/dracut/90gpuvm/module-setup.sh'
		dracutsysrootdir='$r' GPUVM_BINARY='$BATS_TEST_TMPDIR/none' check"
	assert_failure 1
	# install() puts the binary, the hooks and the modprobe.d files in, never /etc/gpuvm.
	run bash -c "
		inst_simple() { echo \"inst \$*\"; }; inst_script() { :; }; dracut_need_initqueue() { :; }
		inst_hook() { echo \"hook \$*\"; }
		. '$TOP/dracut/90gpuvm/module-setup.sh'
		dracutsysrootdir='$r' GPUVM_BINARY='$TOP/build/gpuvm' moddir=/m install"
	assert_success
	assert_line "hook pre-udev 00 /m/gpuvm-pre-udev.sh"
	assert_line "hook pre-pivot 50 /m/gpuvm-pre-pivot.sh"
	refute_output --partial /etc/gpuvm
	# The driver warning asks gpuvm for the mode: the label line counts, as at boot.
	printf '# the label, verbatim\nnvidia.com/gpu.workload.config=vm-passthrough\n' >"$r/etc/gpuvm/gpuvm.conf"
	run bash -c ". '$TOP/dracut/90gpuvm/module-setup.sh'
		dracutsysrootdir='$r' GPUVM_BINARY='$TOP/build/gpuvm' gpuvm_build_mode"
	assert_output vm-passthrough
	# A link there is not read, as the boot would not read it.
	mv "$r/etc/gpuvm/gpuvm.conf" "$r/elsewhere.conf"
	ln -s ../../elsewhere.conf "$r/etc/gpuvm/gpuvm.conf"
	run bash -c ". '$TOP/dracut/90gpuvm/module-setup.sh'
		dracutsysrootdir='$r' GPUVM_BINARY='$TOP/build/gpuvm' gpuvm_build_mode"
	assert_success
	assert_output ""
	run bash -c ". '$TOP/dracut/90gpuvm/module-setup.sh'
		dracutsysrootdir='$r' GPUVM_BINARY='$TOP/build/gpuvm' GPUVM_CONFIG='$r/elsewhere.conf' gpuvm_build_mode"
	assert_output vm-passthrough
}

# make setup-build (scripts/install-packages.sh --build): the build's packages alone, each of
# them in make setup's list too. Each tool the build calls (make all, make arm64, make deb,
# make rpm, sbom.sh) is a file of a package of that list, as this host's dpkg says (dpkg-deb
# is dpkg's, always there).
@test "the build's package list (make setup-build): in make setup's, with every tool make all, arm64, deb and rpm call" {
	run sh "$TOP/scripts/install-packages.sh" --build --list
	assert_success
	build=$output
	run sh "$TOP/scripts/install-packages.sh" --list
	assert_success
	full=$output
	[ "$(grep -c . <<<"$build")" -lt "$(grep -c . <<<"$full")" ]
	while read -r p; do
		grep -qx -- "$p" <<<"$full" || fail "$p is in the build's list, not in make setup's"
	done <<<"$build"
	for p in build-essential gcc make musl-tools musl-dev linux-libc-dev dpkg-dev rpm jq file \
		gcc-aarch64-linux-gnu linux-libc-dev-arm64-cross; do
		grep -qx "$p" <<<"$build" || fail "the build's list lacks $p"
	done
	for p in bats lintian rpmlint qemu-system-x86 clang valgrind umoci; do
		run grep -qx "$p" <<<"$build"
		assert_failure
	done
	run make -s -C "$TOP" -n setup-build
	assert_output 'sh scripts/install-packages.sh --build'
	# The tools, by the package that ships them here.
	for t in gcc make ar musl-gcc dpkg-source xz file jq rpmbuild aarch64-linux-gnu-gcc; do
		need "$t (make setup-build)" command -v "$t"
		f=$(command -v "$t")
		p=$(dpkg -S "$f" 2>/dev/null || dpkg -S "${f#/usr}" 2>/dev/null) || fail "no package ships $f"
		p=${p%%:*}
		case $p in
		binutils) p='build-essential' ;; # ar: binutils, which build-essential depends on
		esac
		grep -qx "$p" <<<"$build" || fail "$t is $p's, not in the build's list"
	done
}
