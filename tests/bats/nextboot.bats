#!/usr/bin/env bats
# shellcheck disable=SC2154,SC2016 # $stderr and $output are set by bats' run; the $ in GRUB and BLS files is theirs
# The next boot, told truly: gpuvm's initramfs reads /etc/gpuvm/gpuvm.conf from the root, so a
# change of it needs a reboot only when this boot's /run/gpuvm/boot.json (of this boot_id)
# says gpuvm ran and read the root's file, and no boot-loader file pins the key. What
# config set, status and check say of it, and the boot-loader files of any size.

load helpers

ID=8d2f0c3e-4b1a-4c5e-9f6d-2a7b3c4d5e6f
RH=0b5d3e6f7a8b4c9d8e7f6a5b4c3d2e1f # a machine id: RHEL 9's BLS names start with it

setup() {
	mkfx workstation
	CONF="$ROOT/etc/gpuvm/gpuvm.conf"
	mkdir -p "$ROOT/etc/gpuvm" "$ROOT/proc/sys/kernel/random" "$ROOT/run/gpuvm"
	printf '%s\n' "$ID" >"$ROOT/proc/sys/kernel/random/boot_id"
}

# bootjson HOST_CONFIG [BOOT_ID] [MODE_SOURCE]: the boot.json a boot call writes (SPEC.md).
bootjson() {
	cat >"$ROOT/run/gpuvm/boot.json" <<EOF
{
  "version": "0.1.0", "command": "apply", "result": "ok",
  "mode": "container", "mode_source": "${3:-/etc/gpuvm/gpuvm.conf:1}",
  "settings": {}, "devices": [], "errors": [], "warnings": [],
  "boot": {
    "boot_id": "${2:-$ID}", "stage": "root", "decided": true,
    "host_config": "$1", "sysroot": "/sysroot", "why": ${4:-null}
  }
}
EOF
}

# A BLS entry: bls NAME OPTIONS [INITRD]
bls() {
	mkdir -p "$ROOT/boot/loader/entries"
	printf 'title Red Hat Enterprise Linux\nversion 5.14.0-427.el9.x86_64\nlinux /vmlinuz-5.14.0-427.el9.x86_64\ninitrd %s\noptions %s\ngrub_users $grub_users\n' \
		"${3:-/initramfs-5.14.0-427.el9.x86_64.img}" "$2" >"$ROOT/boot/loader/entries/$1"
}

# grubenv KEY=VALUE...: a GRUB environment block, 1024 bytes padded with '#'.
grubenv() {
	local f=$1 block
	shift
	mkdir -p "$(dirname "$f")"
	block=$(printf '# GRUB Environment Block\n'; printf '%s\n' "$@")
	{
		printf '%s\n' "$block"
		head -c $((1024 - ${#block} - 1)) /dev/zero | tr '\0' '#'
	} >"$f"
	[ "$(stat -c %s "$f")" = 1024 ]
}

# uki FILE CMDLINE [PE_OFFSET]: a PE image laid out as ukify lays out a UKI (a PE32+ optional
# header; .osrel, .cmdline and .linux, each section's virtual size its length, its raw data
# padded to 512 bytes); CMDLINE - for none. objdump -h reads it as pei-x86-64.
uki() {
	mkdir -p "$(dirname "$1")"
	python3 - "$@" <<'EOF'
import struct, sys
path, cmdline = sys.argv[1], sys.argv[2]
pe, opt = int(sys.argv[3]) if len(sys.argv) > 3 else 0x80, 240
secs = [(b'.osrel', b'ID=rhel\n')] + ([(b'.cmdline', cmdline.encode())] if cmdline != '-' else [])
secs.append((b'.linux', b'\0' * 100))
raw = (pe + 24 + opt + 40 * len(secs) + 511) // 512 * 512
out = bytearray(raw)
out[0:2] = b'MZ'
struct.pack_into('<I', out, 60, pe)
out[pe:pe + 4] = b'PE\0\0'
struct.pack_into('<HHIIIHH', out, pe + 4, 0x8664, len(secs), 0, 0, 0, opt, 0x206)
struct.pack_into('<HBBIIIIIQIIHHHHHHIIIIHHQQQQII', out, pe + 24, 0x20b, 0, 0, 0, 0, 0, 0x10000,
                 0x1000, 0x140000000, 0x1000, 0x200, 0, 0, 0, 0, 0, 0, 0, 0x10000 * (len(secs) + 1),
                 raw, 0, 10, 0, 0, 0, 0, 0, 0, 16)
at, va = raw, 0x10000
for i, (name, data) in enumerate(secs):
    size = (len(data) + 511) // 512 * 512
    struct.pack_into('<8sIIIIIIHHI', out, pe + 24 + opt + 40 * i, name, len(data), va, size, at,
                     0, 0, 0, 0, 0x40000040)
    out += data + b'\0' * (size - len(data))
    at, va = at + size, va + 0x10000
open(path, 'wb').write(out)
EOF
}

# The next_boot object of status --json.
nb() {
	gv status --json
	assert_success
	output=$(printf '%s' "$output" | jq -c ".next_boot | $1")
}

READS="next boot: reads the file: gpuvm ran in this boot's initramfs and read /etc/gpuvm/gpuvm.conf on the root (/run/gpuvm/boot.json); no boot line gpuvm reads sets gpuvm.mode="

@test "boot.json of this boot, the root's file read: the next boot reads the file; config set, status, JSON" {
	bootjson read
	gv config set mode=vm-passthrough
	assert_success
	assert_equal "${lines[0]}" "/etc/gpuvm/gpuvm.conf: mode=vm-passthrough"
	assert_equal "${lines[2]}" "$READS"
	assert_equal "${#lines[@]}" 3
	refute_output --partial "initramfs rebuild:"
	refute_output --partial "dracut"
	gv status
	assert_line "$READS"
	nb '[.verdict, .mode, .mode_source, .boot_json, .host_config, .cmdline_mode] | map(tostring) | join("|")'
	[ "$output" = '"reads|vm-passthrough|/etc/gpuvm/gpuvm.conf:1|true|read|null"' ]
	# the file missing at that boot: the root was read, the next boot reads the file too
	bootjson missing
	gv config set exclude=0000:41:00.0
	assert_success
	assert_line "next boot: reads the file: gpuvm ran in this boot's initramfs and looked for /etc/gpuvm/gpuvm.conf on the root (/run/gpuvm/boot.json); no boot line gpuvm reads sets gpuvm.exclude="
}

@test "no boot.json, or one of another boot: unknown, never a yes; exit 0" {
	gv config set mode=vm-passthrough
	assert_success
	assert_line "next boot: unknown: no /run/gpuvm/boot.json: gpuvm did not run in this boot's initramfs (not installed then, or not in the image)"
	nb '[.verdict, .mode, .boot_json] | map(tostring) | join("|")'
	[ "$output" = '"unknown|null|false"' ]
	bootjson read 11111111-2222-3333-4444-555555555555
	gv config set mode=vm-passthrough
	assert_success
	assert_line "next boot: unknown: /run/gpuvm/boot.json is of another boot (boot_id 11111111-2222-3333-4444-555555555555, this boot $ID)"
	# a boot.json without the boot object (an older gpuvm's), or not JSON
	printf '{"version": "0.1.0", "mode": "container"}\n' >"$ROOT/run/gpuvm/boot.json"
	gv config set mode=vm-passthrough
	assert_line "next boot: unknown: /run/gpuvm/boot.json has no boot.boot_id (absent): not written by this gpuvm at boot"
	printf 'not json' >"$ROOT/run/gpuvm/boot.json"
	gv config set mode=vm-passthrough
	assert_line --partial "next boot: unknown: /run/gpuvm/boot.json has no boot.boot_id"
	# no boot_id to compare with
	bootjson read
	rm "$ROOT/proc/sys/kernel/random/boot_id"
	gv config set mode=vm-passthrough
	assert_line --partial "next boot: unknown: /proc/sys/kernel/random/boot_id cannot be read"
}

@test "config= names a disk (boot.json, the file, or the boot line): unknown for the root's file" {
	bootjson disk
	gv config set mode=vm-passthrough
	assert_success
	assert_line "next boot: unknown: this boot read the host config from config='s disk (/run/gpuvm/boot.json: host_config disk): the file here is not what the boot reads"
	refute_output --partial "no rebuild"
	bootjson read
	gv config set 'config=LABEL=gpuvm:/etc/gpuvm/gpuvm.conf'
	assert_success
	assert_line "next boot: unknown: the file says config=LABEL=gpuvm:/etc/gpuvm/gpuvm.conf: the next boot reads the host config from that disk, not this file"
	gv config set mode=vm-vgpu
	assert_line "next boot: unknown: the file says config=LABEL=gpuvm:/etc/gpuvm/gpuvm.conf: the next boot reads the host config from that disk, not this file"
	printf 'mode=container\n' >"$CONF"
	mkdir -p "$ROOT/etc/kernel"
	printf 'root=UUID=x gpuvm.config=UUID=0b1e\n' >"$ROOT/etc/kernel/cmdline"
	gv config set mode=vm-vgpu
	assert_success
	assert_line "next boot: unknown: the boot line (/etc/kernel/cmdline) has gpuvm.config=UUID=0b1e: the next boot reads the host config from that disk, not this file"
}

@test "boot.json: the root not read (unreadable, no-root, pending), or its mode from the image's own line: unknown" {
	bootjson unreadable '' '' '"not a regular file"'
	gv config set mode=vm-passthrough
	assert_line "next boot: unknown: this boot's initramfs did not read the root's file (/run/gpuvm/boot.json: host_config unreadable: not a regular file)"
	bootjson no-root
	gv config set mode=vm-passthrough
	assert_line "next boot: unknown: this boot's initramfs did not read the root's file (/run/gpuvm/boot.json: host_config no-root)"
	bootjson pending
	gv config set mode=vm-passthrough
	assert_line "next boot: unknown: this boot's initramfs did not read the root's file (/run/gpuvm/boot.json: host_config pending)"
	bootjson read "$ID" cmdline
	gv config set mode=vm-passthrough
	assert_line "next boot: unknown: this boot's mode came from its initramfs's own command line (/etc/cmdline.d: dracut's kernel_cmdline=), which gpuvm does not read"
	# another key is not pinned by it
	gv config set exclude=0000:41:00.0
	assert_line --partial "next boot: reads the file: "
}

@test "a boot pinned on its line whose root config changes nothing: its record says pinned, the next boot reads as pinned" {
	local f u line="root=/dev/sda1 ro gpuvm.mode=vm-passthrough" sysroot=$BATS_TEST_TMPDIR/sysroot
	# the boot's two calls as the initramfs makes them (tests/bats/rootconfig.bats)
	nodriver 0000:01:00.0
	gv --cmdline "$line" apply --defer
	assert_success
	output=$(cat "$ROOT/run/gpuvm/boot.json")
	[ "$(jqr '[.boot.stage, .boot.host_config, .mode_source] | join("|")')" = "first|pinned|cmdline" ]
	# --root has no kernel to bind: the tree says what the first call's binds did
	for f in 0 1 2 3; do
		u=$ROOT/sys/bus/pci/devices/0000:01:00.$f/uevent
		sed -i '/^DRIVER=/d' "$u"
		echo DRIVER=vfio-pci >>"$u"
	done
	mkdir -p "$sysroot/etc/gpuvm"
	printf 'mode=vm-passthrough\n' >"$sysroot/etc/gpuvm/gpuvm.conf"
	gv --cmdline "$line" apply --resume --sysroot "$sysroot"
	assert_success
	assert_regex "$stderr" "the root's config changes nothing over the kernel command line"
	output=$(cat "$ROOT/run/gpuvm/boot.json")
	[ "$(jqr .boot.host_config)" = pinned ]
	# the running host: the same pin in the GRUB defaults
	cp "$sysroot/etc/gpuvm/gpuvm.conf" "$CONF"
	mkdir -p "$ROOT/etc/default"
	printf 'GRUB_CMDLINE_LINUX="%s"\n' "${line#root=/dev/sda1 ro }" >"$ROOT/etc/default/grub"
	gv --cmdline "$line" config set mode=vm-passthrough
	assert_success
	assert_line "next boot: pinned: gpuvm.mode=vm-passthrough on the boot line (/etc/default/grub:1)"
	gv --cmdline "$line" config set mode=container
	assert_failure 6
	# a key the line does not pin: the record does not say that the root's file was read
	gv --cmdline "$line" config set exclude=0000:41:00.0
	assert_success
	assert_line "next boot: unknown: this boot's mode was pinned on its line and its record is the first call's (/run/gpuvm/boot.json: host_config pinned): it does not say that the root's file was read"
}

@test "this boot's /proc/cmdline has gpuvm.mode= that no boot-loader file gpuvm reads sets: unknown" {
	bootjson read "$ID" cmdline
	printf 'BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro rd.gpuvm.mode=vm-vgpu\n' >"$ROOT/proc/cmdline"
	gv config set mode=vm-passthrough
	assert_success
	assert_line "next boot: unknown: this boot's kernel command line has gpuvm.mode=vm-vgpu (/proc/cmdline) and no boot-loader file gpuvm reads sets it"
	# the file that sets it found: pinned, by that file
	mkdir -p "$ROOT/etc/default"
	printf 'GRUB_CMDLINE_LINUX="rd.gpuvm.mode=vm-vgpu"\n' >"$ROOT/etc/default/grub"
	gv config set mode=vm-passthrough
	assert_failure 6
	assert_line "next boot: pinned: gpuvm.mode=vm-vgpu on the boot line (/etc/default/grub:1)"
}

@test "the GRUB defaults set gpuvm.mode=: pinned, exit 6 for another mode, the line named; status and check say it" {
	local ln
	bootjson read
	mkdir -p "$ROOT/etc/default/grub.d"
	printf '# grub\nGRUB_DEFAULT=0\nGRUB_CMDLINE_LINUX_DEFAULT="quiet"\nGRUB_CMDLINE_LINUX="intel_iommu=on iommu=pt gpuvm.mode=vm-passthrough"\n' >"$ROOT/etc/default/grub"
	gv config set mode=container
	assert_failure 6
	assert_equal "${lines[2]}" "next boot: pinned: gpuvm.mode=vm-passthrough on the boot line (/etc/default/grub:4)"
	[ "$(cat "$CONF")" = mode=container ]
	# the same mode: pinned all the same, and it takes effect: exit 0
	gv config set mode=vm-passthrough
	assert_success
	assert_line "next boot: pinned: gpuvm.mode=vm-passthrough on the boot line (/etc/default/grub:4)"
	nb '[.verdict, .mode, .mode_source, .cmdline_mode, .cmdline_source] | join("|")'
	[ "$output" = '"pinned|vm-passthrough|/etc/default/grub:4|vm-passthrough|/etc/default/grub:4"' ]
	gv status
	assert_line "next boot: pinned: gpuvm.mode=vm-passthrough on the boot line (/etc/default/grub:4)"
	gv check --mode container
	assert_failure 1
	assert_output --partial "ERROR    next boot: pinned: gpuvm.mode=vm-passthrough on the boot line (/etc/default/grub:4), not container"
	assert_output --partial "fix: remove gpuvm.mode= from /etc/default/grub:4"
	gv check --mode vm-passthrough --json
	[ "$(jqr '[.findings[] | select(.what | test("next boot"))] | length')" = 0 ]
	# a grub.d fragment that appends it is named; one that keeps the line is not
	printf 'GRUB_CMDLINE_LINUX="quiet"\n' >"$ROOT/etc/default/grub"
	cp "$TOP/kernel-cmdline/vm-passthrough-intel/grub.cfg" "$ROOT/etc/default/grub.d/90-gpuvm.cfg"
	printf 'GRUB_CMDLINE_LINUX="$GRUB_CMDLINE_LINUX console=ttyS0"\n' >"$ROOT/etc/default/grub.d/95-console.cfg"
	ln=$(grep -n '^GRUB_CMDLINE_LINUX=' "$ROOT/etc/default/grub.d/90-gpuvm.cfg" | cut -d: -f1)
	gv config set mode=container
	assert_failure 6
	assert_line "next boot: pinned: gpuvm.mode=vm-passthrough on the boot line (/etc/default/grub.d/90-gpuvm.cfg:$ln)"
	cp "$TOP/kernel-cmdline/label-intel/grub.cfg" "$ROOT/etc/default/grub.d/90-gpuvm.cfg"
	gv config set mode=container
	assert_success
	assert_line --partial "next boot: reads the file: "
}

@test "GRUB_CMDLINE_LINUX of 5,000 bytes with gpuvm.mode= at its end: pinned" {
	local pad
	bootjson read
	mkdir -p "$ROOT/etc/default"
	pad=$(printf 'opt%04d=x ' $(seq 1 500) | head -c 4980)
	printf 'GRUB_CMDLINE_LINUX="%s gpuvm.mode=vm-vgpu"\nGRUB_CMDLINE_LINUX_DEFAULT="%s rd.gpuvm.exclude=0000:41:00.0"\n' "$pad" "$pad" >"$ROOT/etc/default/grub"
	[ "$(sed -n 1p "$ROOT/etc/default/grub" | wc -c)" -gt 5000 ]
	gv config set mode=vm-passthrough
	assert_failure 6
	assert_line "next boot: pinned: gpuvm.mode=vm-vgpu on the boot line (/etc/default/grub:1)"
	gv config set exclude=0000:42:00.0
	assert_success
	assert_line "next boot: pinned: gpuvm.exclude=0000:41:00.0 on the boot line (/etc/default/grub:2)"
}

@test "GRUB defaults sh alone could tell: unknown, said" {
	bootjson read
	mkdir -p "$ROOT/etc/default"
	printf 'GRUB_CMDLINE_LINUX="$(cat /etc/extra) quiet"\n' >"$ROOT/etc/default/grub"
	gv config set mode=container
	assert_success
	assert_line "next boot: unknown: GRUB_CMDLINE_LINUX at /etc/default/grub:1 is not a value gpuvm reads (it uses \$, \` or more of sh)"
	nb '[.verdict, .cmdline_mode] | map(tostring) | join("|")'
	[ "$output" = '"unknown|null"' ]
	for l in 'GRUB_CMDLINE_LINUX="quiet"; GRUB_CMDLINE_LINUX="x"' 'GRUB_CMDLINE_LINUX+=" gpuvm.mode=vm-vgpu"' \
		'[ -e /x ] && GRUB_CMDLINE_LINUX="gpuvm.mode=vm-vgpu"' 'GRUB_CMDLINE_LINUX="$HOME"' \
		'GRUB_CMDLINE_LINUX="gpuvm.mode=vm-vgpu";GRUB_CMDLINE_LINUX=""' 'GRUB_CMDLINE_LINUX="open'; do
		printf '%s\n' "$l" >"$ROOT/etc/default/grub"
		gv config set mode=container
		assert_success
		assert_line "next boot: unknown: GRUB_CMDLINE_LINUX at /etc/default/grub:1 is not a value gpuvm reads (it uses \$, \` or more of sh)" || fail "$l"
	done
	# the variables of their own, in any spelling sh reads
	printf 'GRUB_CMDLINE_LINUX=quiet\nexport GRUB_CMDLINE_LINUX_DEFAULT="${GRUB_CMDLINE_LINUX}"'"' gpuvm.mode='vm-vgpu # a comment\n" >"$ROOT/etc/default/grub"
	gv config set mode=container
	assert_failure 6
	assert_line "next boot: pinned: gpuvm.mode=vm-vgpu on the boot line (/etc/default/grub:2)"
}

@test "GRUB defaults: a commented-out assignment is none; a NUL byte is unknown, its offset named" {
	local l
	bootjson read
	mkdir -p "$ROOT/etc/default/grub.d"
	# comments as sh reads them: a '#' that starts a word, outside quotes, to the line's end
	for l in '#GRUB_CMDLINE_LINUX="gpuvm.mode=vm-vgpu"' '  # GRUB_CMDLINE_LINUX+=" gpuvm.mode=vm-vgpu" $(x)' \
		'GRUB_TIMEOUT=5 # GRUB_CMDLINE_LINUX=gpuvm.mode=vm-vgpu' 'GRUB_CMDLINE_LINUX="quiet" # ; GRUB_CMDLINE_LINUX="gpuvm.mode=vm-vgpu"'; do
		printf 'GRUB_DEFAULT=0\n%s\n' "$l" >"$ROOT/etc/default/grub"
		gv config set mode=container
		assert_success
		assert_line "$READS" || fail "$l"
	done
	# a '#' inside quotes or a word is no comment: the value is read, or the line is unknown
	printf 'GRUB_CMDLINE_LINUX="quiet # gpuvm.mode=vm-vgpu"\n' >"$ROOT/etc/default/grub"
	gv config set mode=container
	assert_failure 6
	assert_line "next boot: pinned: gpuvm.mode=vm-vgpu on the boot line (/etc/default/grub:1)"
	printf 'X="a\n#" GRUB_CMDLINE_LINUX="gpuvm.mode=vm-vgpu"\nY=a#GRUB_CMDLINE_LINUX=x\n' >"$ROOT/etc/default/grub"
	gv config set mode=container
	assert_success
	assert_line "next boot: unknown: GRUB_CMDLINE_LINUX at /etc/default/grub:2 is not a value gpuvm reads (it uses \$, \` or more of sh)"
	# a line that goes on in the next (sh: GRUB_CMDLINE_LINUX=gpuvm.mode=vm-vgpu)
	printf 'GRUB_CMDLINE_LINUX=\\\ngpuvm.mode=vm-vgpu\n' >"$ROOT/etc/default/grub"
	[ "$(sh -c '. "$1"; echo "$GRUB_CMDLINE_LINUX"' sh "$ROOT/etc/default/grub")" = gpuvm.mode=vm-vgpu ]
	gv config set mode=container
	assert_line "next boot: unknown: GRUB_CMDLINE_LINUX at /etc/default/grub:1 is not a value gpuvm reads (it uses \$, \` or more of sh)"
	# A NUL byte: dash drops it and reads on, bash 5.2 stops at two in a row; neither is
	# guessed. Its offset is named, in /etc/default/grub or a grub.d fragment.
	printf 'GRUB_DEFAULT=0\0\0\nGRUB_CMDLINE_LINUX="gpuvm.mode=vm-vgpu"\n' >"$ROOT/etc/default/grub"
	gv config set mode=container
	assert_success
	assert_line "next boot: unknown: /etc/default/grub has a NUL byte at offset 14: not read"
	printf 'GRUB_CMDLINE_LINUX="quiet"\n' >"$ROOT/etc/default/grub"
	printf 'GRUB_CMDLINE_LINUX="$GRUB_CMDLINE_LINUX\0 gpuvm.mode=vm-vgpu"\n' >"$ROOT/etc/default/grub.d/90-gpuvm.cfg"
	gv config set mode=container
	assert_line "next boot: unknown: /etc/default/grub.d/90-gpuvm.cfg has a NUL byte at offset 39: not read"
}

@test "BLS entries named MACHINE-ID-VERSION.conf (66 bytes and more) with gpuvm.mode=: pinned, exit 6" {
	local name="$RH-5.14.0-427.13.1.el9_4.x86_64.conf"
	bootjson read
	[ "${#name}" -ge 66 ]
	bls "$name" "root=/dev/mapper/rhel-root ro crashkernel=1G-4G:192M rd.gpuvm.mode=vm-vgpu"
	gv config set mode=container
	assert_failure 6
	assert_line "next boot: pinned: gpuvm.mode=vm-vgpu on the boot line (/boot/loader/entries/$name)"
	# a name of 200 bytes
	rm "$ROOT/boot/loader/entries/$name"
	name="$RH$RH$RH$RH$RH$RH-5.14.0-427.13.1.el9_4.x86_64+debug.conf"
	bls "$name" "root=/dev/mapper/rhel-root ro gpuvm.mode=vm-passthrough"
	gv config set mode=container
	assert_failure 6
	assert_line "next boot: pinned: gpuvm.mode=vm-passthrough on the boot line (/boot/loader/entries/$name)"
	gv config set mode=vm-passthrough
	assert_success
}

@test "40 BLS entries: the last one's gpuvm.mode= is found" {
	local i
	bootjson read
	for i in $(seq -w 1 40); do
		bls "$RH-5.14.0-$i.el9.x86_64.conf" "root=/dev/sda1 ro quiet"
	done
	gv config set mode=container
	assert_success
	assert_line --partial "next boot: reads the file: "
	nb .bls_entries
	[ "$output" = 40 ]
	bls "$RH-5.14.0-40.el9.x86_64.conf" "root=/dev/sda1 ro gpuvm.mode=vm-vgpu"
	gv config set mode=container
	assert_failure 6
	assert_line "next boot: pinned: gpuvm.mode=vm-vgpu on the boot line (/boot/loader/entries/$RH-5.14.0-40.el9.x86_64.conf)"
}

@test "BLS \$kernelopts and \$tuned_initrd resolved from grubenv; one that is not there is unknown" {
	local e="$RH-5.14.0-427.el9.x86_64.conf"
	bootjson read
	bls "$e" '$kernelopts $tuned_params' '/initramfs-5.14.0-427.el9.x86_64.img $tuned_initrd'
	# no grubenv at all
	gv config set mode=container
	assert_success
	assert_line "next boot: unknown: /boot/loader/entries/$e: its initrd line is not read: \$tuned_initrd: no grubenv gpuvm reads (/boot/grub2/grubenv)"
	grubenv "$ROOT/boot/grub2/grubenv" 'saved_entry=x' 'kernelopts=root=/dev/mapper/rhel-root ro' 'tuned_params=' 'tuned_initrd='
	gv config set mode=container
	assert_success
	assert_line --partial "next boot: reads the file: "
	# kernelopts with gpuvm.mode=: pinned, the variable and its file named
	grubenv "$ROOT/boot/grub2/grubenv" 'kernelopts=root=/dev/mapper/rhel-root ro gpuvm.mode=vm-passthrough' 'tuned_params=' 'tuned_initrd='
	gv config set mode=container
	assert_failure 6
	assert_line "next boot: pinned: gpuvm.mode=vm-passthrough on the boot line (/boot/loader/entries/$e, \$kernelopts from /boot/grub2/grubenv)"
	# tuned_initrd missing: the initrd line is unknown, never a yes
	grubenv "$ROOT/boot/grub2/grubenv" 'kernelopts=root=/dev/mapper/rhel-root ro' 'tuned_params='
	gv config set mode=container
	assert_success
	assert_line "next boot: unknown: /boot/loader/entries/$e: its initrd line is not read: \$tuned_initrd is not in /boot/grub2/grubenv"
	# tuned_params missing: the options line
	grubenv "$ROOT/boot/grub2/grubenv" 'kernelopts=root=/dev/mapper/rhel-root ro' 'tuned_initrd='
	gv config set mode=container
	assert_line "next boot: unknown: /boot/loader/entries/$e: its options line is not read: \$tuned_params is not in /boot/grub2/grubenv"
	# on the ESP where GRUB's own is not there (RHEL 8's EFI layout)
	rm "$ROOT/boot/grub2/grubenv"
	grubenv "$ROOT/boot/efi/EFI/redhat/grubenv" 'kernelopts=root=/dev/sda1 ro rd.gpuvm.mode=vm-vgpu' 'tuned_params=' 'tuned_initrd='
	gv config set mode=container
	assert_failure 6
	assert_line "next boot: pinned: gpuvm.mode=vm-vgpu on the boot line (/boot/loader/entries/$e, \$kernelopts from /boot/efi/EFI/redhat/grubenv)"
	# ${NAME}, and a value with an escaped byte
	bls "$e" '${kernelopts} quiet' '/initramfs.img'
	grubenv "$ROOT/boot/efi/EFI/redhat/grubenv" 'kernelopts=root=/dev/sda1\\ ro gpuvm.mode=container'
	gv config set mode=container
	assert_success
	assert_line "next boot: unknown: /boot/loader/entries/$e: its options line is not read: \$kernelopts in /boot/efi/EFI/redhat/grubenv holds \$, \`, \\ or ', which gpuvm does not read"
}

@test "a grubenv that cannot be read is named, with the reason: unknown" {
	local e="$RH-5.14.0-427.el9.x86_64.conf"
	bootjson read
	bls "$e" '$kernelopts' /initramfs.img
	mkdir -p "$ROOT/boot/grub2/grubenv"
	gv config set mode=container
	assert_success
	assert_line "next boot: unknown: /boot/grub2/grubenv cannot be read: Is a directory"
	rmdir "$ROOT/boot/grub2/grubenv"
	mkdir -p "$ROOT/boot/efi/EFI/redhat/grubenv"
	gv status
	assert_line "next boot: unknown: /boot/efi/EFI/redhat/grubenv cannot be read: Is a directory"
}

# nobody_gpuvm: $NOBODY_BIN, a copy of $GPUVM that user nobody can run. The tree's own may sit
# under a folder closed to others (a clone in a 0700 folder, as mktemp -d makes); with the
# aarch64 wrapper, its binary is copied beside it too (GPUVM_ARM64, which the wrapper takes).
nobody_gpuvm() {
	local d=$BATS_TEST_TMPDIR/nobody
	mkdir -p "$d"
	cp "$GPUVM" "$d/gpuvm"
	if [ "$(head -c 4 "$GPUVM" | tail -c 3)" != ELF ]; then
		cp "$TOP/build/arm64/gpuvm" "$d/gpuvm-arm64"
		export GPUVM_ARM64=$d/gpuvm-arm64
	fi
	chmod -R o+rX "$d"
	NOBODY_BIN=$d/gpuvm
}

@test "a boot-loader folder a non-root user cannot list (RHEL's 0700 BLS entries): unknown, said" {
	local e="$RH-5.14.0-427.el9.x86_64.conf" d
	[ "$(id -u)" = 0 ] || skip "needs root (setpriv to another user)"
	command -v setpriv >/dev/null || skip "no setpriv (util-linux)"
	bootjson read
	printf 'mode=container\n' >"$CONF"
	bls "$e" "root=/dev/sda1 ro gpuvm.mode=vm-vgpu"
	# the tree reachable and readable for nobody, as / and /etc are; the entries 0700, as RHEL has them
	chmod -R o+rX "$ROOT"
	d=$ROOT
	while [ "$d" != / ]; do
		chmod o+x "$d"
		d=$(dirname "$d")
	done
	chmod 0700 "$ROOT/boot/loader/entries"
	nobody_gpuvm
	gv status
	assert_line "next boot: pinned: gpuvm.mode=vm-vgpu on the boot line (/boot/loader/entries/$e)"
	run --separate-stderr setpriv --reuid=65534 --regid=65534 --clear-groups "$NOBODY_BIN" --root "$ROOT" status
	assert_success
	assert_line "next boot: unknown: cannot list /boot/loader/entries: Permission denied"
	run --separate-stderr setpriv --reuid=65534 --regid=65534 --clear-groups "$NOBODY_BIN" --root "$ROOT" check --mode container
	assert_line "next boot: unknown: cannot list /boot/loader/entries: Permission denied"
	# listed, but its grubenv 0600 (RHEL's /boot/grub2/grubenv): that file, named
	chmod 0755 "$ROOT/boot/loader/entries"
	bls "$e" '$kernelopts' /initramfs.img
	chmod o+r "$ROOT/boot/loader/entries/$e"
	grubenv "$ROOT/boot/grub2/grubenv" 'kernelopts=root=/dev/sda1 ro gpuvm.mode=vm-vgpu'
	chmod 0600 "$ROOT/boot/grub2/grubenv"
	chmod o+x "$ROOT/boot/grub2"
	run --separate-stderr setpriv --reuid=65534 --regid=65534 --clear-groups "$NOBODY_BIN" --root "$ROOT" status
	assert_line "next boot: unknown: /boot/grub2/grubenv cannot be read: Permission denied"
}

@test "/etc/kernel/cmdline (kernel-install, UKIs) pins like the others" {
	bootjson read
	mkdir -p "$ROOT/etc/kernel"
	printf 'root=UUID=x ro\ngpuvm.mode=vm-passthrough\n' >"$ROOT/etc/kernel/cmdline"
	gv config set mode=vm-vgpu
	assert_failure 6
	assert_line "next boot: pinned: gpuvm.mode=vm-passthrough on the boot line (/etc/kernel/cmdline)"
}

@test "dracut's kernel_cmdline (the kernel-cmdline fragment, dracut.conf, /usr/lib's): read as the boot line" {
	local ln d=$ROOT/etc/dracut.conf.d u=$ROOT/usr/lib/dracut/dracut.conf.d
	bootjson read
	mkdir -p "$d" "$u"
	# the project's own fragment: kernel_cmdline+=" rd.gpuvm.mode=vm-passthrough "
	cp "$TOP/kernel-cmdline/vm-passthrough-intel/dracut.conf" "$d/90-gpuvm.conf"
	ln=$(grep -n '^kernel_cmdline' "$d/90-gpuvm.conf" | cut -d: -f1)
	gv config set mode=container
	assert_failure 6
	assert_line "next boot: pinned: gpuvm.mode=vm-passthrough on the boot line (/etc/dracut.conf.d/90-gpuvm.conf:$ln)"
	gv config set mode=vm-passthrough
	assert_success
	assert_line "next boot: pinned: gpuvm.mode=vm-passthrough on the boot line (/etc/dracut.conf.d/90-gpuvm.conf:$ln)"
	# this boot's mode from the image's own line, the same pin in dracut's config: pinned
	bootjson read "$ID" cmdline
	gv config set mode=vm-passthrough
	assert_success
	assert_line "next boot: pinned: gpuvm.mode=vm-passthrough on the boot line (/etc/dracut.conf.d/90-gpuvm.conf:$ln)"
	bootjson read
	# /usr/lib's file of the same name is not read: /etc's overrides it
	printf 'kernel_cmdline="rd.gpuvm.mode=vm-vgpu"\n' >"$u/90-gpuvm.conf"
	gv config set mode=vm-passthrough
	assert_success
	rm "$d/90-gpuvm.conf"
	gv config set mode=container
	assert_failure 6
	assert_line "next boot: pinned: gpuvm.mode=vm-vgpu on the boot line (/usr/lib/dracut/dracut.conf.d/90-gpuvm.conf:1)"
	# = replaces, += appends, in order: /etc/dracut.conf, then the folders' files by name
	rm "$u/90-gpuvm.conf"
	printf 'hostonly="yes"\nkernel_cmdline="rd.gpuvm.mode=vm-vgpu"\n' >"$ROOT/etc/dracut.conf"
	printf 'kernel_cmdline+=" quiet "\n' >"$u/10-quiet.conf"
	gv config set mode=container
	assert_failure 6
	assert_line "next boot: pinned: gpuvm.mode=vm-vgpu on the boot line (/etc/dracut.conf:2)"
	printf 'kernel_cmdline=""\n' >"$d/20-none.conf"
	gv config set mode=container
	assert_success
	assert_line "$READS"
	# what bash alone could tell: unknown, said
	printf 'kernel_cmdline+=" $(cat /etc/extra)"\n' >"$d/30-extra.conf"
	gv config set mode=container
	assert_success
	assert_line "next boot: unknown: kernel_cmdline at /etc/dracut.conf.d/30-extra.conf:1 is not a value gpuvm reads (it uses \$, \` or more of sh)"
	# += to a value not read is not read either
	printf 'kernel_cmdline+=" rd.gpuvm.exclude=0000:41:00.0"\n' >"$d/40-exclude.conf"
	gv config set mode=container
	assert_line "next boot: unknown: kernel_cmdline at /etc/dracut.conf.d/40-exclude.conf:1 is not a value gpuvm reads (it uses \$, \` or more of sh)"
}

@test "a UKI's .cmdline (/boot/EFI/Linux, /efi/EFI/Linux, /boot/efi/EFI/Linux): read as the boot line" {
	local u=$ROOT/boot/efi/EFI/Linux/$RH-5.14.0-427.el9.x86_64.efi
	bootjson read
	uki "$u" 'root=/dev/mapper/rhel-root ro gpuvm.mode=vm-vgpu'
	if command -v objdump >/dev/null; then
		objdump -h "$u" | grep -q 'file format pei-x86-64'
		objdump -h "$u" | grep -q ' \.cmdline '
	fi
	gv config set mode=container
	assert_failure 6
	assert_line "next boot: pinned: gpuvm.mode=vm-vgpu on the boot line (/boot/efi/EFI/Linux/$RH-5.14.0-427.el9.x86_64.efi)"
	gv config set mode=vm-vgpu
	assert_success
	assert_line "next boot: pinned: gpuvm.mode=vm-vgpu on the boot line (/boot/efi/EFI/Linux/$RH-5.14.0-427.el9.x86_64.efi)"
	# no .cmdline: the stub takes the loader's line, which gpuvm reads where it is
	uki "$u" -
	gv config set mode=container
	assert_success
	assert_line "$READS"
	# kernel-install's uki layout on /boot, systemd-boot's ESP at /efi; e_lfanew further on
	uki "$ROOT/boot/EFI/Linux/a.efi" 'quiet rd.gpuvm.exclude=0000:41:00.0' 1024
	uki "$ROOT/efi/EFI/Linux/b.efi" 'rd.gpuvm.mode=vm-passthrough quiet'
	gv config set mode=container
	assert_failure 6
	assert_line "next boot: pinned: gpuvm.mode=vm-passthrough on the boot line (/efi/EFI/Linux/b.efi)"
	gv config set exclude=0000:42:00.0
	assert_line "next boot: pinned: gpuvm.exclude=0000:41:00.0 on the boot line (/boot/EFI/Linux/a.efi)"
	rm "$ROOT/efi/EFI/Linux/b.efi" "$ROOT/boot/EFI/Linux/a.efi"
	# binutils' PE writer (dracut --uefi's way before ukify) adding the section: read alike
	if command -v objcopy >/dev/null; then
		printf 'quiet rd.gpuvm.mode=vm-passthrough\n' >"$BATS_TEST_TMPDIR/cmdline"
		objcopy --add-section .cmdline="$BATS_TEST_TMPDIR/cmdline" --change-section-vma .cmdline=0x50000 \
			"$u" "$ROOT/boot/efi/EFI/Linux/c.efi" 2>/dev/null
		gv config set mode=container
		assert_failure 6
		assert_line "next boot: pinned: gpuvm.mode=vm-passthrough on the boot line (/boot/efi/EFI/Linux/c.efi)"
	fi
}

@test "a UKI gpuvm cannot read (no PE image, headers past 4 KiB, cut short, .cmdline over 64 KiB): unknown, said" {
	local u=$ROOT/boot/efi/EFI/Linux/x.efi
	bootjson read
	mkdir -p "$(dirname "$u")"
	printf 'not a PE image\n' >"$u"
	gv config set mode=container
	assert_success
	assert_line "next boot: unknown: /boot/efi/EFI/Linux/x.efi cannot be read: Exec format error"
	uki "$u" 'gpuvm.mode=vm-vgpu' 3900
	gv config set mode=container
	assert_line "next boot: unknown: /boot/efi/EFI/Linux/x.efi cannot be read: Exec format error"
	uki "$u" 'gpuvm.mode=vm-vgpu'
	truncate -s 1030 "$u" # its .cmdline (19 bytes at 1024) cut short
	gv config set mode=container
	assert_line "next boot: unknown: /boot/efi/EFI/Linux/x.efi cannot be read: Exec format error"
	uki "$u" "$(head -c 70000 /dev/zero | tr '\0' x) gpuvm.mode=vm-vgpu"
	gv config set mode=container
	assert_success
	assert_line "next boot: unknown: /boot/efi/EFI/Linux/x.efi cannot be read: File too large"
}

@test "reboot: this boot's mode (the state file) against the file's; other keys at the next boot" {
	bootjson read
	gv config set mode=vm-passthrough
	assert_equal "${lines[1]}" "reboot: unknown: no /run/gpuvm/state.json: gpuvm has not run in this boot"
	printf '{"version":"0.1.0","command":"apply","result":"ok","mode":"container"}\n' >"$ROOT/run/gpuvm/state.json"
	gv config set mode=vm-passthrough
	assert_equal "${lines[1]}" "reboot: needed: this boot runs container, the file says vm-passthrough"
	gv config set mode=container
	assert_equal "${lines[1]}" "reboot: none: this boot runs container already"
	gv config set nvidia.com/gpu.workload.config=vm-vgpu
	assert_equal "${lines[1]}" "reboot: needed: this boot runs container, the file says vm-vgpu"
	gv config set exclude=0000:41:00.0
	assert_equal "${lines[1]}" "reboot: needed: takes effect at the next boot"
}

@test "check words the next boot as config set does, for the checked mode" {
	gv check --mode vm-passthrough
	assert_line "next boot: unknown: no /run/gpuvm/boot.json: gpuvm did not run in this boot's initramfs (not installed then, or not in the image)"
	gv check --mode vm-passthrough --json
	[ "$(jqr '.next_boot | [.verdict, .says] | join("|")')" = "unknown|unknown: no /run/gpuvm/boot.json: gpuvm did not run in this boot's initramfs (not installed then, or not in the image)" ]
	[ "$(jqr '[.findings[] | select(.what | test("next boot"))] | length')" = 0 ]
	bootjson read
	gv check --mode container
	assert_line "${READS}"
	gv check --mode vm-passthrough --json
	[ "$(jqr '.next_boot.verdict')" = reads ]
}

@test "--config names another file: unknown for it" {
	bootjson read
	gv --config "$BATS_TEST_TMPDIR/other.conf" config set mode=vm-passthrough
	assert_success
	assert_line "next boot: unknown: $BATS_TEST_TMPDIR/other.conf is not the file the next boot reads (/etc/gpuvm/gpuvm.conf)"
}

@test "the GRUB defaults set gpuvm.gpus=: pinned, exit 6 for another selection; the same entries in another order apply; status and check say it" {
	bootjson read
	mkdir -p "$ROOT/etc/default"
	printf 'GRUB_CMDLINE_LINUX="intel_iommu=on gpuvm.gpus=0000:41:00.0,numa:1"\n' >"$ROOT/etc/default/grub"
	gv config set gpus=0000:42:00.0
	assert_failure 6
	assert_line "next boot: pinned: gpuvm.gpus=0000:41:00.0,numa:1 on the boot line (/etc/default/grub:1)"
	[ "$(cat "$CONF")" = gpus=0000:42:00.0 ]
	# the same entries, in another order and with the domain left out: they apply (exit 0)
	gv config set gpus=numa:1,41:00.0
	assert_success
	assert_line "next boot: pinned: gpuvm.gpus=0000:41:00.0,numa:1 on the boot line (/etc/default/grub:1)"
	gv config set gpus=0000:42:00.0
	assert_failure 6
	gv status
	assert_line "next boot (gpus=): pinned: gpuvm.gpus=0000:41:00.0,numa:1 on the boot line (/etc/default/grub:1)"
	nb '[.gpus.verdict, .gpus.value] | join("|")'
	[ "$output" = '"pinned|0000:41:00.0,numa:1"' ]
	gv check --mode vm-passthrough
	assert_failure 1
	assert_output --partial "ERROR    next boot (gpus=): pinned: gpuvm.gpus=0000:41:00.0,numa:1 on the boot line (/etc/default/grub:1), not gpus=0000:42:00.0"
	assert_output --partial "fix: remove gpuvm.gpus= from /etc/default/grub:1"
	# no gpus= on the boot line: the file's selection is read, and mode= is judged as before
	printf 'GRUB_CMDLINE_LINUX="intel_iommu=on"\n' >"$ROOT/etc/default/grub"
	gv config set gpus=0000:42:00.0
	assert_success
	assert_line --partial "next boot: reads the file: "
	gv status
	assert_line --partial "next boot (gpus=): reads the file: "
	assert_line "$READS"
}
