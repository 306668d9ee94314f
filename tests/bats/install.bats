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
	assert_line ./usr/lib/systemd/system/gpuvm-nfd.service
	assert_line ./usr/lib/systemd/system/gpuvm-nfd.timer
	refute_line ./usr/share/gpuvm/pci.ids
	assert_line ./usr/share/gpuvm/kernel-cmdline/vm-passthrough-intel/grub.cfg
	assert_line ./usr/share/gpuvm/gpuvm.conf.example
	assert_line ./usr/share/gpuvm/mirror/gpuvm-label-mirror
	assert_line ./usr/share/gpuvm/mirror/deploy/daemonset.yaml
	assert_line ./usr/share/gpuvm/mirror/deploy/rebuild/daemonset.yaml
	assert_line ./etc/gpuvm/gpuvm.conf
	[ -x "$d/usr/sbin/gpuvm" ]
	[ -x "$d/usr/lib/dracut/modules.d/90gpuvm/module-setup.sh" ]
	[ -x "$d/usr/share/gpuvm/kernel-cmdline/vm-vgpu-amd/grubby.sh" ]
	"$d/usr/sbin/gpuvm" --version
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
	[ ! -e "$d/usr/share/gpuvm/pci.ids" ] && [ ! -e "$d/usr/lib/systemd/system/gpuvm-nfd.timer" ]
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
