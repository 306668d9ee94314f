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

@test "not installed: nothing on the host written or removed, no reboot asked for, said once; installed, it goes on" {
	mkdir -p "$ROOT/run/gpuvm-reboot"
	uninstall_gpuvm "$ROOT" # the package removed, its config directory left (a changed conffile)
	node vm-passthrough
	before=$(snap "$ROOT")
	mirror --once
	assert_success
	assert_output --partial "gpuvm is not installed on this host (no /usr/sbin/gpuvm on the host): nothing written on the host, no reboot asked for"
	[ "$(snap "$ROOT")" = "$before" ]
	[ "$(annotation gpuvm.dev/error)" = gpuvm-not-installed ]
	for a in requested reboot-required; do
		[ "$(annotation "gpuvm.dev/$a")" = absent ]
	done
	[ "$(events)" = "Warning GpuvmNotInstalled: gpuvm.dev/error=gpuvm-not-installed: no /usr/sbin/gpuvm on the host; the mirror writes nothing on this host and asks for no reboot" ]
	# a loop over it: said once in its log, no write to the API after the first pass, no
	# failed pass, the host untouched
	: >"$API/requests.jsonl"
	menv
	env "${MENV[@]}" GPUVM_HEARTBEAT="$K/heartbeat" GPUVM_WATCH_TIMEOUT=1 "$MIRROR" --interval 1 \
		2>"$BATS_TEST_TMPDIR/log" >/dev/null 3>&- &
	pid=$!
	for _ in $(seq 1 100); do
		[ "$(watch_calls)" -ge 3 ] && break
		sleep 0.1
	done
	[ "$(watch_calls)" -ge 3 ]
	kill "$pid"
	wait "$pid" || true
	pid=''
	[ "$(grep -c 'gpuvm is not installed' "$BATS_TEST_TMPDIR/log")" = 1 ]
	[ "$(requests '.method != "GET"' | wc -l)" = 0 ]
	[ "$(snap "$ROOT")" = "$before" ]
	# installed (and so not yet booted with): the error goes and the one reboot is asked for
	install_gpuvm "$ROOT" itools
	mirror --once
	assert_success
	assert_output --partial "removed annotation gpuvm.dev/error"
	[ "$(annotation gpuvm.dev/error)" = absent ]
	[ "$(annotation gpuvm.dev/requested)" = vm-passthrough@11111111-1111-1111-1111-111111111111 ]
	[ -e "$ROOT/$SENT" ]
	events | grep -q '^Normal GpuvmInstalled: gpuvm is installed on this host now (/usr/sbin/gpuvm, /usr/share/initramfs-tools/hooks/gpuvm)$'
}

@test "not installed: the binary without a boot integration, or the host's /usr not mounted" {
	uninstall_gpuvm "$ROOT"
	mkdir -p "$ROOT/usr/sbin"
	cp "$GPUVM" "$ROOT/usr/sbin/gpuvm"
	node vm-passthrough
	mirror --once
	assert_success
	assert_output --partial "gpuvm is not installed on this host (/usr/sbin/gpuvm is there but neither dracut's module"
	grep -qx "mode=container" "$CONF"
	rm -rf "${ROOT:?}/usr"
	admin_annotate gpuvm.dev/error-
	mirror --once
	assert_success
	assert_output --partial "gpuvm is not installed on this host (the host's /usr is not mounted at $ROOT/usr"
	[ "$(annotation gpuvm.dev/error)" = gpuvm-not-installed ]
	grep -qx "mode=container" "$CONF"
}

# The request's annotation applied by the API, its answer lost to the client's timeout: the
# pass that sent it wrote no sentinel; the next one completes it, once.
@test "a request whose answer was lost: the next pass writes the sentinel, once; removed by hand, not again" {
	mkdir -p "$ROOT/run/gpuvm-reboot"
	node vm-passthrough
	fault '{"path": "/api/v1/nodes/'"$NODE"'", "method": "PATCH", "delay": 3}'
	GPUVM_API_TIMEOUT=1 mirror --once
	assert_failure 1
	assert_output --partial "error: cannot annotate gpuvm.dev/requested=vm-passthrough@11111111-1111-1111-1111-111111111111: PATCH /api/v1/nodes/$NODE: "
	[ "$(annotation gpuvm.dev/requested)" = vm-passthrough@11111111-1111-1111-1111-111111111111 ]
	[ ! -e "$ROOT/$SENT" ]
	fault
	mirror --once
	assert_success
	assert_output --partial "its sentinel was never written (the answer to the request was lost): completed now"
	assert_output --partial "wrote the reboot sentinel $ROOT/$SENT (kured)"
	[ "$(annotation gpuvm.dev/reboot-required)" = true ]
	[ "$(cat "$ROOT/$SENT.request")" = vm-passthrough@11111111-1111-1111-1111-111111111111 ]
	[ "$(events | grep -c '^Normal RebootRequested: ')" = 1 ]
	mirror --once
	assert_success
	refute_output --partial "completed now"
	rm "$ROOT/$SENT"
	mirror --once
	assert_success
	assert_output --partial "its sentinel is gone (removed by hand?): not written again"
	[ ! -e "$ROOT/$SENT" ]
}

# The desired-mode flow never moves the operator's label in a pass where the move would start
# the operator's vfio-manager on the node: the label is held and the warning comes in that pass.
@test "desired mode: the label held where its move would start the vfio-manager, warned in that pass" {
	mkdir -p "$ROOT/run/gpuvm-reboot"
	cpol sandboxWorkloads.enabled=true sandboxWorkloads.defaultWorkload='"container"'
	node container gpuvm.dev/desired-mode=vm-passthrough
	mirror --once
	assert_success
	[ "$(label_calls)" = 0 ]
	[ "$(jq -r '.metadata.labels["nvidia.com/gpu.workload.config"]' "$STORE/api/v1/nodes/$NODE.json")" = container ]
	assert_output --partial "warning: label nvidia.com/gpu.workload.config held at 'container', not moved to vm-passthrough: the GPU Operator's vfio-manager would then run on this node (ClusterPolicy cluster-policy enables it; the operator labels this vm-passthrough node nvidia.com/gpu.deploy.vfio-manager=true)"
	[ "$(annotation gpuvm.dev/warning)" = vfio-manager ]
	[ -e "$ROOT/$SENT" ] # the host config and the reboot go on: only the label waits
	# after the boot, still held while the vfio-manager would run
	reboot
	bootjson vm-passthrough ok conf
	mirror --once
	assert_success
	[ "$(label_calls)" = 0 ]
	# the node opts out of the vfio-manager: the label moves, the warning goes
	label nvidia.com/gpu.deploy.vfio-manager=false
	mirror --once
	assert_success
	assert_output --partial "labelled nvidia.com/gpu.workload.config=vm-passthrough (this boot runs vm-passthrough"
	[ "$(annotation gpuvm.dev/warning)" = absent ]
	# a ClusterPolicy that cannot be read this pass holds the move too
	label nvidia.com/gpu.workload.config=container nvidia.com/gpu.deploy.vfio-manager-
	fault '{"path": "/apis/nvidia.com/v1/clusterpolicies", "code": 500}'
	: >"$API/requests.jsonl"
	mirror --once
	assert_output --partial "held at 'container' this pass: the ClusterPolicy could not be read"
	[ "$(label_calls)" = 0 ]
}

@test "GPUVM_WRITE_CONFIG=never: the host config is another's: never written, no reboot asked for" {
	mkdir -p "$ROOT/run/gpuvm-reboot"
	node vm-passthrough
	before=$(ident)
	GPUVM_WRITE_CONFIG=never mirror --once
	assert_success
	assert_output --partial "warning: label nvidia.com/gpu.workload.config=vm-passthrough, but the host config has mode container: GPUVM_WRITE_CONFIG=never leaves the file to its owner"
	[ "$(ident)" = "$before" ]
	[ ! -e "$ROOT/$SENT" ]
	[ "$(request_calls)" = 0 ]
	node container
	GPUVM_WRITE_CONFIG=never mirror --once
	assert_success
	assert_output --partial "host config has mode container (GPUVM_WRITE_CONFIG=never"
	GPUVM_WRITE_CONFIG=sometimes mirror --once
	assert_failure 2
	assert_output --partial "GPUVM_WRITE_CONFIG must be auto or never, got 'sometimes'"
}

# The watch-driven loop across its failures: what it decided is not decided again, what it asks
# is asked once, and each failure is waited out as a good API client does. Small windows and
# waits (the loop's environment) keep these fast; each condition is polled, never timed.

# loop_start [VAR=VALUE...]: the loop in the background, its log in $LOG.
loop_start() {
	menv
	LOG=$BATS_TEST_TMPDIR/log
	env "${MENV[@]}" GPUVM_HEARTBEAT="$K/heartbeat" GPUVM_RESYNC_SPREAD=0 "$@" "$MIRROR" \
		2>"$LOG" >/dev/null 3>&- &
	pid=$!
}

# until_ CMD...: CMD passes within 15 s (polled), else the test fails with the log.
until_() {
	local _i
	for _i in $(seq 1 150); do
		"$@" && return 0
		sleep 0.1
	done
	echo "not within 15 s: $*"
	cat "$LOG"
	return 1
}

loop_stop() {
	kill "$pid"
	wait "$pid" || true
	pid=''
}

logged() {
	grep -q -e "$1" "$LOG"
}

at_least() {
	[ "$("$1")" -ge "$2" ]
}

conf_is() {
	grep -qx "mode=$1" "$CONF"
}

annotated() {
	[ "$(annotation "$1")" = "$2" ]
}

# a watch of this node open on this server now (the loop's curl)
watch_open() {
	pgrep -f "$SERVER/api/v1/nodes.fieldSelector=metadata.name%3D$NODE&watch=1" >/dev/null
}

ok_watches() {
	requests '.verb == "watch" and .code == 200' | wc -l
}

@test "watch: a label change decided at once; the mirror's own patches and a cut watch decide nothing again" {
	mkdir -p "$ROOT/run/gpuvm-reboot"
	node container
	loop_start GPUVM_WATCH_TIMEOUT=1
	until_ logged 'host config already has mode container'
	label nvidia.com/gpu.workload.config=vm-passthrough
	until_ conf_is vm-passthrough
	# the events of its own two patches come after: older than the node their answers gave
	n=$(watch_calls)
	until_ at_least watch_calls $((n + 2))
	[ "$(request_calls)" = 2 ]
	# the next watch is cut after its first event (curl's error 18, no last chunk): an edit
	# of another's label
	fault '{"path": "/api/v1/nodes", "verb": "watch", "drop_after_events": 1, "times": 1}'
	until_ at_least watch_calls $((n + 3))
	label example.com/rack=r7
	until_ logged 'the watch was cut'
	until_ at_least list_calls 2
	until_ at_least watch_calls $((n + 5))
	loop_stop
	# asked once: the request, the reboot mark, the sentinel, one Event
	[ "$(annotation gpuvm.dev/requested)" = vm-passthrough@11111111-1111-1111-1111-111111111111 ]
	[ "$(request_calls)" = 2 ]
	[ "$(events | grep -c RebootRequested)" = 1 ]
	[ -e "$ROOT/$SENT" ]
	[ "$(grep -c 'host config mode container -> vm-passthrough' "$LOG")" = 1 ]
	# never a GET of the node, never a list of ClusterPolicies but by a pass that needs one
	[ "$(get_node_calls)" = 0 ]
	[ "$(requests '.path == "/apis/nvidia.com/v1/clusterpolicies"' | wc -l)" -le 2 ]
}

@test "watch: a window the server ends at once, empty (a proxy), is a failure waited out, not a loop; the node not read again" {
	node container
	fault '{"path": "/api/v1/nodes", "verb": "watch", "end_after_seconds": 0, "times": 3}'
	loop_start GPUVM_WATCH_TIMEOUT=3 GPUVM_BACKOFF_BASE=1 GPUVM_BACKOFF_MAX=2
	until_ at_least watch_calls 4
	loop_stop
	[ "$(grep -c 'error: the watch of node gpu-node-1 failed (HTTP 200: the watch ended at once (asked for [0-9]*s)): again in [0-9]*s' "$LOG")" = 3 ] ||
		{ cat "$LOG"; false; }
	[ "$(list_calls)" = 1 ]
	# the three waits of the backoff (0-1 s, 1-2 s, 1-2 s) between the first watch and the fourth
	jq -s '[.[] | select(.verb == "watch")] | .[3].at - .[0].at' "$API/requests.jsonl" >"$K/gap"
	jq -e '. >= 2' "$K/gap"
}

# The ClusterPolicy is read only by a pass that needs it, and a pass runs when the node or the
# host changes: an edit of the policy alone (vfioManager turned on) is seen by the pass run again
# GPUVM_POLICY_RECHECK after the last read, at a window's end.
@test "watch: an edit of the ClusterPolicy alone is seen after GPUVM_POLICY_RECHECK; with 0, only at the node's next change" {
	mkdir -p "$ROOT/run/gpuvm-reboot"
	printf 'mode=vm-passthrough\n' >"$CONF"
	bootjson vm-passthrough ok conf
	node vm-passthrough
	cpol sandboxWorkloads.enabled=true vfioManager.enabled=false
	cps() { requests '.path == "/apis/nvidia.com/v1/clusterpolicies"' | wc -l; }
	# 0: never again on its own
	loop_start GPUVM_WATCH_TIMEOUT=1 GPUVM_POLICY_RECHECK=0 GPUVM_KUBEVIRT=never
	until_ logged 'host config already has mode vm-passthrough'
	[ "$(cps)" = 1 ]
	cpol sandboxWorkloads.enabled=true
	n=$(watch_calls)
	until_ at_least watch_calls $((n + 4))
	[ "$(annotation gpuvm.dev/warning)" = absent ]
	[ "$(cps)" = 1 ]
	# a change the pass reads (the operator's label): the pass, and the policy read again
	label nvidia.com/gpu.deploy.vfio-manager=true
	until_ annotated gpuvm.dev/warning vfio-manager
	loop_stop
	# 2 s: the pass again at the first window's end 2 s after its read, which finds the edit
	cpol sandboxWorkloads.enabled=true vfioManager.enabled=false
	admin_annotate gpuvm.dev/warning-
	: >"$API/requests.jsonl"
	loop_start GPUVM_WATCH_TIMEOUT=1 GPUVM_POLICY_RECHECK=2 GPUVM_KUBEVIRT=never
	until_ at_least cps 1
	cpol sandboxWorkloads.enabled=true
	until_ annotated gpuvm.dev/warning vfio-manager
	loop_stop
	[ "$(get_node_calls)" = 0 ]
	[ "$(list_calls)" = 1 ]
	grep -q "warning: the GPU Operator's vfio-manager runs on this node (ClusterPolicy cluster-policy enables it" "$LOG"
}

@test "watch: 410 Gone (an ERROR event, or the answer) reads the node again, decides nothing again" {
	node container
	fault '{"path": "/api/v1/nodes", "verb": "watch", "code": 410, "reason": "Expired", "message": "too old resource version: 1 (7)", "error_event": true, "times": 1}'
	loop_start GPUVM_WATCH_TIMEOUT=1
	until_ logged 'too old (410 Expired: too old resource version: 1 (7))'
	until_ at_least list_calls 2
	fault '{"path": "/api/v1/nodes", "verb": "watch", "code": 410, "reason": "Gone", "message": "gone", "times": 1}'
	until_ at_least list_calls 3
	until_ at_least watch_calls 4
	loop_stop
	[ "$(grep -c 'host config already has mode container' "$LOG")" = 1 ]
	[ "$(requests '.method != "GET"' | wc -l)" = 0 ]
}

@test "watch: 429 waits its Retry-After; 5xx backs off doubling, with jitter, to its cap; a token rotated on disk is read" {
	node container
	fault '{"path": "/api/v1/nodes", "verb": "watch", "code": 429, "reason": "TooManyRequests", "message": "too many requests, please try again later", "headers": {"Retry-After": "2"}, "times": 1}'
	loop_start GPUVM_WATCH_TIMEOUT=1 GPUVM_BACKOFF_BASE=1 GPUVM_BACKOFF_MAX=4
	until_ at_least watch_calls 2
	assert_log() { grep -q "$1" "$LOG" || { cat "$LOG"; false; }; }
	assert_log 'the watch of node gpu-node-1 failed (HTTP 429: 429 TooManyRequests: too many requests, please try again later): again in 2s'
	# the next watch 2 s after the 429 (its Retry-After), not the backoff's 1 s at most
	jq -s '[.[] | select(.verb == "watch")] | .[1].at - .[0].at' "$API/requests.jsonl" >"$K/gap"
	jq -e '. >= 2' "$K/gap"
	# 5xx three times: waits of 0-1 s, 1-2 s, and 1-2 s again (the second half of 4 s, capped
	# at BACKOFF_MAX 2, not 2-4 s), then a watch again
	loop_stop
	: >"$API/requests.jsonl"
	fault '{"path": "/api/v1/nodes", "verb": "watch", "code": 503, "reason": "ServiceUnavailable", "message": "etcd", "times": 3}'
	loop_start GPUVM_WATCH_TIMEOUT=1 GPUVM_BACKOFF_BASE=1 GPUVM_BACKOFF_MAX=2
	until_ at_least watch_calls 4
	grep -o 'HTTP 503: 503 ServiceUnavailable: etcd): again in [0-9]*s' "$LOG" | grep -o '[0-9]*s$' >"$K/waits"
	[ "$(wc -l <"$K/waits")" = 3 ]
	grep -qx '[01]s' <<<"$(sed -n 1p "$K/waits")"
	grep -qx '[12]s' <<<"$(sed -n 2p "$K/waits")"
	grep -qx '[12]s' <<<"$(sed -n 3p "$K/waits")"
	[ "$(requests '.verb == "watch" and .code == 200' | wc -l)" -ge 1 ]
	# the token rotates on disk and the old one stops working: the next window reads the new
	printf '%s\n' "rotated-token $SA_USER" >"$API/tokens"
	echo rotated-token >"$API/token"
	n=$(requests '.verb == "watch" and .code == 200 and .user == "'"$SA_USER"'"' | wc -l)
	until_ at_least ok_watches $((n + 2))
	loop_stop
	[ "$(requests '.code == 401' | wc -l)" -le 1 ]
	[ "$(get_node_calls)" = 0 ]
	[ "$(requests '.method != "GET"' | wc -l)" = 0 ]
}

@test "watch: an API server restart: the watch cut, refused connections waited out, the node read again, nothing decided twice" {
	mkdir -p "$ROOT/run/gpuvm-reboot"
	node vm-passthrough
	loop_start GPUVM_WATCH_TIMEOUT=30 GPUVM_BACKOFF_BASE=1 GPUVM_BACKOFF_MAX=2 GPUVM_RESYNC_SPREAD=1
	until_ annotated gpuvm.dev/reboot-required true
	until_ watch_open
	: >"$API/requests.jsonl"
	# the server goes (its connections cut) and comes back on its port; while it is away the
	# loop's reads are refused and waited out
	kill "$(cat "$API/pid")"
	until_ logged 'the watch was cut'
	until_ logged "cannot list node $NODE: GET /api/v1/nodes?fieldSelector=metadata.name%3D$NODE&resourceVersion=0: curl: (7)"
	standin_restart
	until_ at_least list_calls 1
	until_ watch_open
	loop_stop
	# nothing decided twice: no patch, no Event, the request as it was
	[ "$(requests '.method != "GET"' | wc -l)" = 0 ]
	[ "$(annotation gpuvm.dev/requested)" = vm-passthrough@11111111-1111-1111-1111-111111111111 ]
	[ "$(grep -c 'host config mode container -> vm-passthrough' "$LOG")" = 1 ]
}

@test "watch: a pass in the middle of a window leaves the heartbeat the rest of the window" {
	node container
	loop_start GPUVM_WATCH_TIMEOUT=20 GPUVM_ALIVE_MAX=1
	until_ logged 'host config already has mode container'
	label nvidia.com/gpu.workload.config=vm-passthrough
	until_ conf_is vm-passthrough
	# a pass allows 1 s a step (GPUVM_ALIVE_MAX); the window it ran in, 20 s and more
	sleep 3
	run env GPUVM_HEARTBEAT="$K/heartbeat" "$MIRROR" --alive
	assert_success
	[ "$(cut -d' ' -f2 "$K/heartbeat")" -ge 20 ]
	loop_stop
}

# The selection (gpuvm.dev/desired-gpus into gpus=): the loop guard covers it as the mode.
@test "selection: the annotation into gpus=, the reboot asked once for MODE+GPUS; the boot that brings it ends it" {
	mkdir -p "$ROOT/run/gpuvm-reboot"
	node vm-passthrough gpuvm.dev/desired-gpus=0000:01:00.0
	mirror --once
	assert_success
	[ "$(cat "$CONF")" = "$(printf '# provisioned\nmode=vm-passthrough\ngpus=0000:01:00.0')" ]
	[ "$(annotation gpuvm.dev/requested)" = vm-passthrough+0000:01:00.0@11111111-1111-1111-1111-111111111111 ]
	[ "$(cat "$ROOT/$SENT.request")" = vm-passthrough+0000:01:00.0@11111111-1111-1111-1111-111111111111 ]
	events | grep -qx 'Normal RebootRequested: the next boot puts the GPUs in vm-passthrough with gpus=0000:01:00.0 .*'
	: >"$API/requests.jsonl"
	mirror --once
	assert_success
	[ "$(annotate_calls)" = 0 ]
	# the boot brought the mode, not the selection: judged once, never asked again
	reboot
	bootjson vm-passthrough ok conf
	mirror --once
	assert_failure
	assert_output --partial "error: the reboot asked for mode vm-passthrough with gpus=0000:01:00.0 (in boot 11111111-1111-1111-1111-111111111111) did not bring it: this boot ran mode vm-passthrough with gpus='', not '0000:01:00.0'"
	[ "$(annotation gpuvm.dev/error)" = selection-not-applied ]
	[ ! -e "$ROOT/$SENT" ]
	# the next boot brings both: the request done, the marks gone, nothing after
	reboot
	GPUS=0000:01:00.0 bootjson vm-passthrough ok conf
	mirror --once
	assert_success
	assert_output --partial "brought mode vm-passthrough with gpus=0000:01:00.0"
	for a in requested error reboot-required; do
		[ "$(annotation "gpuvm.dev/$a")" = absent ]
	done
	: >"$API/requests.jsonl"
	mirror --once
	assert_success
	[ "$(annotate_calls)" = 0 ]
	# another selection in the same mode: the mode needs no boot, the selection does
	admin_annotate gpuvm.dev/desired-gpus=numa:0
	mirror --once
	assert_success
	assert_output --partial "reboot: needed: this boot runs gpus='0000:01:00.0' (/run/gpuvm/state.json), the file says gpus='numa:0'"
	[ "$(annotation gpuvm.dev/requested)" = vm-passthrough+numa:0@22222222-2222-2222-2222-000000000002 ]
	[ "$(request_calls)" = 2 ]
}

@test "selection: a node booted with it asks nothing; a record without a selection part means none" {
	mkdir -p "$ROOT/run/gpuvm-reboot"
	printf 'mode=vm-passthrough\n' >"$CONF"
	GPUS=0000:01:00.0 bootjson vm-passthrough ok conf
	node vm-passthrough gpuvm.dev/desired-gpus=0000:01:00.0
	mirror --once
	assert_success
	grep -qx 'gpus=0000:01:00.0' "$CONF"
	[ "$(request_calls)" = 0 ]
	[ ! -e "$ROOT/$SENT" ]
	# a request of the format before the selection: MODE@BOOT_ID, brought by a boot with none
	rm "$CONF"
	printf 'mode=vm-passthrough\n' >"$CONF"
	bootjson vm-passthrough ok conf
	node vm-passthrough gpuvm.dev/requested=vm-passthrough@00000000-0000-0000-0000-00000000000a
	: >"$API/requests.jsonl"
	mirror --once
	assert_success
	assert_output --partial "brought mode vm-passthrough (requested in boot 00000000-0000-0000-0000-00000000000a): request done"
	[ "$(annotation gpuvm.dev/requested)" = absent ]
}

@test "selection: an empty annotation removes gpus= (the file's other lines kept), the reboot asked once; an absent one leaves the file's gpus=" {
	mkdir -p "$ROOT/run/gpuvm-reboot"
	printf '# provisioned\nmode=vm-passthrough\ngpus=0000:01:00.0\nnvswitch=host\n' >"$CONF"
	chmod 0640 "$CONF"
	GPUS=0000:01:00.0 bootjson vm-passthrough ok conf
	node vm-passthrough gpuvm.dev/desired-gpus=
	mirror --once
	assert_success
	assert_output --partial "removed gpus='0000:01:00.0' from the host config (no selection)"
	[ "$(cat "$CONF")" = "$(printf '# provisioned\nmode=vm-passthrough\nnvswitch=host')" ]
	[ "$(stat -c %a "$CONF")" = 640 ]
	[ "$(annotation gpuvm.dev/requested)" = vm-passthrough@11111111-1111-1111-1111-111111111111 ]
	: >"$API/requests.jsonl"
	mirror --once
	assert_success
	[ "$(annotate_calls)" = 0 ]
	# the boot without a selection ends the request
	reboot
	bootjson vm-passthrough ok conf
	mirror --once
	assert_success
	assert_output --partial "brought mode vm-passthrough (requested in boot 11111111-1111-1111-1111-111111111111): request done"
	[ "$(annotation gpuvm.dev/requested)" = absent ]
	# absent: a gpus= the host's owner wrote is not the mirror's: kept, no reboot asked for,
	# whatever this boot runs
	printf 'gpus=0000:01:00.0\n' >>"$CONF"
	admin_annotate gpuvm.dev/desired-gpus-
	: >"$API/requests.jsonl"
	mirror --once
	assert_success
	[ "$(grep -c '^gpus=0000:01:00.0$' "$CONF")" = 1 ]
	refute_output --partial "removed gpus="
	[ "$(annotation gpuvm.dev/requested)" = absent ]
	[ "$(annotate_calls)" = 0 ]
}

@test "selection: the boot line pins another selection (exit 6): the file written, no request, the error said; unpinned, the request made once" {
	mkdir -p "$ROOT/run/gpuvm-reboot" "$ROOT/etc/default"
	printf 'GRUB_CMDLINE_LINUX="quiet gpuvm.gpus=numa:0"\n' >"$ROOT/etc/default/grub"
	printf 'mode=vm-passthrough\n' >"$CONF"
	bootjson vm-passthrough ok conf
	node vm-passthrough gpuvm.dev/desired-gpus=0000:01:00.0
	mirror --once
	assert_failure 1
	assert_output --partial "the selection cannot take effect until gpuvm.gpus= is gone from the boot loader's line; no reboot asked for"
	[ "$(annotation gpuvm.dev/error)" = cmdline-overrides-gpus ]
	[ "$(annotation gpuvm.dev/requested)" = absent ]
	[ ! -e "$ROOT/$SENT" ]
	events | grep -q '^Warning GpusPinned: gpuvm.dev/error=cmdline-overrides-gpus: '
	grep -qx 'gpus=0000:01:00.0' "$CONF" # written all the same
	# the boot line cleared in the same boot: the request made, once
	unpin
	mirror --once
	assert_success
	[ "$(annotation gpuvm.dev/error)" = absent ]
	[ "$(annotation gpuvm.dev/requested)" = vm-passthrough+0000:01:00.0@11111111-1111-1111-1111-111111111111 ]
	[ -e "$ROOT/$SENT" ]
	: >"$API/requests.jsonl"
	mirror --once
	assert_success
	[ "$(annotate_calls)" = 0 ]
}

pinned_patches() {
	patches | grep -c '"gpuvm.dev/pinned"' || true
}

@test "watch: the pinned set published once, again when the host's records change, no request at rest" {
	printf 'mode=vm-passthrough\ngpus=0000:01:00.0\n' >"$CONF"
	"$GPUVM" --root "$ROOT" --cmdline "" apply >/dev/null 2>&1
	node vm-passthrough gpuvm.dev/desired-gpus=0000:01:00.0
	loop_start GPUVM_WATCH_TIMEOUT=1 GPUVM_KUBEVIRT=never
	until_ annotated gpuvm.dev/pinned 0000:01:00.0
	n=$(watch_calls)
	until_ at_least watch_calls $((n + 3))
	[ "$(pinned_patches)" = 1 ]
	[ "$(request_calls)" = 0 ]
	# a record more on the host: seen at the next renewal, patched once
	touch "$ROOT/run/gpuvm/pinned/0000:00:02.0"
	until_ annotated gpuvm.dev/pinned 0000:00:02.0,0000:01:00.0
	n=$(watch_calls)
	until_ at_least watch_calls $((n + 3))
	loop_stop
	[ "$(pinned_patches)" = 2 ]
	[ "$(annotate_calls)" = 2 ]
	[ "$(get_node_calls)" = 0 ]
}
