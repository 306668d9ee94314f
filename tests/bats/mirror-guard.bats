#!/usr/bin/env bats
# shellcheck disable=SC2154 # $stderr and $output are set by bats' run
# The label mirror's loop guard: however many passes and boots, a change is asked for once;
# a boot that did not bring it (not in the boot, a stale boot id, an unreadable host config,
# no root, a pinning boot line, a failed boot) is judged, annotated and never followed by
# another request for it. Fixture and helpers: mirror.bash.

load helpers
load ../api/standin
load mirror

@test "loop guard: a boot that brings the mode ends the request; the error and the mark go" {
	mkdir -p "$ROOT/run/gpuvm-reboot"
	node vm-passthrough gpuvm.dev/error=boot-failed
	mirror --once
	[ "$(annotation gpuvm.dev/requested)" = vm-passthrough@11111111-1111-1111-1111-111111111111 ]
	reboot
	bootjson vm-passthrough ok conf
	mirror --once
	assert_success
	assert_output --partial "brought mode vm-passthrough (requested in boot 11111111-1111-1111-1111-111111111111): request done"
	for a in requested error reboot-required; do
		[ "$(annotation "gpuvm.dev/$a")" = absent ]
	done
	[ ! -e "$ROOT/$SENT" ]
	: >"$API/requests.jsonl"
	mirror --once
	assert_success
	[ "$(annotate_calls)" = 0 ]
}

# fail_boot CASE: the boot after the request, as each failure leaves its boot.json.
fail_boot() {
	case $1 in
	not-in-boot) ;; # no boot.json: gpuvm did not run in that initramfs
	stale-id)
		bootjson vm-passthrough ok conf
		jq '.boot.boot_id = "00000000-dead-beef-0000-000000000000"' "$ROOT/run/gpuvm/boot.json" >"$K/b" &&
			mv "$K/b" "$ROOT/run/gpuvm/boot.json"
		;;
	unreadable) bootjson container ok default unreadable "/sysroot/etc/gpuvm/gpuvm.conf: Permission denied" ;;
	no-root) bootjson container ok default no-root "/sysroot is not mounted" ;;
	cmdline) bootjson container noop cmdline ;;
	failed | partial | held) bootjson vm-passthrough "$1" conf read "" "0000:01:00.0: bind to vfio-pci failed: Device or resource busy" ;;
	esac
	# what the running host is in: the mode of that boot (container where gpuvm did not run)
	[ -e "$ROOT/run/gpuvm/boot.json" ] || cp "$BATS_FILE_TMPDIR/state.json" "$ROOT/run/gpuvm/state.json"
}

# The property: however many passes and boots, a change is asked for once; a boot that did not
# bring it (any cause) is never followed by another request for it, and the steady passes after
# it make no API writes.
@test "loop guard: 20 passes over each failed boot write the sentinel once and annotate a bounded number of times" {
	mkdir -p "$ROOT/run/gpuvm-reboot"
	for c in not-in-boot stale-id unreadable no-root cmdline failed partial held; do
		case $c in
		not-in-boot | stale-id) tok=gpuvm-not-in-boot ;;
		unreadable | no-root) tok=host-config-unreadable ;;
		cmdline) tok=cmdline-overrides-label ;;
		*) tok=boot-failed ;;
		esac
		echo 11111111-1111-1111-1111-111111111111 >"$BOOTID"
		bootjson container noop conf
		"$GPUVM" --root "$ROOT" config set mode=container >/dev/null
		node vm-passthrough
		: >"$API/requests.jsonl"
		writes=0 logged=0
		for i in $(seq 1 20); do
			had=0
			[ ! -e "$ROOT/$SENT" ] || had=1
			mirror --once
			[ "$had" = 1 ] || [ ! -e "$ROOT/$SENT" ] || writes=$((writes + 1))
			logged=$((logged + $(printf '%s\n' "$output" | grep -c 'wrote the reboot sentinel' || true)))
			[ "$i" != 10 ] || mid=$(annotate_calls)
			# kured reboots while the sentinel is there; someone reboots by hand every 7th pass
			if [ -e "$ROOT/$SENT" ] || [ $((i % 7)) = 0 ]; then
				reboot
				fail_boot "$c"
			fi
		done
		echo "case $c: $writes sentinel writes, $(annotate_calls) annotate calls, $(request_calls) of the request"
		[ "$writes" = 1 ]
		[ "$logged" = 1 ]
		[ "$(annotation gpuvm.dev/error)" = "$tok" ]
		[ "$(annotation gpuvm.dev/reboot-required)" = absent ]
		[ "$(annotation gpuvm.dev/requested)" = vm-passthrough@11111111-1111-1111-1111-111111111111 ]
		# request, mark, then the error and the mark removed (and the node's KubeVirt entries
		# once, where the state file says a VM mode): no write in the last ten passes
		[ "$(request_calls)" -le 4 ]
		[ "$(annotate_calls)" -le "$(($(request_calls) + 1))" ]
		[ "$(annotate_calls)" = "$mid" ]
		assert_output --partial "($tok)"
		# one Event for the request, one for the boot judged
		[ "$(events | grep -c '^Normal RebootRequested: ')" = 1 ]
		[ "$(events | grep -c "^Warning ModeNotBrought: gpuvm.dev/error=$tok: the reboot asked for mode vm-passthrough")" = 1 ]
	done
	# the log names the first error of a failed boot
	assert_output --partial "result held, mode vm-passthrough: 0000:01:00.0: bind to vfio-pci failed: Device or resource busy"
}

@test "loop guard: boot.json's strings (newline, ESC, bidi control) are logged masked, no line forged" {
	mkdir -p "$ROOT/run/gpuvm-reboot"
	evil=$(printf 'denied\nerror: forged line\033]0;pwned\007\342\200\256x')
	"$GPUVM" --root "$ROOT" config set mode=container >/dev/null
	node vm-passthrough
	mirror --once
	assert_success
	reboot
	bootjson container ok default unreadable "$evil"
	mirror --once
	assert_output --partial "(host_config unreadable: denied?error: forged line?]0;pwned??x)"
	assert_line --partial "did not bring it: this boot could not read the root's"
	refute_line --regexp '^(gpuvm-label-mirror: )?error: forged line'
	run ! grep -q "$(printf '\033')" <<<"$output"
	[ "$(annotation gpuvm.dev/error)" = host-config-unreadable ]
	# A failed boot's first error, and its mode, the same.
	echo 11111111-1111-1111-1111-111111111111 >"$BOOTID"
	bootjson container noop conf
	"$GPUVM" --root "$ROOT" config set mode=container >/dev/null
	node vm-passthrough
	mirror --once
	reboot
	bootjson vm-passthrough failed conf read "" "$evil"
	mirror --once
	assert_output --partial "result failed, mode vm-passthrough: denied?error: forged line?]0;pwned??x"
	refute_line --regexp '^(gpuvm-label-mirror: )?error: forged line'
	run ! grep -q "$(printf '\033')" <<<"$output"
}

# realboot FILE: the boot after the request is the one a QEMU guest recorded in
# tests/fixture/boot/FILE: its boot.json as it wrote it, and its boot id as this kernel's.
realboot() {
	local f="$TOP/tests/fixture/boot/$1"
	reboot
	jq -r .boot.boot_id "$f" >"$BOOTID"
	cp "$f" "$ROOT/run/gpuvm/boot.json"
	cp "$f" "$ROOT/run/gpuvm/state.json"
}

@test "loop guard on what real boots recorded: brought, pinned, unreadable, no config on the root" {
	mkdir -p "$ROOT/run/gpuvm-reboot"
	# each: the mode asked for, the real boot after the request, the error (absent: brought)
	while read -r want file tok; do
		from=container
		[ "$want" != container ] || from=vm-passthrough
		echo 11111111-1111-1111-1111-111111111111 >"$BOOTID"
		bootjson "$from" noop conf
		"$GPUVM" --root "$ROOT" config set "mode=$from" >/dev/null
		node "$want"
		mirror --once
		[ -e "$ROOT/$SENT" ]
		realboot "$file"
		for i in 1 2 3; do
			mirror --once
		done
		echo "$file: error $(annotation gpuvm.dev/error)"
		[ "$(annotation gpuvm.dev/error)" = "$tok" ]
		[ ! -e "$ROOT/$SENT" ] # never asked again
		if [ "$tok" = absent ]; then
			[ "$(annotation gpuvm.dev/requested)" = absent ]
		else
			[ "$(annotation gpuvm.dev/requested)" = "$want@11111111-1111-1111-1111-111111111111" ]
		fi
	done <<'EOF2'
vm-passthrough dracut-sid-systemd-2-vm-passthrough.boot.json absent
vm-passthrough itools-trixie-lvm-root.boot.json absent
vm-passthrough dracut-trixie-shell-1-container.boot.json mode-not-applied
container gpuvm-switch-root-pin.boot.json cmdline-overrides-label
vm-passthrough gpuvm-root-config-unreadable.boot.json host-config-unreadable
vm-passthrough gpuvm-root-config-missing.boot.json mode-not-applied
EOF2
}

@test "loop guard: a new mode clears the error and asks once for it; removing the request asks again" {
	mkdir -p "$ROOT/run/gpuvm-reboot"
	node vm-passthrough
	mirror --once
	reboot
	fail_boot failed
	mirror --once
	assert_failure 1
	[ "$(annotation gpuvm.dev/error)" = boot-failed ]
	# a new value: a new change
	node vm-vgpu "gpuvm.dev/error=boot-failed" "gpuvm.dev/requested=vm-passthrough@11111111-1111-1111-1111-111111111111"
	mirror --once
	assert_success
	[ "$(annotation gpuvm.dev/error)" = absent ]
	[ "$(annotation gpuvm.dev/requested)" = "vm-vgpu@$(cat "$BOOTID")" ]
	[ -e "$ROOT/$SENT" ]
	# the admin fixed the host and removes the request: asked for again
	reboot
	fail_boot failed
	mirror --once
	assert_failure 1
	[ ! -e "$ROOT/$SENT" ]
	admin_annotate gpuvm.dev/requested-
	mirror --once
	assert_success
	[ "$(annotation gpuvm.dev/error)" = absent ]
	[ -e "$ROOT/$SENT" ]
}

@test "loop guard: the boot line pins another mode (config set exit 6): no request; unpinned in the same boot, the request made once" {
	mkdir -p "$ROOT/run/gpuvm-reboot"
	pin container /etc/default/grub
	node vm-passthrough
	mirror --once
	assert_failure 1
	assert_output --partial "error: next boot: pinned: gpuvm.mode=container on the boot line (/etc/default/grub:1): the mode cannot take effect"
	[ "$(annotation gpuvm.dev/error)" = cmdline-overrides-label ]
	[ "$(annotation gpuvm.dev/requested)" = absent ]
	[ ! -e "$ROOT/$SENT" ]
	events | grep -q '^Warning ModePinned: gpuvm.dev/error=cmdline-overrides-label: next boot: pinned: gpuvm.mode=container on the boot line (/etc/default/grub:1): '
	grep -qx "mode=vm-passthrough" "$CONF" # written all the same
	unpin
	mirror --once
	assert_success
	[ "$(annotation gpuvm.dev/error)" = absent ]
	[ -e "$ROOT/$SENT" ]
	# pinned again after the request: the sentinel goes, the request stays; unpinned: no second
	# write in this boot
	pin container /etc/default/grub
	mirror --once
	[ ! -e "$ROOT/$SENT" ]
	unpin
	mirror --once
	assert_success
	[ ! -e "$ROOT/$SENT" ]
	assert_output --partial "not written again"
}

@test "loop guard: without a boot id nothing is asked for" {
	mkdir -p "$ROOT/run/gpuvm-reboot"
	rm "$BOOTID"
	node vm-passthrough
	mirror --once
	assert_failure 1
	assert_output --partial "error: cannot read the boot id from $BOOTID: no reboot asked for"
	[ ! -e "$ROOT/$SENT" ]
	[ "$(annotate_calls)" = 0 ]
}
