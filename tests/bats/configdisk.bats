#!/usr/bin/env bats
# shellcheck disable=SC2154 # $stderr and $output are set by bats' run
# config= on a disk, under --root: libblkid probes real file system images (made here
# without root privileges: mkfs.ext4, mkfs.vfat and sfdisk on plain files) that stand for the
# block devices of ROOT/proc/partitions as ROOT/dev/NAME. --root mounts nothing, so a config
# found on a disk is reported and not used; mounting and reading are proven in QEMU
# (tests/e2e/scenarios/config-disk*.sh) and the reading rules in tests/unit/test-blkdev.c.
# The hold-then-decide protocol (apply --defer / --resume, /run/gpuvm/pending) is all here.

load helpers

GPU=0000:01:00.0

setup() {
	for t in mkfs.ext4 mkfs.vfat sfdisk; do
		need "$t" command -v "$t"
	done
	mkfx workstation
	mkdir -p "$ROOT/dev" "$ROOT/etc/gpuvm"
	printf 'major minor  #blocks  name\n\n' >"$ROOT/proc/partitions"
	# The boot's first call runs before udev: no GPU driver has the GPU yet.
	nodriver $GPU
}

# disk NAME [mkfs.ext4 options…]: an ext4 image as ROOT/dev/NAME, listed in /proc/partitions.
disk() {
	local name=$1
	shift
	truncate -s 8M "$ROOT/dev/$name"
	mkfs.ext4 -q -F "$@" "$ROOT/dev/$name"
	listed "$name"
}
listed() {
	printf ' 254 %5d       8192 %s\n' "$(wc -l <"$ROOT/proc/partitions")" "$1" >>"$ROOT/proc/partitions"
}
override() {
	cat "$ROOT/sys/bus/pci/devices/$1/driver_override"
}

@test "LABEL=: found by libblkid on an ext4 image, reported, not mounted under --root" {
	disk vda -L other
	disk vdb -L gpuvm-conf
	gv --cmdline "gpuvm.config=LABEL=gpuvm-conf" --json plan
	assert_success
	[ "$(jqr .config_disk.status)" = fallback ]
	[ "$(jqr .config_disk.device)" = /dev/vdb ]
	[ "$(jqr .config_disk.fstype)" = ext4 ]
	[ "$(jqr .config_disk.reason)" = "LABEL=gpuvm-conf:/etc/gpuvm/gpuvm.conf: found on /dev/vdb (ext4); --root mounts no file system" ]
	[ "$(jqr .settings.config.source)" = cmdline ]
	assert_regex "$stderr" "error: config: LABEL=gpuvm-conf:/etc/gpuvm/gpuvm.conf: found on /dev/vdb \(ext4\); --root mounts no file system; using the kernel command line and the defaults"
}

@test "UUID=: matched without regard to case; the path after ':' is kept" {
	disk vdb -U 3f1c2a9e-5b7d-4e21-9c0a-1d2e3f405162
	gv --cmdline "gpuvm.config=UUID=3F1C2A9E-5B7D-4E21-9C0A-1D2E3F405162:/gpuvm/host.conf" --json plan
	[ "$(jqr .config_disk.device)" = /dev/vdb ]
	[ "$(jqr .config_disk.reason)" = "UUID=3F1C2A9E-5B7D-4E21-9C0A-1D2E3F405162:/gpuvm/host.conf: found on /dev/vdb (ext4); --root mounts no file system" ]
}

@test "PARTUUID= and PARTLABEL=: through the disk's GPT to its partition, vfat there" {
	truncate -s 40M "$ROOT/dev/vdb"
	printf 'label: gpt\nstart=2048, size=61440, type=linux, uuid=6a1c1b5e-0f4e-4d38-9a55-2d9b3c1e7f10, name=gpuvm-conf\n' |
		sfdisk -q "$ROOT/dev/vdb" >/dev/null
	listed vdb
	truncate -s 30M "$ROOT/dev/vdb1" # the partition, as its own device
	mkfs.vfat -n GPUVM "$ROOT/dev/vdb1" >/dev/null
	listed vdb1
	gv --cmdline "gpuvm.config=PARTUUID=6A1C1B5E-0F4E-4D38-9A55-2D9B3C1E7F10" --json plan
	[ "$(jqr .config_disk.device)" = /dev/vdb1 ]
	[ "$(jqr .config_disk.fstype)" = vfat ]
	gv --cmdline "gpuvm.config=PARTLABEL=gpuvm-conf:/gpuvm.conf" --json plan
	[ "$(jqr .config_disk.device)" = /dev/vdb1 ]
	# A partition the kernel has not made (not in /proc/partitions) is not there.
	sed -i '/ vdb1$/d' "$ROOT/proc/partitions"
	gv --cmdline "gpuvm.config=PARTLABEL=gpuvm-conf" --json plan
	[ "$(jqr .config_disk.reason)" = "PARTLABEL=gpuvm-conf:/etc/gpuvm/gpuvm.conf: no such device" ]
}

@test "a tag that two devices carry is refused, naming both" {
	disk vdb -L gpuvm-conf
	disk vdc -L gpuvm-conf
	gv --cmdline "gpuvm.config=LABEL=gpuvm-conf" --json plan
	[ "$(jqr .config_disk.status)" = fallback ]
	[ "$(jqr .config_disk.reason)" = "LABEL=gpuvm-conf:/etc/gpuvm/gpuvm.conf: 2 devices carry it (/dev/vdb, /dev/vdc): none taken; name one by UUID=" ]
	# A third: named by count; the advice holds for all three.
	disk vdd -L gpuvm-conf
	gv --cmdline "gpuvm.config=LABEL=gpuvm-conf" --json plan
	[ "$(jqr .config_disk.reason)" = "LABEL=gpuvm-conf:/etc/gpuvm/gpuvm.conf: 3 devices carry it (/dev/vdb, /dev/vdc and 1 more): none taken; name one by UUID=" ]
}

@test "one UUID on two devices: the file systems are clones; the advice fits what tells them apart" {
	local uuid=3f1c2a9e-5b7d-4e21-9c0a-1d2e3f405162
	disk vdb -U $uuid -L gpuvm-conf
	cp "$ROOT/dev/vdb" "$ROOT/dev/vdc"
	listed vdc
	gv --cmdline "gpuvm.config=UUID=$uuid" --json plan
	[ "$(jqr .config_disk.status)" = fallback ]
	[ "$(jqr .config_disk.reason)" = "UUID=$uuid:/etc/gpuvm/gpuvm.conf: 2 devices carry it (/dev/vdb, /dev/vdc): the file systems are clones; none taken; name one by its /dev path" ]
	# The same label and UUID, cloned into partitions of two disks with their own tables.
	: >"$ROOT/proc/partitions"
	for d in vdd vde; do
		truncate -s 16M "$ROOT/dev/$d"
		printf 'label: gpt\nstart=2048, size=16384, type=linux, name=conf-%s\n' $d |
			sfdisk -q "$ROOT/dev/$d" >/dev/null
		listed $d
		cp "$ROOT/dev/vdb" "$ROOT/dev/${d}1"
		listed "${d}1"
	done
	gv --cmdline "gpuvm.config=UUID=$uuid" --json plan
	[ "$(jqr .config_disk.reason)" = "UUID=$uuid:/etc/gpuvm/gpuvm.conf: 2 devices carry it (/dev/vdd1, /dev/vde1): the file systems are clones; none taken; name one by PARTUUID= or PARTLABEL=" ]
	gv --cmdline "gpuvm.config=LABEL=gpuvm-conf" --json plan
	[ "$(jqr .config_disk.reason)" = "LABEL=gpuvm-conf:/etc/gpuvm/gpuvm.conf: 2 devices carry it (/dev/vdd1, /dev/vde1): the file systems are clones; none taken; name one by PARTUUID= or PARTLABEL=" ]
	# A cloned disk: one PARTUUID twice, and nothing tells the two apart.
	cp "$ROOT/dev/vdd" "$ROOT/dev/vde"
	gv --cmdline "gpuvm.config=PARTLABEL=conf-vdd" --json plan
	[ "$(jqr .config_disk.reason)" = "PARTLABEL=conf-vdd:/etc/gpuvm/gpuvm.conf: 2 devices carry it (/dev/vdd1, /dev/vde1): the file systems are clones; none taken; name one by its /dev path" ]
}

@test "multipath: the paths of one LUN and the map over them carry the tag; the map is taken" {
	local uuid=3f1c2a9e-5b7d-4e21-9c0a-1d2e3f405162 d
	disk sda -U $uuid
	cp "$ROOT/dev/sda" "$ROOT/dev/sdb"
	listed sdb
	# Before multipathd makes the map, the two paths are two devices.
	gv --cmdline "gpuvm.config=UUID=$uuid" --json plan
	[ "$(jqr .config_disk.reason)" = "UUID=$uuid:/etc/gpuvm/gpuvm.conf: 2 devices carry it (/dev/sda, /dev/sdb): the file systems are clones; none taken; name one by its /dev path" ]
	cp "$ROOT/dev/sda" "$ROOT/dev/dm-0"
	listed dm-0
	d=$ROOT/sys/devices/virtual/block/dm-0
	mkdir -p "$d/dm" "$d/slaves" "$ROOT/sys/class/block"
	ln -s ../../devices/virtual/block/dm-0 "$ROOT/sys/class/block/dm-0"
	echo mpath-3600a098038303053453f463045727a4b >"$d/dm/uuid"
	ln -s ../../sda "$d/slaves/sda"
	ln -s ../../sdb "$d/slaves/sdb"
	gv --cmdline "gpuvm.config=UUID=$uuid" --json plan
	[ "$(jqr .config_disk.device)" = /dev/dm-0 ]
	[ "$(jqr .config_disk.reason)" = "UUID=$uuid:/etc/gpuvm/gpuvm.conf: found on /dev/dm-0 (ext4); --root mounts no file system" ]
	# An LVM volume over the same devices is not a multipath map: not guessed.
	echo LVM-Xc2kq0OedG1m0d5cLJ1Rb2TH9uYJvR3YbhbCAk1H6sSUDvHcW6FeWmNqP3MtM5ET >"$d/dm/uuid"
	gv --cmdline "gpuvm.config=UUID=$uuid" --json plan
	[ "$(jqr .config_disk.reason)" = "UUID=$uuid:/etc/gpuvm/gpuvm.conf: 3 devices carry it (/dev/sda, /dev/sdb and 1 more): the file systems are clones; none taken; name one by its /dev path" ]
}

@test "a removable device is not taken for a tag, and the reason says so" {
	disk vdb -L gpuvm-conf
	mkdir -p "$ROOT/sys/class/block/vdb"
	echo 1 >"$ROOT/sys/class/block/vdb/removable"
	gv --cmdline "gpuvm.config=LABEL=gpuvm-conf" --json plan
	[ "$(jqr .config_disk.reason)" = "LABEL=gpuvm-conf:/etc/gpuvm/gpuvm.conf: no such device (removable devices are not taken)" ]
	# A second, fixed device with the label is taken: the removable one does not make it ambiguous.
	disk vdc -L gpuvm-conf
	gv --cmdline "gpuvm.config=LABEL=gpuvm-conf" --json plan
	[ "$(jqr .config_disk.device)" = /dev/vdc ]
}

@test "a device path: no file system on it, or no such device" {
	head -c 1M /dev/urandom >"$ROOT/dev/vdb"
	gv --cmdline "gpuvm.config=/dev/vdb" --json plan
	[ "$(jqr .config_disk.reason)" = "/dev/vdb:/etc/gpuvm/gpuvm.conf: libblkid finds no file system on /dev/vdb" ]
	gv --cmdline "gpuvm.config=/dev/vdz:/x.conf" --json plan
	[ "$(jqr .config_disk.reason)" = "/dev/vdz:/x.conf: no such device" ]
	mkdir "$ROOT/dev/vdd"
	gv --cmdline "gpuvm.config=/dev/vdd" --json plan
	[ "$(jqr .config_disk.reason)" = "/dev/vdd:/etc/gpuvm/gpuvm.conf: not a block device" ]
}

@test "bad config= values: the error names the source, the key and what is wrong; no disk is looked for" {
	gv --cmdline "gpuvm.config=LABLE=x" plan
	assert_success
	assert_regex "$stderr" "cmdline: config: invalid value 'LABLE=x' at 'expected LABEL=, UUID=, PARTUUID=, PARTLABEL= or a /dev/ path'"
	# The text plan's "config:" line appears only when a disk was looked for.
	assert_line --regexp '^mode: container \(from default\)'
	refute_line --regexp '^config:'
	gv --cmdline "gpuvm.config=LABEL=x:/etc/../etc/gpuvm.conf" plan
	assert_regex "$stderr" "config: invalid value .* at 'the path in the file system has an empty, '.' or '..' component'"
	gv --cmdline "gpuvm.config=/dev/../etc/shadow" plan
	assert_regex "$stderr" "a device path must be under /dev/, without '..' or blanks"
	printf 'config=UUID=\n' >"$ROOT/etc/gpuvm/gpuvm.conf"
	gv plan
	assert_regex "$stderr" "/etc/gpuvm/gpuvm.conf:1: config: invalid value 'UUID=' at 'an empty value'"
	gv --cmdline "gpuvm.config_timeout=3601" plan
	assert_regex "$stderr" "config_timeout: invalid value '3601' \(expected seconds, 0 to 3600\)"
}

@test "apply --defer: the disk is not there, the GPU is held, the wait recorded, exit status 5" {
	gv --cmdline "gpuvm.config=LABEL=gpuvm-conf gpuvm.config_timeout=30" apply --defer
	[ "$status" -eq 5 ]
	[ "$(override $GPU)" = gpuvm-hold ]
	[ -z "$(cat "$ROOT/sys/bus/pci/drivers/nouveau/unbind")" ]
	# The audio function of the GPU is not held: only what a VM mode selects.
	[ "$(override 0000:01:00.1)" = "(null)" ]
	grep -qx "held=$GPU" "$ROOT/run/gpuvm/pending"
	grep -Eqx 'deadline_ms=[0-9]+' "$ROOT/run/gpuvm/pending"
	output=$(cat "$ROOT/run/gpuvm/state.json")
	[ "$(jqr .result)" = waiting ]
	[ "$(jqr .config_disk.status)" = waiting ]
	[ "$(jqr .config_disk.timeout_s)" = 30 ]
	[ "$(dev_field $GPU action)" = hold ]
	[ "$(dev_field $GPU target)" = gpuvm-hold ]
	assert_regex "$stderr" "config=LABEL=gpuvm-conf: not there yet; 1 GPU held, waiting up to 30 s for it"
}

@test "apply --defer that cannot record the wait holds nothing: the line decides now, exit 1" {
	rm -rf "$ROOT/run/gpuvm"
	: >"$ROOT/run/gpuvm"
	gv --cmdline "gpuvm.config=LABEL=gpuvm-conf" apply --defer
	[ "$status" -eq 1 ]
	[ "$(override $GPU)" = "(null)" ]
	assert_regex "$stderr" "error: cannot write /run/gpuvm/pending: a component of its path is not a directory; nothing is held: the kernel command line and the defaults decide now"
	gv --cmdline "gpuvm.config=LABEL=gpuvm-conf gpuvm.mode=vm-passthrough" apply --defer
	[ "$status" -eq 1 ]
	[ "$(override $GPU)" = vfio-pci ]
}

@test "apply --resume before the deadline changes nothing and exits 5; a second --defer keeps the deadline" {
	gv --cmdline "gpuvm.config=LABEL=gpuvm-conf" apply --defer
	[ "$status" -eq 5 ]
	pending=$(cat "$ROOT/run/gpuvm/pending")
	state=$(cat "$ROOT/run/gpuvm/state.json")
	: >"$ROOT/sys/bus/pci/drivers_probe"
	gv --cmdline "gpuvm.config=LABEL=gpuvm-conf" apply --resume
	[ "$status" -eq 5 ]
	[ -z "$stderr" ]
	[ "$(cat "$ROOT/run/gpuvm/state.json")" = "$state" ]
	[ -z "$(cat "$ROOT/sys/bus/pci/drivers_probe")" ]
	gv --cmdline "gpuvm.config=LABEL=gpuvm-conf" apply --defer
	[ "$status" -eq 5 ]
	[ "$(grep deadline_ms "$ROOT/run/gpuvm/pending")" = "$(printf '%s\n' "$pending" | grep deadline_ms)" ]
}

@test "apply --resume after the deadline falls back, releases the held GPU, removes the record" {
	gv --cmdline "gpuvm.config=LABEL=gpuvm-conf gpuvm.config_timeout=30" apply --defer
	[ "$status" -eq 5 ]
	sed -i 's/^deadline_ms=.*/deadline_ms=1/' "$ROOT/run/gpuvm/pending"
	gv --cmdline "gpuvm.config=LABEL=gpuvm-conf gpuvm.config_timeout=30" apply --resume
	assert_success
	[ ! -e "$ROOT/run/gpuvm/pending" ]
	[ "$(override $GPU)" = "" ]
	output=$(cat "$ROOT/run/gpuvm/state.json")
	[ "$(jqr .config_disk.status)" = fallback ]
	[ "$(jqr .config_disk.reason)" = "LABEL=gpuvm-conf:/etc/gpuvm/gpuvm.conf: no such device after waiting 30 s" ]
	[ "$(jqr .mode)" = container ]
	[ "$(dev_field $GPU action)" = unbind ]
	[ "$(dev_field $GPU driver_override)" = gpuvm-hold ]
	assert_regex "$(dev_field $GPU reason)" "held while gpuvm waited for its config; released to the host driver"
	assert_regex "$stderr" "error: config: LABEL=gpuvm-conf:/etc/gpuvm/gpuvm.conf: no such device after waiting 30 s; using the kernel command line and the defaults"
	# Nothing pending any more: --resume does nothing.
	gv --cmdline "gpuvm.config=LABEL=gpuvm-conf" apply --resume
	assert_success
	[ -z "$stderr" ]
}

@test "a deadline past the longest config_timeout is not believed: --resume decides, --defer sets its own" {
	local far=99999999999999 up d
	gv --cmdline "gpuvm.config=LABEL=gpuvm-conf" apply --defer
	[ "$status" -eq 5 ]
	# within the bound (now + 3000 s; CLOCK_BOOTTIME is /proc/uptime's clock): still waited for
	up=$(cut -d. -f1 /proc/uptime)
	sed -i "s/^deadline_ms=.*/deadline_ms=$(((up + 3000) * 1000))/" "$ROOT/run/gpuvm/pending"
	gv --cmdline "gpuvm.config=LABEL=gpuvm-conf" apply --resume
	[ "$status" -eq 5 ]
	# past it (a record written by hand, or corrupted): a second first call sets its own
	sed -i "s/^deadline_ms=.*/deadline_ms=$far/" "$ROOT/run/gpuvm/pending"
	gv --cmdline "gpuvm.config=LABEL=gpuvm-conf gpuvm.config_timeout=30" apply --defer
	[ "$status" -eq 5 ]
	assert_regex "$stderr" "error: /run/gpuvm/pending: its deadline is [0-9]+ s ahead, past the longest config_timeout \(3600 s\): taken as over"
	d=$(sed -n 's/^deadline_ms=//p' "$ROOT/run/gpuvm/pending")
	up=$(cut -d. -f1 /proc/uptime)
	[ "$d" -le $(((up + 32) * 1000)) ]
	# and the last calls decide at once, releasing the hold: the boot does not wait for ever
	sed -i "s/^deadline_ms=.*/deadline_ms=$far/" "$ROOT/run/gpuvm/pending"
	gv --cmdline "gpuvm.config=LABEL=gpuvm-conf" apply --resume
	assert_success
	assert_regex "$stderr" "error: /run/gpuvm/pending: its deadline is [0-9]+ s ahead, past the longest config_timeout \(3600 s\): taken as over"
	[ ! -e "$ROOT/run/gpuvm/pending" ]
	[ "$(override $GPU)" = "" ]
}

@test "at boot the image's config is not read: the fallback is the command line and the defaults" {
	printf 'config=LABEL=gpuvm-conf\nmode=vm-passthrough\n' >"$ROOT/etc/gpuvm/gpuvm.conf"
	gv --cmdline "gpuvm.config=LABEL=gpuvm-conf" apply --defer
	[ "$status" -eq 5 ]
	[ "$(override $GPU)" = gpuvm-hold ]
	assert_regex "$stderr" "/etc/gpuvm/gpuvm.conf in this initramfs is ignored"
	sed -i 's/^deadline_ms=.*/deadline_ms=1/' "$ROOT/run/gpuvm/pending"
	gv --cmdline "gpuvm.config=LABEL=gpuvm-conf" apply --resume
	assert_success
	[ "$(override $GPU)" = "" ]
	[ "$(override 0000:01:00.1)" = "(null)" ]
	assert_regex "$stderr" "using the kernel command line and the defaults"
}

@test "a held GPU that the decided settings no longer select is released" {
	gv --cmdline "gpuvm.config=LABEL=gpuvm-conf" apply --defer
	[ "$status" -eq 5 ]
	sed -i 's/^deadline_ms=.*/deadline_ms=1/' "$ROOT/run/gpuvm/pending"
	gv --cmdline "gpuvm.config=LABEL=gpuvm-conf gpuvm.mode=vm-passthrough gpuvm.exclude=$GPU" --json apply --resume
	[ "$(override $GPU)" = "" ]
	[ "$(dev_field $GPU role)" = excluded ]
	[ "$(dev_field $GPU action)" = unbind ]
	assert_regex "$(dev_field $GPU reason)" "^excluded by exclude= \(cmdline\); held while gpuvm waited for its config: released$"
}

@test "a disk that is there but cannot be used is decided at once: no hold, no record" {
	disk vdb -L gpuvm-conf
	gv --cmdline "gpuvm.config=LABEL=gpuvm-conf" apply --defer
	assert_success
	[ ! -e "$ROOT/run/gpuvm/pending" ]
	[ "$(override $GPU)" = "(null)" ]
	output=$(cat "$ROOT/run/gpuvm/state.json")
	[ "$(jqr .config_disk.status)" = fallback ]
}

@test "config_timeout=0: no wait at all; rd.retry sets the default wait to half of it" {
	gv --cmdline "gpuvm.config=LABEL=gpuvm-conf gpuvm.config_timeout=0" apply --defer
	assert_success
	[ ! -e "$ROOT/run/gpuvm/pending" ]
	[ "$(override $GPU)" = "(null)" ]
	gv --cmdline "gpuvm.config=LABEL=gpuvm-conf rd.retry=20" apply --defer
	[ "$status" -eq 5 ]
	output=$(cat "$ROOT/run/gpuvm/state.json")
	[ "$(jqr .config_disk.timeout_s)" = 10 ]
	gv --cmdline "gpuvm.config=LABEL=gpuvm-conf" --json plan
	[ "$(jqr .config_disk.timeout_s)" = 90 ]
}

@test "plain apply never waits: an absent disk falls back at once" {
	gv --cmdline "gpuvm.config=LABEL=gpuvm-conf gpuvm.mode=vm-passthrough" apply
	assert_success
	[ ! -e "$ROOT/run/gpuvm/pending" ]
	[ "$(override $GPU)" = vfio-pci ]
	assert_regex "$stderr" "config: LABEL=gpuvm-conf:/etc/gpuvm/gpuvm.conf: no such device; using"
}

@test "--defer and --resume: only for apply, not together, not with --dry-run" {
	gv plan --defer
	[ "$status" -eq 2 ]
	gv apply --defer --resume
	[ "$status" -eq 2 ]
	gv apply --resume --dry-run
	[ "$status" -eq 2 ]
	assert_regex "$stderr" "exclude each other"
}

@test "config set knows when the next boot reads the host config from a disk: unknown for the root's file" {
	mkdir -p "$ROOT/proc/sys/kernel/random" "$ROOT/run/gpuvm"
	printf 'mode=container\n' >"$ROOT/etc/gpuvm/gpuvm.conf"
	echo 5e1f0c3e-4b1a-4c5e-9f6d-2a7b3c4d5e6f >"$ROOT/proc/sys/kernel/random/boot_id"
	printf '{"boot": {"boot_id": "5e1f0c3e-4b1a-4c5e-9f6d-2a7b3c4d5e6f", "stage": "disk", "host_config": "disk"}}\n' \
		>"$ROOT/run/gpuvm/boot.json"
	gv config set mode=vm-passthrough
	assert_success
	assert_line "next boot: unknown: this boot read the host config from config='s disk (/run/gpuvm/boot.json: host_config disk): the file here is not what the boot reads"
	refute_output --partial "initramfs rebuild:"
	# the root's file says config= itself
	printf '{"boot": {"boot_id": "5e1f0c3e-4b1a-4c5e-9f6d-2a7b3c4d5e6f", "stage": "root", "host_config": "read"}}\n' \
		>"$ROOT/run/gpuvm/boot.json"
	gv config set config=UUID=0b1e
	assert_success
	assert_line "next boot: unknown: the file says config=UUID=0b1e: the next boot reads the host config from that disk, not this file"
}

@test "apply --resume that decides removes the record even when config= is gone from its settings" {
	gv --cmdline "gpuvm.config=LABEL=gpuvm-conf" apply --defer
	[ "$status" -eq 5 ]
	gv --cmdline "" apply --resume
	assert_success
	[ ! -e "$ROOT/run/gpuvm/pending" ]
	# The hold is released all the same: the plan releases what it does not keep.
	[ "$(override $GPU)" = "" ]
}
