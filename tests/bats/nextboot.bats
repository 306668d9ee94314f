#!/usr/bin/env bats
# shellcheck disable=SC2154,SC2016 # $stderr and $output are set by bats' run; the $ in GRUB files is theirs
# The next boot, told truly (issue 18): the installed kernels' initramfs images, read as the
# kernel reads them, and the boot line the boot loader's files give; what config set, status
# and its JSON say of them.

load helpers

KV=6.1.0-99-amd64

setup() {
	mkfx workstation
	[ -d "$ROOT/lib/modules/$KV" ]
	IMG="$ROOT/boot/initrd.img-$KV"
	CONF="$ROOT/etc/gpuvm/gpuvm.conf"
	mkdir -p "$ROOT/etc/gpuvm"
}

# The next_boot object of status --json.
nb() {
	gv status --json
	assert_success
	output=$(printf '%s' "$output" | jq -c ".next_boot | $1")
}

@test "an image without gpuvm: vm-passthrough is written, exit 6, with the fix; container exits 0 with a note" {
	mkinitrd "$IMG" --no-gpuvm
	gv config set mode=vm-passthrough
	assert_failure 6
	assert_line "/etc/gpuvm/gpuvm.conf: mode=vm-passthrough"
	assert_line "next boot: no gpuvm: /boot/initrd.img-$KV has no gpuvm"
	assert_output --partial "gpuvm will not bind at the next boot: run dracut -f --regenerate-all before rebooting"
	assert_output --partial 'add_dracutmodules+=" gpuvm "'
	[ "$(cat "$CONF")" = mode=vm-passthrough ]
	gv config set mode=container
	assert_success
	assert_line "next boot: no gpuvm: /boot/initrd.img-$KV has no gpuvm"
	assert_line --partial "note: /boot/initrd.img-$KV has no gpuvm: no gpuvm there means no vfio binds"
	nb .gpuvm
	[ "$output" = false ]
	nb '.images[0] | [.path, .kernel, .gpuvm, .why] | join("|")'
	[ "$output" = "\"/boot/initrd.img-$KV|$KV|false|/boot/initrd.img-$KV has no gpuvm\"" ]
}

# The fix is the host's own generator: its kernel hook says which, else the tool present,
# else what the images hold.
@test "an initramfs-tools host: update-initramfs is the fix, for every image or the stale one" {
	mkdir -p "$ROOT/etc/kernel/postinst.d"
	: >"$ROOT/etc/kernel/postinst.d/initramfs-tools"
	mkinitrd "$IMG" --itools --no-gpuvm
	gv config set mode=vm-passthrough
	assert_failure 6
	assert_line "/boot/initrd.img-$KV has no gpuvm: gpuvm will not bind at the next boot: run update-initramfs -u -k all before rebooting (gpuvm's initramfs-tools hook joins every image while it is installed)"
	gv check --mode vm-passthrough
	assert_output --partial "fix: update-initramfs -u -k all (gpuvm's initramfs-tools hook"
	mkinitrd "$IMG" --itools --conf mode=container
	gv config set mode=vm-passthrough
	assert_success
	assert_line "next boot: gpuvm runs in container"
	assert_line "the initramfs /boot/initrd.img-$KV carries another copy of /etc/gpuvm/gpuvm.conf (mode container): run update-initramfs -u -k $KV before rebooting"
	assert_line "initramfs rebuild: update-initramfs -u -k all"
	# Without a kernel hook, the tool present; without either, what the image holds.
	rm "$ROOT/etc/kernel/postinst.d/initramfs-tools"
	gv config set mode=vm-vgpu
	assert_line "initramfs rebuild: update-initramfs -u -k all"
	mkinitrd "$IMG" --conf mode=container
	gv config set mode=vm-passthrough
	assert_line "initramfs rebuild: dracut -f --regenerate-all"
	mkdir -p "$ROOT/usr/sbin"
	: >"$ROOT/usr/sbin/update-initramfs"
	gv config set mode=vm-vgpu
	assert_line "initramfs rebuild: update-initramfs -u -k all"
}

@test "gpuvm without its hook does not run" {
	mkinitrd "$IMG" --no-hook
	gv config set mode=vm-vgpu
	assert_failure 6
	assert_line "next boot: no gpuvm: /boot/initrd.img-$KV has gpuvm but no hook that runs it"
}

@test "an image with gpuvm and a stale baked config: run dracut -f, exit 0; status says which" {
	mkinitrd "$IMG" --conf mode=container
	gv config set mode=vm-passthrough
	assert_success
	assert_line "next boot: gpuvm runs in container"
	assert_line "the initramfs /boot/initrd.img-$KV carries another copy of /etc/gpuvm/gpuvm.conf (mode container): run dracut -f --kver $KV before rebooting"
	assert_line "initramfs rebuild: dracut -f --regenerate-all"
	nb '.images[0] | [.gpuvm, .config_mode, .stale, .mode] | join("|")'
	[ "$output" = '"true|container|true|container"' ]
	gv status
	assert_line "next boot: gpuvm runs in container (from /boot/initrd.img-$KV:/etc/gpuvm/gpuvm.conf:1)"
}

@test "an image with the current config: gpuvm runs in that mode, nothing to rebuild" {
	mkinitrd "$IMG" --conf mode=vm-passthrough
	gv config set mode=vm-passthrough
	assert_success
	assert_line "next boot: gpuvm runs in vm-passthrough"
	refute_output --partial "dracut -f"
	refute_output --partial "initramfs rebuild:"
	nb '[.gpuvm, .mode, .images[0].stale, .cmdline_mode] | map(tostring) | join("|")'
	[ "$output" = '"true|vm-passthrough|false|null"' ]
	# another key that the copy lacks makes it stale, though its mode is the same
	gv config set exclude=0000:41:00.0
	assert_success
	assert_output --partial "(mode vm-passthrough): run dracut -f --kver $KV before rebooting"
}

@test "an early microcode archive, then the main one compressed with gzip, xz or zstd, or not" {
	local comp
	for comp in gzip xz zstd none; do
		mkinitrd "$IMG" --early --comp "$comp" --conf mode=vm-vgpu
		printf 'mode=vm-vgpu\n' >"$CONF"
		nb '[.gpuvm, .mode, .images[0].stale] | map(tostring) | join("|")'
		[ "$output" = '"true|vm-vgpu|false"' ] || fail "$comp: $output"
	done
}

@test "no decompressor on PATH: unknown, said, never a crash" {
	mkinitrd "$IMG" --early --comp zstd
	run --separate-stderr env PATH="$BATS_TEST_TMPDIR/empty" "$GPUVM" --root "$ROOT" config set mode=vm-passthrough
	assert_success
	assert_line "next boot: unknown: /boot/initrd.img-$KV cannot be read: no zstd to read it"
}

@test "a truncated or garbage image is unknown, not a crash" {
	mkinitrd "$IMG" --comp gzip
	head -c 200 "$IMG" >"$IMG.cut" && mv "$IMG.cut" "$IMG"
	gv config set mode=vm-passthrough
	assert_success
	assert_line "next boot: unknown: /boot/initrd.img-$KV cannot be read: gzip -dc failed: truncated or corrupt"
	mkinitrd "$IMG" --comp none
	head -c 300 "$IMG" >"$IMG.cut" && mv "$IMG.cut" "$IMG"
	gv config set mode=vm-passthrough
	assert_line "next boot: unknown: /boot/initrd.img-$KV cannot be read: truncated"
	head -c 4096 /dev/urandom | tr '\000\037\050\002\004\102\135\211\375' 'abcdefghi' >"$IMG"
	gv config set mode=vm-passthrough
	assert_success
	assert_line "next boot: unknown: /boot/initrd.img-$KV cannot be read: neither cpio nor a compressed stream at byte 0"
	nb .gpuvm
	[ "$output" = null ]
}

@test "a kernel with vmlinuz and no initramfs, and every image judged: one without gpuvm is named" {
	mkinitrd "$IMG" --conf mode=vm-passthrough
	mkdir -p "$ROOT/lib/modules/6.2.0-1-amd64"
	touch "$ROOT/boot/vmlinuz-6.2.0-1-amd64"
	printf 'mode=vm-passthrough\n' >"$CONF"
	nb '[.gpuvm, .why, (.images | length)] | map(tostring) | join("|")'
	[ "$output" = '"false|no initramfs for kernel 6.2.0-1-amd64 (/boot/initrd.img-6.2.0-1-amd64: No such file or directory)|2"' ]
	# a dracut-named image for it, with gpuvm
	mkinitrd "$ROOT/boot/initramfs-6.2.0-1-amd64.img" --conf mode=vm-passthrough
	nb '[.gpuvm, .mode] | map(tostring) | join("|")'
	[ "$output" = '"true|vm-passthrough"' ]
	# modules left behind by a removed kernel: no vmlinuz, no image, not a kernel that boots
	mkdir -p "$ROOT/lib/modules/5.10.0-1-amd64"
	nb '.images | length'
	[ "$output" = 2 ]
}

@test "no image at all: unknown" {
	gv config set mode=vm-passthrough
	assert_success
	assert_line "next boot: unknown: no initramfs of an installed kernel found under /boot"
}

@test "the GRUB defaults file sets gpuvm.mode=: another mode cannot take effect, exit 6, the file named" {
	mkinitrd "$IMG" --conf mode=container
	mkdir -p "$ROOT/etc/default"
	printf '# grub\nGRUB_DEFAULT=0\nGRUB_CMDLINE_LINUX_DEFAULT="quiet"\nGRUB_CMDLINE_LINUX="intel_iommu=on iommu=pt gpuvm.mode=vm-passthrough"\n' >"$ROOT/etc/default/grub"
	gv config set mode=container
	assert_failure 6
	assert_line "next boot: gpuvm runs in vm-passthrough"
	assert_line "the label cannot take effect on this node until gpuvm.mode= is removed from /etc/default/grub:4 (it sets vm-passthrough)"
	[ "$(cat "$CONF")" = mode=container ]
	# the same mode: nothing overridden
	gv config set mode=vm-passthrough
	assert_success
	refute_output --partial "cannot take effect"
	nb '[.cmdline_mode, .cmdline_source, .mode, .mode_source] | join("|")'
	[ "$output" = '"vm-passthrough|/etc/default/grub:4|vm-passthrough|the boot line (/etc/default/grub:4)"' ]
	gv status
	assert_line "next boot line: gpuvm.mode=vm-passthrough (/etc/default/grub:4)"
}

@test "grub.d: the fragment that appends gpuvm.mode= is named; a line without it overrides nothing" {
	local ln
	mkinitrd "$IMG" --conf mode=vm-passthrough
	mkdir -p "$ROOT/etc/default/grub.d"
	printf 'GRUB_CMDLINE_LINUX="quiet"\n' >"$ROOT/etc/default/grub"
	cp "$TOP/kernel-cmdline/vm-passthrough-intel/grub.cfg" "$ROOT/etc/default/grub.d/90-gpuvm.cfg"
	printf 'GRUB_CMDLINE_LINUX="$GRUB_CMDLINE_LINUX console=ttyS0"\n' >"$ROOT/etc/default/grub.d/95-console.cfg"
	ln=$(grep -n '^GRUB_CMDLINE_LINUX=' "$ROOT/etc/default/grub.d/90-gpuvm.cfg" | cut -d: -f1)
	gv config set mode=container
	assert_failure 6
	assert_line "the label cannot take effect on this node until gpuvm.mode= is removed from /etc/default/grub.d/90-gpuvm.cfg:$ln (it sets vm-passthrough)"
	# the IOMMU-only fragment for label-driven nodes: no gpuvm.mode=, so the file's mode stands
	cp "$TOP/kernel-cmdline/label-intel/grub.cfg" "$ROOT/etc/default/grub.d/90-gpuvm.cfg"
	printf 'mode=container\n' >"$CONF"
	mkinitrd "$IMG" --conf mode=container
	gv config set mode=container
	assert_success
	assert_line "next boot: gpuvm runs in container"
	refute_output --partial "cannot take effect"
}

@test "a boot line that sh alone could tell is unknown, and said" {
	mkinitrd "$IMG" --conf mode=container
	mkdir -p "$ROOT/etc/default"
	printf 'GRUB_CMDLINE_LINUX="$(cat /etc/extra) quiet"\n' >"$ROOT/etc/default/grub"
	printf 'mode=container\n' >"$CONF"
	gv status
	assert_line "next boot line: unknown: GRUB_CMDLINE_LINUX at /etc/default/grub:1 uses \$ or \`"
	nb '[.cmdline_mode, .cmdline_source] | map(tostring) | join("|")'
	[ "$output" = '"null|GRUB_CMDLINE_LINUX at /etc/default/grub:1 uses $ or `"' ]
}

@test "BLS entries: the entry's initrd and options are its kernel's boot; rd.gpuvm.mode= there is found" {
	mkdir -p "$ROOT/boot/loader/entries"
	mkinitrd "$ROOT/boot/initramfs-$KV.img" --conf mode=container
	printf 'title Fedora\nversion %s\nlinux /vmlinuz-%s\ninitrd /initramfs-%s.img\noptions root=UUID=x ro rd.gpuvm.mode=vm-vgpu\n' \
		"$KV" "$KV" "$KV" >"$ROOT/boot/loader/entries/abc-$KV.conf"
	gv config set mode=container
	assert_failure 6
	assert_line "next boot: gpuvm runs in vm-vgpu"
	assert_line "the label cannot take effect on this node until gpuvm.mode= is removed from /boot/loader/entries/abc-$KV.conf (it sets vm-vgpu)"
	nb '.images[0].path'
	[ "$output" = "\"/boot/initramfs-$KV.img\"" ]
}

@test "the image's own etc/cmdline.d (dracut's kernel_cmdline=) and config= on a disk" {
	mkinitrd "$IMG" --conf mode=container --cmdline "rd.gpuvm.mode=vm-passthrough"
	printf 'mode=container\n' >"$CONF"
	nb '[.mode, .mode_source] | join("|")'
	[ "$output" = "\"vm-passthrough|/boot/initrd.img-$KV:/etc/cmdline.d\"" ]
	# config= baked in the image: the boot reads the host config from that disk, not the copy
	mkinitrd "$IMG" --conf 'config=LABEL=gpuvm:/etc/gpuvm/gpuvm.conf'
	gv config set mode=vm-passthrough
	assert_success
	assert_line "next boot: gpuvm runs in vm-passthrough"
	assert_line "the next boot reads the host config from a disk (the host config, read from config=LABEL=gpuvm:/etc/gpuvm/gpuvm.conf): no initramfs rebuild needed"
	refute_output --partial "run dracut -f"
	# config= on the boot line does the same
	mkinitrd "$IMG" --conf mode=container
	mkdir -p "$ROOT/etc/kernel"
	printf 'root=UUID=x gpuvm.config=UUID=0b1e\n' >"$ROOT/etc/kernel/cmdline"
	gv config set mode=vm-vgpu
	assert_success
	assert_line "next boot: gpuvm runs in vm-vgpu"
}

@test "check: an ERROR when a VM mode's next boot has no gpuvm, or the boot line sets another mode" {
	mkinitrd "$IMG" --no-gpuvm
	gv check --mode vm-passthrough
	assert_failure 1
	assert_output --partial "ERROR    the next boot will not run gpuvm: /boot/initrd.img-$KV has no gpuvm"
	assert_output --partial 'add_dracutmodules+=" gpuvm "'
	gv check --mode container --json
	[ "$(jqr '[.findings[] | select(.what | test("next boot"))] | length')" = 0 ]
	mkinitrd "$IMG" --conf mode=vm-passthrough
	mkdir -p "$ROOT/etc/default"
	printf 'GRUB_CMDLINE_LINUX="gpuvm.mode=vm-passthrough"\n' >"$ROOT/etc/default/grub"
	gv check --mode container
	assert_failure 1
	assert_output --partial "ERROR    the boot line's gpuvm.mode=vm-passthrough (/etc/default/grub:1) overrides container at the next boot"
	gv check --mode vm-passthrough --json
	[ "$(jqr '[.findings[] | select(.what | test("next boot"))] | length')" = 0 ]
}

@test "an image that is not a regular file is not read (a FIFO would block, a device never end)" {
	mkdir -p "$ROOT/boot"
	mkfifo "$IMG"
	gv config set mode=vm-passthrough
	assert_success
	assert_line "next boot: unknown: /boot/initrd.img-$KV cannot be read: not a regular file"
	rm "$IMG"
	ln -s /dev/zero "$IMG"
	gv config set mode=vm-passthrough
	assert_success
	assert_line "next boot: unknown: /boot/initrd.img-$KV cannot be read: not a regular file"
}
