#!/usr/bin/env bats
# shellcheck disable=SC2154 # $stderr and $output are set by bats' run
# gpuvm config get|set: validated, atomic, keeps the file's shape, says when it takes effect.

load helpers

setup() {
	mkfx workstation
	CONF="$ROOT/etc/gpuvm/gpuvm.conf"
	mkdir -p "$ROOT/etc/gpuvm"
}

teardown() {
	if [ -n "${HOLDER-}" ]; then
		kill "$HOLDER" 2>/dev/null || true
		wait "$HOLDER" 2>/dev/null || true
	fi
}

@test "set creates the directory and the file with sane modes" {
	rm -rf "$ROOT/etc/gpuvm"
	gv config set mode=vm-passthrough
	assert_success
	assert_output --partial "/etc/gpuvm/gpuvm.conf: mode=vm-passthrough"
	[ "$(cat "$CONF")" = "mode=vm-passthrough" ]
	[ "$(stat -c %a "$CONF")" = 644 ]
	[ "$(stat -c %a "$ROOT/etc/gpuvm")" = 755 ]
	gv config get mode
	assert_success
	[ "$output" = vm-passthrough ]
}

@test "set keeps comments, order, other keys and the label spelling" {
	printf '# mirrored from the node label\nexclude=0000:41:00.0\nnvidia.com/gpu.workload.config=container\n\n# end\non_error=hold\n' >"$CONF"
	gv config set mode=vm-vgpu
	assert_success
	[ "$(cat "$CONF")" = "$(printf '# mirrored from the node label\nexclude=0000:41:00.0\nnvidia.com/gpu.workload.config=vm-vgpu\n\n# end\non_error=hold')" ]
	gv config set on-error=release
	assert_success
	grep -qx "on_error=release" "$CONF"
	gv config set nvswitch=vm
	[ "$(tail -n 1 "$CONF")" = "nvswitch=vm" ]
	gv config set nvswitch=vm
	assert_output --partial "(unchanged)"
}

@test "set refuses bad keys and values: exit 2, the file untouched" {
	printf 'mode=container\n' >"$CONF"
	gv config set mode=vm-passthru
	assert_failure 2
	assert_regex "$stderr" "mode: invalid value 'vm-passthru' \(expected container, vm-passthrough or vm-vgpu\)"
	gv config set colour=blue
	assert_failure 2
	gv config set mode
	assert_failure 2
	gv config frob mode
	assert_failure 2
	gv config set
	assert_failure 2
	[ "$(cat "$CONF")" = mode=container ]
}

@test "get of an unset key: its default said, exit 1; of an unknown key: the nearest named, exit 2" {
	printf 'mode=container\n' >"$CONF"
	gv config get exclude
	assert_failure 1
	[ "$output" = "(the default)" ]
	[ -z "$stderr" ]
	gv config get on-error
	assert_failure 1
	[ "$output" = "hold (the default)" ]
	gv config get write_timeout_ms
	assert_failure 1
	assert_output --regexp "^[0-9]+ \(the default\)$"
	# A fresh install: no file, no directory.
	rm -rf "$ROOT/etc/gpuvm"
	gv config get mode
	assert_failure 1
	[ "$output" = "container (the default)" ]
	[ -z "$stderr" ]
	# A value the file sets is the value alone, exit 0.
	mkdir -p "$ROOT/etc/gpuvm"
	printf 'mode=vm-vgpu\n' >"$CONF"
	gv config get mode
	assert_success
	[ "$output" = vm-vgpu ]
	# A bad value: the error, then what the boot takes instead.
	printf 'mode=vm-passthru\n' >"$CONF"
	gv config get mode
	assert_failure 1
	[ "$output" = "container (the default)" ]
	assert_regex "$stderr" "gpuvm.conf:1: mode: invalid value 'vm-passthru'"
	gv config get colour
	assert_failure 2
	[ -z "$output" ]
	assert_regex "$stderr" "^gpuvm: error: config get: unknown key 'colour' \(nearest: config\)$"
	gv config get mdoe
	assert_failure 2
	assert_regex "$stderr" "unknown key 'mdoe' \(nearest: mode\)$"
	gv config set exlcude=0000:01:00.0
	assert_failure 2
	assert_regex "$stderr" "^gpuvm: error: config set: unknown key 'exlcude' \(nearest: exclude\)$"
	[ "$(cat "$CONF")" = mode=vm-passthru ]
}

@test "set says a reboot is needed when the running boot is in another mode" {
	gv --cmdline "" apply
	[ "$(jq -r .mode "$ROOT/run/gpuvm/state.json")" = container ]
	gv --cmdline "" config set mode=vm-passthrough
	assert_line "reboot: needed: this boot runs container, the file says vm-passthrough"
	gv --cmdline "" config set mode=container
	assert_line "reboot: none: this boot runs container already"
	# this boot's line sets the mode, and no boot-loader file gpuvm reads does
	gv --cmdline "gpuvm.mode=vm-vgpu" config set mode=vm-passthrough
	assert_success
	assert_line "next boot: unknown: this boot's kernel command line has gpuvm.mode=vm-vgpu (/proc/cmdline) and no boot-loader file gpuvm reads sets it"
	# the dracut module installed: no rebuild is asked for any more (the image holds no config)
	mkdir -p "$ROOT/usr/lib/dracut/modules.d/90gpuvm" "$ROOT/etc/kernel/postinst.d"
	: >"$ROOT/etc/kernel/postinst.d/dracut"
	gv --cmdline "" config set mode=vm-passthrough
	assert_success
	refute_output --partial "initramfs rebuild"
	refute_output --partial "dracut -f"
}

@test "--file edits another file" {
	gv config set --file "$BATS_TEST_TMPDIR/x/other.conf" ids=10de:2204
	assert_success
	[ "$(cat "$BATS_TEST_TMPDIR/x/other.conf")" = ids=10de:2204 ]
}

@test "32 concurrent writers of different keys lose none and leave no partial file" {
	printf '# start\n' >"$CONF"
	for i in $(seq 1 8); do
		"$GPUVM" --root "$ROOT" config set mode=vm-vgpu >/dev/null &
		"$GPUVM" --root "$ROOT" config set on_error=release >/dev/null &
		"$GPUVM" --root "$ROOT" config set nvswitch=vm >/dev/null &
		"$GPUVM" --root "$ROOT" config set "exclude=0000:0$i:00.0" >/dev/null &
	done
	wait
	grep -qx "mode=vm-vgpu" "$CONF"
	grep -qx "on_error=release" "$CONF"
	grep -qx "nvswitch=vm" "$CONF"
	[ "$(grep -c '^exclude=0000:0[1-8]:00.0$' "$CONF")" = 1 ]
	[ "$(wc -l <"$CONF")" = 5 ]
	[ -z "$(find "$ROOT/etc/gpuvm" -name '.*tmp')" ]
}

@test "set refuses a config that is a symlink: exit 1, nothing copied from its target" {
	secret
	ln -s "$SECRET" "$CONF"
	gv config set mode=vm-passthrough
	assert_failure 1
	assert_regex "$stderr" "/etc/gpuvm/gpuvm.conf: not written: it is a symbolic link \(not followed\)"
	[ -L "$CONF" ]
	secret_intact
	[ -z "$(find "$ROOT/etc/gpuvm" -name '.*tmp')" ]
}

@test "set refuses a config that is a FIFO, without waiting on it" {
	mkfifo "$CONF"
	run --separate-stderr timeout 10 "$GPUVM" --root "$ROOT" config set mode=vm-passthrough
	assert_failure 1
	assert_regex "$stderr" "gpuvm.conf: not written: it is not a regular file"
	[ -p "$CONF" ]
}

@test "set refuses a config with another hard link: its bytes and mode are not copied" {
	secret
	ln "$SECRET" "$CONF"
	gv config set mode=vm-passthrough
	assert_failure 1
	assert_regex "$stderr" "gpuvm.conf: not written: it has more than one hard link"
	secret_intact
	[ "$(stat -c %i "$CONF")" = "$(stat -c %i "$SECRET")" ]
}

@test "set does not follow a symlinked /etc/gpuvm" {
	rm -rf "$ROOT/etc/gpuvm"
	mkdir "$BATS_TEST_TMPDIR/elsewhere"
	ln -s "$BATS_TEST_TMPDIR/elsewhere" "$ROOT/etc/gpuvm"
	gv config set mode=vm-passthrough
	assert_failure 1
	assert_regex "$stderr" "gpuvm.conf: not written: a directory on its path is a symbolic link \(not followed\)"
	[ -z "$(ls -A "$BATS_TEST_TMPDIR/elsewhere")" ]
}

# planted [-s]: config set with a hard link (or a symlink) to the secret planted at the name
# of its temporary; its PID is that of the shell, which execs it.
planted() {
	# shellcheck disable=SC2016 # expanded by the inner shell
	run --separate-stderr sh -c 'ln $1 "$2" "$3/.gpuvm.conf.$$.tmp" && exec "$4" --root "$5" config set mode=vm-vgpu' \
		sh "${1:-}" "$SECRET" "$ROOT/etc/gpuvm" "$GPUVM" "$ROOT"
}

@test "a planted temporary (hard link or symlink) is neither followed nor truncated" {
	secret
	printf 'mode=container\n' >"$CONF"
	planted
	assert_success
	secret_intact
	[ "$(cat "$CONF")" = mode=vm-vgpu ]
	[ "$(stat -c %h "$CONF")" = 1 ]
	printf 'mode=container\n' >"$CONF"
	planted -s
	assert_success
	secret_intact
	[ "$(cat "$CONF")" = mode=vm-vgpu ]
	[ ! -L "$CONF" ]
	[ -z "$(find "$ROOT/etc/gpuvm" -name '.*tmp')" ]
}

@test "set gives up on a lock held elsewhere after 5 s: exit 1, nothing written" {
	printf 'mode=container\n' >"$CONF"
	# The lock is a file of the directory, made 0600 by the first set and kept.
	gv config set mode=container
	assert_success
	LOCK=$ROOT/etc/gpuvm/.gpuvm.lock
	[ -f "$LOCK" ]
	[ ! -L "$LOCK" ]
	[ "$(stat -c %a:%u "$LOCK")" = 600:0 ]
	ino=$(stat -c %i "$LOCK")
	# util-linux flock holds it on descriptor 9 while gpuvm runs: another writer.
	exec 9<>"$LOCK"
	flock -x 9
	start=$(date +%s)
	run --separate-stderr timeout 12 "$GPUVM" --root "$ROOT" config set mode=vm-passthrough
	took=$(($(date +%s) - start))
	exec 9<&-
	assert_failure 1
	assert_regex "$stderr" "gpuvm.conf: not written: another process holds its lock file \.gpuvm\.lock \(waited 5 s\)"
	[ "$took" -ge 4 ]
	[ "$took" -le 10 ]
	[ "$(cat "$CONF")" = mode=container ]
	gv config set mode=vm-passthrough
	assert_success
	[ "$(stat -c %a:%i "$LOCK")" = "600:$ino" ] # kept across runs
}

@test "an unprivileged user's flock on the config's directory does not block set" {
	[ "$(id -u)" = 0 ] || skip "needs root (setpriv to another user)"
	command -v setpriv >/dev/null || skip "no setpriv (util-linux)"
	printf 'mode=container\n' >"$CONF"
	# /etc/gpuvm is world-readable: anyone can open it and flock it. The tree's directories
	# are made reachable for nobody, as / and /etc are.
	d=$ROOT/etc/gpuvm
	while [ "$d" != / ]; do
		chmod o+x "$d"
		d=$(dirname "$d")
	done
	chmod 0755 "$ROOT/etc/gpuvm"
	# setpriv ... flock -x DIR sleep 600, as one process (sleep holds the lock on descriptor
	# 9), in the background with its stdio and bats' descriptor 3 closed; teardown ends it.
	# shellcheck disable=SC2016 # expanded by the inner shell
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		sh -c 'exec 9<"$1" && flock -x 9 && exec sleep 600' sh "$ROOT/etc/gpuvm" \
		</dev/null >/dev/null 2>&1 3>&- &
	HOLDER=$!
	# until nobody holds it (a root flock -n on the directory fails then)
	for _ in $(seq 50); do
		flock -xn "$ROOT/etc/gpuvm" true || break
		sleep 0.1
	done
	run ! flock -xn "$ROOT/etc/gpuvm" true
	start=$(date +%s)
	run --separate-stderr timeout 12 "$GPUVM" --root "$ROOT" config set mode=vm-passthrough
	took=$(($(date +%s) - start))
	assert_success
	[ "$took" -le 3 ] # not the 5 s wait for a lock
	[ "$(cat "$CONF")" = mode=vm-passthrough ]
	# Nor can that user take the lock file: only root (who writes the directory) opens it.
	LOCK=$ROOT/etc/gpuvm/.gpuvm.lock
	[ "$(stat -c %a:%u "$LOCK")" = 600:0 ]
	run setpriv --reuid=65534 --regid=65534 --clear-groups flock -xn "$LOCK" true
	assert_failure
}

@test "a planted lock file (symlink, FIFO, directory, hard link) is refused, named; a loose one is made 0600" {
	secret
	printf 'mode=container\n' >"$CONF"
	LOCK=$ROOT/etc/gpuvm/.gpuvm.lock
	ln -s "$SECRET" "$LOCK"
	gv config set mode=vm-passthrough
	assert_failure 1
	assert_regex "$stderr" "gpuvm.conf: not written: its lock file \.gpuvm\.lock is a symbolic link \(not followed\)"
	secret_intact
	rm "$LOCK"
	ln -s "$BATS_TEST_TMPDIR/nowhere" "$LOCK"
	gv config set mode=vm-passthrough
	assert_failure 1
	[ ! -e "$BATS_TEST_TMPDIR/nowhere" ]
	rm "$LOCK"
	mkfifo "$LOCK"
	gv config set mode=vm-passthrough
	assert_failure 1
	assert_regex "$stderr" "gpuvm.conf: not written: its lock file \.gpuvm\.lock is not a regular file"
	rm "$LOCK"
	mkdir "$LOCK"
	gv config set mode=vm-passthrough
	assert_failure 1
	assert_regex "$stderr" "gpuvm.conf: not written: its lock file \.gpuvm\.lock is not a regular file"
	rmdir "$LOCK"
	ln "$SECRET" "$LOCK"
	gv config set mode=vm-passthrough
	assert_failure 1
	assert_regex "$stderr" "gpuvm.conf: not written: its lock file \.gpuvm\.lock has more than one hard link"
	secret_intact
	rm "$LOCK"
	[ "$(cat "$CONF")" = mode=container ]
	# One another writer left open to all: closed to others again.
	: >"$LOCK"
	chmod 0666 "$LOCK"
	gv config set mode=vm-passthrough
	assert_success
	[ "$(stat -c %a "$LOCK")" = 600 ]
	[ "$(cat "$CONF")" = mode=vm-passthrough ]
}

@test "what set stores, get reads back: blanks, controls, quotes, '#', lists, numbers" {
	printf 'mode=container\n' >"$CONF"
	nl='
'
	# KEY=VALUE given (printf %b escapes), then what get must print, or "refused" (exit 2,
	# the file as it was).
	while IFS='|' read -r given want; do
		given=$(printf '%b' "$given")
		key=${given%%=*}
		before=$(cat "$CONF")
		gv config set "$given"
		if [ "$want" = refused ]; then
			[ "$status" -eq 2 ] || { echo "'$given': exit $status, not refused: $output"; return 1; }
			[ "$(cat "$CONF")" = "$before" ] || { echo "'$given' changed the file"; return 1; }
			continue
		fi
		[ "$status" -eq 0 ] || { echo "'$given': exit $status: $stderr"; return 1; }
		stored=${output#*: "$key"=}
		stored=${stored%%"$nl"*}
		stored=${stored% (unchanged)}
		gv config get "$key"
		[ "$status" -eq 0 ] || { echo "get $key: exit $status: $stderr"; return 1; }
		[ "$output" = "$want" ] || { echo "'$given': get says '$output', want '$want'"; return 1; }
		[ "$stored" = "$want" ] || { echo "'$given': set says it stored '$stored', get '$want'"; return 1; }
	done <<'EOF'
config=LABEL=x |LABEL=x
config=  LABEL=x\t|LABEL=x
config=LABEL="my disk":/etc/other.conf|LABEL="my disk":/etc/other.conf
config=LABEL="my disk" |LABEL="my disk"
config=LABEL=a#b|LABEL=a#b
config=LABEL=#x|LABEL=#x
config=LABEL=x\nmode=vm-passthrough|refused
config=LABEL=a\tb|refused
config=LABEL=a\033[31m|refused
config=LABEL=caf\0303\0251|refused
config="LABEL=x"|refused
config='LABEL=x'|refused
config=|refused
config=   |refused
mode= vm-vgpu |vm-vgpu
mode=vm-vgpu\r|refused
mode=#vm-vgpu|refused
nvidia.com/gpu.workload.config=vm-passthrough|vm-passthrough
ids=10DE:2204 10de:*|10de:2204,10de:*
ids=10de:2204,,10de:2206|10de:2204,10de:2206
ids=10de:2204\nexclude=0000:01:00.0|refused
exclude=0000:01:00.0, 0000:41:00.1|0000:01:00.0,0000:41:00.1
host_driver=nvidia|nvidia
host_driver="nvidia"|refused
host_driver=nvidia\0177|refused
on-error=release|release
nvswitch=vm|vm
write_timeout_ms=0100|100
config_timeout=007|7
EOF
	# Every line of the file is one of the keys: nothing was injected.
	run grep -cv '^\(config\|mode\|nvidia.com/gpu.workload.config\|ids\|exclude\|host_driver\|on-error\|nvswitch\|write_timeout_ms\|config_timeout\)=' "$CONF"
	[ "$output" = 0 ]
}

@test "set judges by this boot's boot.json, not by the state file's config_disk" {
	mkdir -p "$ROOT/run/gpuvm" "$ROOT/proc/sys/kernel/random"
	printf 'mode=container\n' >"$CONF"
	echo 5e1f0c3e-4b1a-4c5e-9f6d-2a7b3c4d5e6f >"$ROOT/proc/sys/kernel/random/boot_id"
	# a state file rewritten later says a disk; this boot's initramfs read the root's file
	printf '{\n  "mode": "container",\n  "config_disk": {\n    "spec": "UUID=0b1e",\n    "status": "disk",\n    "device": "/dev/vdb"\n  }\n}\n' \
		>"$ROOT/run/gpuvm/state.json"
	printf '{"mode": "container", "boot": {"boot_id": "5e1f0c3e-4b1a-4c5e-9f6d-2a7b3c4d5e6f", "host_config": "read"}}\n' \
		>"$ROOT/run/gpuvm/boot.json"
	gv config set mode=vm-passthrough
	assert_success
	assert_line --partial "next boot: reads the file: "
	# and the other way round: boot.json says the disk
	printf '{"mode": "container", "boot": {"boot_id": "5e1f0c3e-4b1a-4c5e-9f6d-2a7b3c4d5e6f", "host_config": "disk"}}\n' \
		>"$ROOT/run/gpuvm/boot.json"
	printf '{"mode": "container"}\n' >"$ROOT/run/gpuvm/state.json"
	gv config set mode=container
	assert_success
	assert_line --partial "next boot: unknown: this boot read the host config from config='s disk"
	refute_output --partial "no rebuild"
}

# The secret a planted link points at, as a config: a mode and a key name of its own.
secret_config() {
	secret
	printf 'mode=vm-vgpu\ntoken=hunter2\n' >"$SECRET"
}

@test "every reader refuses a linked config as set does: none of the target's keys or values shown" {
	secret_config
	ln -s "$SECRET" "$CONF"
	gv plan --json
	[ "$(jqr .mode)" = container ]
	assert_regex "$stderr" "/etc/gpuvm/gpuvm.conf: a symlink on the way: not followed; file ignored"
	refute_regex "$output$stderr" "token|hunter2"
	gv config get mode
	assert_failure 1
	assert_regex "$stderr" "^gpuvm: error: /etc/gpuvm/gpuvm.conf: a symlink on the way: not followed$"
	[ "$output" = "" ]
	gv status
	assert_line "next boot: unknown: /etc/gpuvm/gpuvm.conf: a symlink on the way: not followed"
	refute_regex "$output$stderr" "token|hunter2|vm-vgpu"
	rm "$CONF"
	ln "$SECRET" "$CONF"
	gv plan --json
	[ "$(jqr .mode)" = container ]
	assert_regex "$stderr" "/etc/gpuvm/gpuvm.conf: has another hard link: not read; file ignored"
	rm "$CONF"
	rm -rf "$ROOT/etc/gpuvm"
	mkdir "$BATS_TEST_TMPDIR/elsewhere"
	cp "$SECRET" "$BATS_TEST_TMPDIR/elsewhere/gpuvm.conf"
	ln -s "$BATS_TEST_TMPDIR/elsewhere" "$ROOT/etc/gpuvm"
	gv config get mode
	assert_failure 1
	assert_regex "$stderr" "gpuvm.conf: a symlink on the way: not followed"
}

@test "--config FILE is read as named, a link included: the caller chose it" {
	secret_config
	ln -s "$SECRET" "$BATS_TEST_TMPDIR/link.conf"
	gv --config "$BATS_TEST_TMPDIR/link.conf" config get mode
	assert_success
	[ "$output" = vm-vgpu ]
}

@test "a linked state file or boot record is not read: a warning, and it counts as none" {
	mkdir -p "$ROOT/run/gpuvm" "$ROOT/proc/sys/kernel/random"
	echo 5e1f0c3e-4b1a-4c5e-9f6d-2a7b3c4d5e6f >"$ROOT/proc/sys/kernel/random/boot_id"
	printf '{"mode": "vm-vgpu", "result": "ok"}\n' >"$BATS_TEST_TMPDIR/state"
	printf '{"mode": "container", "boot": {"boot_id": "5e1f0c3e-4b1a-4c5e-9f6d-2a7b3c4d5e6f", "host_config": "read"}}\n' \
		>"$BATS_TEST_TMPDIR/boot"
	ln -s "$BATS_TEST_TMPDIR/state" "$ROOT/run/gpuvm/state.json"
	ln -s "$BATS_TEST_TMPDIR/boot" "$ROOT/run/gpuvm/boot.json"
	printf 'mode=container\n' >"$CONF"
	gv status
	assert_success
	assert_line "last apply: (no state file)"
	assert_line "next boot: unknown: /run/gpuvm/boot.json: a symlink on the way: not followed"
	assert_regex "$stderr" "warning: /run/gpuvm/state.json: a symlink on the way: not followed; ignored"
	gv config set mode=vm-passthrough
	assert_success
	assert_line --partial "reboot: unknown: "
	refute_output --partial "vm-vgpu"
	# the same files, as gpuvm wrote them, are read
	rm "$ROOT/run/gpuvm/state.json" "$ROOT/run/gpuvm/boot.json"
	cp "$BATS_TEST_TMPDIR/state" "$ROOT/run/gpuvm/state.json"
	cp "$BATS_TEST_TMPDIR/boot" "$ROOT/run/gpuvm/boot.json"
	gv status
	assert_line "last apply: /run/gpuvm/state.json"
	assert_line --partial "next boot: reads the file"
}

@test "a boot record larger than a config is read whole (a host of many functions)" {
	mkdir -p "$ROOT/run/gpuvm" "$ROOT/proc/sys/kernel/random"
	echo 5e1f0c3e-4b1a-4c5e-9f6d-2a7b3c4d5e6f >"$ROOT/proc/sys/kernel/random/boot_id"
	{
		printf '{"mode": "container", "pad": "'
		head -c 200000 /dev/zero | tr '\0' x
		printf '", "boot": {"boot_id": "5e1f0c3e-4b1a-4c5e-9f6d-2a7b3c4d5e6f", "host_config": "read"}}\n'
	} >"$ROOT/run/gpuvm/boot.json"
	printf 'mode=container\n' >"$CONF"
	gv status
	assert_success
	assert_line --partial "next boot: reads the file"
}

@test "set: a forged state file's mode (newline, ESC, bidi control) is masked, no line forged" {
	mkdir -p "$ROOT/run/gpuvm"
	printf 'mode=container\n' >"$CONF"
	# A mode of 31 bytes that would end the reboot: line and start a next boot: line.
	printf '{"mode": "x\\nnext boot: reads\\u001b[2J\\u202ez"}\n' >"$ROOT/run/gpuvm/state.json"
	gv config set mode=vm-passthrough
	assert_success
	assert_line "reboot: needed: this boot runs what /run/gpuvm/state.json calls 'x?next boot: reads?[2J???z' (not a mode), the file says vm-passthrough"
	[ "$(printf '%s\n' "$output" | grep -c '^next boot: ')" = 1 ]
	[ "$(printf '%s\n' "$output" | grep -c '^reboot: ')" = 1 ]
	run ! grep -q "$(printf '\033')" <<<"$output"
	# This boot's boot.json, forged the same way: the next boot: line masks it too.
	mkdir -p "$ROOT/proc/sys/kernel/random"
	echo 5e1f0c3e-4b1a-4c5e-9f6d-2a7b3c4d5e6f >"$ROOT/proc/sys/kernel/random/boot_id"
	printf '{"boot": {"boot_id": "5e1f0c3e-4b1a-4c5e-9f6d-2a7b3c4d5e6f", "host_config": "no-root", "why": "x\\nreboot: none: forged\\u001b[2J\\u2066"}}\n' \
		>"$ROOT/run/gpuvm/boot.json"
	gv config set mode=vm-passthrough
	assert_success
	assert_line --partial "(/run/gpuvm/boot.json: host_config no-root: x?reboot: none: forged?[2J???)"
	[ "$(printf '%s\n' "$output" | grep -c '^reboot: ')" = 1 ]
	[ "$(printf '%s\n' "$output" | grep -c '^next boot: ')" = 1 ]
	run ! grep -q "$(printf '\033')" <<<"$output"
	rm "$ROOT/run/gpuvm/boot.json"
	# A mode gpuvm knows is said as it is.
	printf '{"mode": "vm-vgpu"}\n' >"$ROOT/run/gpuvm/state.json"
	gv config set mode=container
	assert_success
	assert_line "reboot: needed: this boot runs vm-vgpu, the file says container"
}
