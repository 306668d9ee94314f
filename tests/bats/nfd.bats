#!/usr/bin/env bats
# shellcheck disable=SC2154 # $stderr and $output are set by bats' run
# NFD labels without the lag: gpuvm-nfd.path starts gpuvm-nfd.service when an apply replaces
# /run/gpuvm/state.json, so the feature file (status --nfd) follows a live switch at once;
# gpuvm-nfd.timer stays for the expiry. The unit files are checked by systemd-analyze verify,
# then run by a real systemd: a user manager of this machine's systemd in a mount namespace of
# its own (where /run/systemd/system says systemd is running, as a user manager needs), with
# the shipped units, their paths moved into the --root tree and nothing else changed.

load helpers

setup() {
	need "systemd (the systemd package)" test -x /lib/systemd/systemd
	mkfx workstation
	FEATURES="$BATS_TEST_TMPDIR/features.d"
	UNITS="$BATS_TEST_TMPDIR/cfg/systemd/user"
}

teardown() {
	[ -z "${SD_PID:-}" ] || { kill "$SD_PID" 2>/dev/null || true; wait "$SD_PID" 2>/dev/null || true; }
	[ -z "${RT:-}" ] || rm -rf "$RT"
}

@test "the unit files: systemd-analyze verify finds nothing, the man page they name included" {
	need "systemd-analyze" command -v systemd-analyze
	# the man page their Documentation= names, where man finds it
	mkdir -p "$BATS_TEST_TMPDIR/man/man8"
	cp "$TOP/doc/gpuvm.8" "$BATS_TEST_TMPDIR/man/man8/"
	MANPATH="$BATS_TEST_TMPDIR/man" run systemd-analyze verify "$TOP/systemd/gpuvm-nfd.path" \
		"$TOP/systemd/gpuvm-nfd.service" "$TOP/systemd/gpuvm-nfd.timer"
	assert_success
	assert_output ""
	grep -qx 'PathChanged=/run/gpuvm/state.json' "$TOP/systemd/gpuvm-nfd.path"
	grep -qx 'Unit=gpuvm-nfd.service' "$TOP/systemd/gpuvm-nfd.path"
}

# units: the shipped units as user units for the tree: the state file under $ROOT, gpuvm
# --root $ROOT, the feature file in $FEATURES.
units() {
	mkdir -p "$UNITS"
	sed "s|^PathChanged=/run/gpuvm/|PathChanged=$ROOT/run/gpuvm/|" \
		"$TOP/systemd/gpuvm-nfd.path" >"$UNITS/gpuvm-nfd.path"
	sed -e "s|^ConditionPathExists=/usr/sbin/gpuvm\$|ConditionPathExists=$GPUVM|" \
		-e "s|^Environment=FEATURES=.*|Environment=FEATURES=$FEATURES|" \
		-e "s| /usr/sbin/gpuvm status --nfd | $GPUVM --root $ROOT status --nfd |" \
		"$TOP/systemd/gpuvm-nfd.service" >"$UNITS/gpuvm-nfd.service"
	# every path moved: none of the host's is left
	run grep -n '/usr/sbin/gpuvm\|/etc/kubernetes\|=/run/' "$UNITS/gpuvm-nfd.path" "$UNITS/gpuvm-nfd.service"
	assert_failure 1
}

# manager: a systemd user manager whose first unit is gpuvm-nfd.path; sctl: its systemctl.
manager() {
	RT=$(mktemp -d /tmp/gpuvm-nfd.XXXXXX) # short: the manager's socket path has a limit
	case "$BATS_TEST_TMPDIR/ $TOP/ $RT/" in
	/run/*) skip "the test's files are under /run, which the manager's namespace replaces" ;;
	esac
	need "unshare (util-linux)" command -v unshare
	need "root (a mount namespace)" [ "$(id -u)" -eq 0 ]
	# Its own /run: a tmpfs with /run/systemd/system, in a mount namespace of its own; the
	# host's /run is not touched.
	XDG_RUNTIME_DIR=$RT XDG_CONFIG_HOME="$BATS_TEST_TMPDIR/cfg" \
		unshare -m --propagation private sh -c \
		'mount -t tmpfs tmpfs /run && mkdir -p /run/systemd/system &&
		 exec /lib/systemd/systemd --user --unit=gpuvm-nfd.path --log-target=console' \
		>"$BATS_TEST_TMPDIR/manager.log" 2>&1 3>&- &
	SD_PID=$!
	for _ in $(seq 100); do
		[ "$(sctl is-active gpuvm-nfd.path 2>/dev/null)" = active ] && return 0
		kill -0 "$SD_PID" 2>/dev/null || break
		sleep 0.1
	done
	cat "$BATS_TEST_TMPDIR/manager.log" >&2
	fail "the user manager did not start gpuvm-nfd.path"
}

sctl() {
	XDG_RUNTIME_DIR=$RT systemctl --user "$@"
}

# says MODE: within 10 s, the feature file says that mode.
says() {
	for _ in $(seq 100); do
		grep -qx "feature.node.kubernetes.io/gpuvm-mode=$1" "$FEATURES/gpuvm" 2>/dev/null && return 0
		sleep 0.1
	done
	cat "$FEATURES/gpuvm" >&2 || true
	sctl status gpuvm-nfd.path gpuvm-nfd.service >&2 || true
	fail "the feature file does not say gpuvm-mode=$1"
}

@test "systemd: an apply, then a live switch, rewrite the feature file at once; other files do not" {
	units
	manager
	[ ! -e "$FEATURES/gpuvm" ] # nothing changed yet: the path unit started nothing
	gv --cmdline "gpuvm.mode=vm-passthrough" apply
	assert_success
	says vm-passthrough
	grep -qx 'feature.node.kubernetes.io/gpuvm-result=ok' "$FEATURES/gpuvm"
	grep -q '^# +expiry-time=' "$FEATURES/gpuvm"
	gv --cmdline "gpuvm.mode=container" apply --live
	assert_success
	says container
	# What changes no state starts nothing: another file of /run/gpuvm, status.
	rm "$FEATURES/gpuvm"
	echo x >"$ROOT/run/gpuvm/other"
	gv status
	sleep 1
	[ ! -e "$FEATURES/gpuvm" ]
	[ -z "$(find "$FEATURES" -name '.*')" ] # the service's temporary renamed, none left
}
