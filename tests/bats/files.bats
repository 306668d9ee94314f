#!/usr/bin/env bats
# shellcheck disable=SC2154 # $stderr and $output are set by bats' run
# The files apply writes under /run/gpuvm (state.json, pending) and the state file read back:
# no symlink followed, no planted temporary opened, the state read as JSON.

load helpers

setup() {
	mkfx workstation
	secret
}

@test "a symlinked /run/gpuvm is not followed: no state file written elsewhere" {
	mkdir -p "$ROOT/run" "$BATS_TEST_TMPDIR/elsewhere"
	rm -rf "$ROOT/run/gpuvm"
	ln -s "$BATS_TEST_TMPDIR/elsewhere" "$ROOT/run/gpuvm"
	gv --cmdline "" apply
	assert_success
	assert_regex "$stderr" "cannot write /run/gpuvm/state.json: a directory on its path is a symbolic link \(not followed\)"
	[ -z "$(ls -A "$BATS_TEST_TMPDIR/elsewhere")" ]
	[ -L "$ROOT/run/gpuvm" ]
}

@test "a symlinked /run/gpuvm is not followed: no pending record written or removed elsewhere" {
	mkdir -p "$ROOT/run" "$BATS_TEST_TMPDIR/elsewhere"
	rm -rf "$ROOT/run/gpuvm"
	ln -s "$BATS_TEST_TMPDIR/elsewhere" "$ROOT/run/gpuvm"
	gv --cmdline "gpuvm.config=LABEL=gpuvm-conf" apply --defer
	[ "$status" -eq 1 ] # no record, so no hold: no wait
	assert_regex "$stderr" "cannot write /run/gpuvm/pending: a directory on its path is a symbolic link \(not followed\); nothing is held"
	[ -z "$(ls -A "$BATS_TEST_TMPDIR/elsewhere")" ]
	printf 'deadline_ms=0\n' >"$BATS_TEST_TMPDIR/elsewhere/pending"
	gv --cmdline "gpuvm.config=LABEL=gpuvm-conf" apply --resume
	assert_regex "$stderr" "cannot remove /run/gpuvm/pending: a directory on its path is a symbolic link"
	[ -e "$BATS_TEST_TMPDIR/elsewhere/pending" ]
}

@test "under umask 077: the directories gpuvm makes 0755, the files it writes for others 0644" {
	umask 077
	rm -rf "$ROOT/run/gpuvm" "$ROOT/etc/gpuvm"
	gv --cmdline "" config set mode=vm-passthrough
	assert_success
	gv --cmdline "" apply
	[ -f "$ROOT/run/gpuvm/metrics/gpuvm.prom" ]
	[ -f "$ROOT/run/gpuvm/state.json" ]
	rm -rf "$ROOT/run/gpuvm"
	gv --cmdline "quiet" apply --defer
	assert_success
	[ -f "$ROOT/run/gpuvm/root-pending" ]
	[ -f "$ROOT/run/gpuvm/boot.json" ]
	gv --cmdline "quiet" apply
	[ -f "$ROOT/run/gpuvm/metrics/gpuvm.prom" ]
	# node-exporter reads the metrics as nobody: every directory on the way, and every file
	local modes
	modes=$(cd "$ROOT" && find etc/gpuvm run/gpuvm -printf '%m %y %p\n' | sort -k3)
	[ "$(printf '%s\n' "$modes" | awk '$2 == "d" && $1 != 755' | wc -l)" = 0 ]
	[ "$(printf '%s\n' "$modes" | awk '$2 == "f" && $1 != 644 && $3 != "etc/gpuvm/.gpuvm.lock"' | wc -l)" = 0 ]
	assert_regex "$modes" "755 d run/gpuvm/metrics"
	assert_regex "$modes" "644 f run/gpuvm/metrics/gpuvm.prom"
	assert_regex "$modes" "755 d etc/gpuvm"
	assert_regex "$modes" "644 f etc/gpuvm/gpuvm.conf"
	assert_regex "$modes" "600 f etc/gpuvm/.gpuvm.lock" # the lock stays the writers' alone
}

@test "a planted temporary of the state file is neither followed nor truncated" {
	mkdir -p "$ROOT/run/gpuvm"
	# Hard links at the temporary's names, old and new; the PID is the shell's, which execs.
	# shellcheck disable=SC2016 # expanded by the inner shell
	run --separate-stderr sh -c 'ln "$1" "$2/.state.json.$$" && ln "$1" "$2/.state.json.$$.tmp" &&
		exec "$3" --root "$4" --cmdline "" apply' sh "$SECRET" "$ROOT/run/gpuvm" "$GPUVM" "$ROOT"
	assert_success
	secret_intact
	[ "$(jq -r .mode "$ROOT/run/gpuvm/state.json")" = container ]
	[ "$(stat -c %h "$ROOT/run/gpuvm/state.json")" = 1 ]
	[ -z "$(find "$ROOT/run/gpuvm" -name '.*tmp')" ]
}

@test "status --nfd reads the state file as JSON, not by its layout" {
	mkdir -p "$ROOT/run/gpuvm"
	# Compact, as another writer (jq -c) would leave it; a key inside a string is not a key.
	printf '{"reason":"x \\"mode\\": \\"vm-vgpu\\"","mode":"vm-passthrough","result":"partial"}' \
		>"$ROOT/run/gpuvm/state.json"
	gv --cmdline "" status --nfd
	assert_success
	assert_line feature.node.kubernetes.io/gpuvm-mode=vm-passthrough
	assert_line feature.node.kubernetes.io/gpuvm-result=partial
	# A key twice is ambiguous: not believed.
	printf '{"mode":"container","mode":"vm-passthrough"}' >"$ROOT/run/gpuvm/state.json"
	gv --cmdline "" status --nfd
	assert_line feature.node.kubernetes.io/gpuvm-mode=none
}

@test "status --nfd: a state file's value that is no label value is left out, with a warning" {
	mkdir -p "$ROOT/run/gpuvm"
	# A newline would forge a feature line; ESC and a bidi control reach whoever reads it.
	printf '{"mode":"container\\nfeature.node.kubernetes.io/gpuvm-vfio-gpus=8","result":"ok\\u001b[2J\\u202e"}' \
		>"$ROOT/run/gpuvm/state.json"
	gv --cmdline "" status --nfd
	assert_success
	assert_line feature.node.kubernetes.io/gpuvm-vfio-gpus=0
	[ "$(printf '%s\n' "$output" | grep -c 'gpuvm-vfio-gpus=')" = 1 ]
	[ "$(printf '%s\n' "$output" | grep -c 'gpuvm-mode=')" = 0 ]
	[ "$(printf '%s\n' "$output" | grep -c 'gpuvm-result=')" = 0 ]
	assert_regex "$stderr" "gpuvm: warning: status --nfd: /run/gpuvm/state.json: mode 'container\\?feature.node.kubernetes.io/gpuvm-vfio-gpus=8' is not a label value .*; feature.node.kubernetes.io/gpuvm-mode left out"
	assert_regex "$stderr" "result 'ok\\?\\[2J\\?\\?\\?' is not a label value"
	# Every line of the file is one NFD takes: a comment or KEY=VALUE with a label value.
	bad=$(printf '%s\n' "$output" | grep -cvE '^(# \+expiry-time=[0-9TZ:-]+|feature\.node\.kubernetes\.io/gpuvm-[a-z-]+=([A-Za-z0-9]([-_.A-Za-z0-9]*[A-Za-z0-9])?)?)$' || true)
	[ "$bad" = 0 ]
	# Too long for a label (64 characters): left out too; null is none, as before.
	printf '{"mode":"%s","result":null}' "$(printf 'a%.0s' $(seq 64))" >"$ROOT/run/gpuvm/state.json"
	gv --cmdline "" status --nfd
	assert_success
	refute_line --partial gpuvm-mode=
	assert_line feature.node.kubernetes.io/gpuvm-result=not-run
	assert_regex "$stderr" "mode 'a{64}' is not a label value"
	# status in text: what it says of this boot's boot.json is masked, in one line.
	mkdir -p "$ROOT/proc/sys/kernel/random"
	echo 5e1f0c3e-4b1a-4c5e-9f6d-2a7b3c4d5e6f >"$ROOT/proc/sys/kernel/random/boot_id"
	printf '{"boot": {"boot_id": "5e1f0c3e-4b1a-4c5e-9f6d-2a7b3c4d5e6f", "host_config": "no-root", "why": "x\\nlast apply: forged\\u001b[2J\\u2066"}}\n' \
		>"$ROOT/run/gpuvm/boot.json"
	gv --cmdline "" status
	assert_success
	assert_line --partial "(/run/gpuvm/boot.json: host_config no-root: x?last apply: forged?[2J???)"
	[ "$(printf '%s\n' "$output" | grep -c '^last apply: ')" = 1 ]
	run ! grep -q "$(printf '\033')" <<<"$output"
}

@test "stdout that cannot be written (a full disk): exit 1 and the error said, never exit 0" {
	# status --nfd > features.d/.gpuvm.tmp && mv ...: a full disk must not pass a cut file on
	local c
	mkdir -p "$ROOT/etc/gpuvm"
	echo mode=vm-passthrough >"$ROOT/etc/gpuvm/gpuvm.conf"
	for c in "status --nfd" "status --json" "plan --json" "kubevirt --json" "cmdline --mode vm-passthrough" \
		"check --json" "config get mode"; do
		# shellcheck disable=SC2086 # the command's words
		run --separate-stderr "$GPUVM" --root "$ROOT" --cmdline "" $c
		[ "$status" -ne 1 ] || [[ "$stderr" != *"stdout: write error"* ]] || fail "$c failed before writing"
		# shellcheck disable=SC2086,SC2016 # $0 and $1 are the inner shell's
		run --separate-stderr bash -c '"$0" --root "$1" --cmdline "" '"$c"' >/dev/full' "$GPUVM" "$ROOT"
		[ "$status" -eq 1 ] || fail "$c >/dev/full: exit $status"
		# the cause where the C library still knows it (a command that flushed earlier: EIO)
		[[ "$stderr" == *"gpuvm: error: stdout: write error: "* ]] || fail "$c: $stderr"
	done
	# shellcheck disable=SC2016 # $0 and $1 are the inner shell's
	run --separate-stderr bash -c '"$0" --root "$1" status --nfd >/dev/full' "$GPUVM" "$ROOT"
	assert_failure 1
	[[ "$stderr" == *"gpuvm: error: stdout: write error: No space left on device"* ]]
}
