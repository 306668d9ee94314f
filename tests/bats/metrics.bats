#!/usr/bin/env bats
# shellcheck disable=SC2154 # $stderr and $output are set by bats' run
# The metrics file, /run/gpuvm/metrics/gpuvm.prom, read by Debian's real node-exporter: one
# prometheus-node-exporter for the whole file, with the textfile collector alone, on
# 127.0.0.1 and a free port, pointed at the tree's run/gpuvm/metrics, the directory gpuvm
# writes; each test runs the real binary on a --root fixture tree (the same path every time)
# and scrapes it with curl. Every gpuvm sample of the file must come back with its labels and
# value, none more, and node_textfile_scrape_error must be 0: node-exporter says 1 when a
# file does not parse (the last test feeds it one).

load helpers

# The tree of every test, at one path: node-exporter reads its metrics directory.
FXROOT="$BATS_FILE_TMPDIR/root"
GPU=0000:01:00.0

setup_file() {
	command -v prometheus-node-exporter >/dev/null || return 0 # each test skips, saying why
	local port tries=0 log="$BATS_FILE_TMPDIR/node-exporter.log"
	while [ $tries -lt 5 ]; do
		tries=$((tries + 1))
		# a port the kernel found free; another taker before node-exporter's bind is retried
		port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
		prometheus-node-exporter --collector.disable-defaults --collector.textfile \
			--collector.textfile.directory="$FXROOT/run/gpuvm/metrics" \
			--web.listen-address="127.0.0.1:$port" >"$log" 2>&1 3>&- &
		echo $! >"$BATS_FILE_TMPDIR/node-exporter.pid"
		for _ in $(seq 50); do
			if curl -sf "http://127.0.0.1:$port/metrics" >/dev/null; then
				echo "$port" >"$BATS_FILE_TMPDIR/node-exporter.port"
				return 0
			fi
			kill -0 "$(cat "$BATS_FILE_TMPDIR/node-exporter.pid")" 2>/dev/null || break
			sleep 0.1
		done
		kill "$(cat "$BATS_FILE_TMPDIR/node-exporter.pid")" 2>/dev/null || true
	done
	echo "node-exporter did not start:" >&2
	cat "$log" >&2
	return 1
}

teardown_file() {
	local pid
	[ -e "$BATS_FILE_TMPDIR/node-exporter.pid" ] || return 0
	pid=$(cat "$BATS_FILE_TMPDIR/node-exporter.pid")
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}

setup() {
	need "prometheus-node-exporter" command -v prometheus-node-exporter
	need "curl" command -v curl
	[ -e "$BATS_FILE_TMPDIR/node-exporter.port" ] || fail "node-exporter is not running"
	PORT=$(cat "$BATS_FILE_TMPDIR/node-exporter.port")
	PROM="$FXROOT/run/gpuvm/metrics/gpuvm.prom"
}

# fx SCENARIO: the fixture tree at $FXROOT (ROOT for gv).
fx() {
	ROOT=$FXROOT
	rm -rf "$ROOT"
	"$TOP/tests/fixture/mkfixture" "$ROOT" "$1" >/dev/null
}

# scrape: node-exporter's page, as it serves it now, in $SCRAPE; its textfile collector
# read the tree's directory without an error.
scrape() {
	SCRAPE="$BATS_TEST_TMPDIR/scrape"
	curl -sf "http://127.0.0.1:$PORT/metrics" >"$SCRAPE"
	grep -qx 'node_textfile_scrape_error 0' "$SCRAPE" || {
		grep textfile "$SCRAPE" >&2
		cat "$BATS_FILE_TMPDIR/node-exporter.log" >&2
		fail "node-exporter could not read $PROM"
	}
}

# served: every gpuvm sample of the file is on node-exporter's page with the same labels and
# value (node-exporter sorts the labels and writes numbers its own way: compared as parsed),
# and the page has no gpuvm sample the file lacks.
served() {
	scrape
	python3 - "$PROM" "$SCRAPE" <<'EOF'
import re, sys

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?')

def samples(path):
    out = {}
    with open(path, encoding='utf-8') as f:
        for line in f:
            line = line.rstrip('\n')
            if not line.startswith('gpuvm_'):
                continue
            m = SAMPLE.match(line)
            if not m:
                sys.exit('not a sample: %r' % line)
            labels = m.group(2) or ''
            pairs = LABEL.findall(labels)
            if ''.join('%s="%s",' % p for p in pairs).rstrip(',') != labels.rstrip(','):
                sys.exit('labels not read whole: %r' % line)
            out[(m.group(1), tuple(sorted(pairs)))] = float(m.group(3))
    return out

file, page = samples(sys.argv[1]), samples(sys.argv[2])
bad = ['missing or other value: %s %s (file %s, page %s)' % (k[0], k[1], v, page.get(k))
       for k, v in file.items() if page.get(k) != v]
bad += ['on the page only: %s %s' % k for k in page if k not in file]
if not file:
    bad.append('no gpuvm sample in the file')
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
EOF
}

# value NAME{LABELS}: the value node-exporter serves for that sample (labels in its order:
# sorted by name; the key taken as it is, no awk escapes).
value() {
	K="$1" awk 'index($0, ENVIRON["K"] " ") == 1 { print $2 }' "$SCRAPE"
}

@test "apply in each mode and live: node-exporter serves every gpuvm sample, with its labels and value" {
	local mode
	for mode in container vm-passthrough vm-vgpu; do
		fx workstation
		gv --cmdline "gpuvm.mode=$mode" apply
		assert_success
		served
		[ "$(value "gpuvm_mode{mode=\"$mode\"}")" = 1 ]
		[ "$(grep -c '^gpuvm_mode{.*} 1$' "$SCRAPE")" = 1 ]
		[ "$(value 'gpuvm_run_info{call="apply",command="apply",kernel="6.1.0-99-amd64"}')" = 1 ]
		[ "$(value "gpuvm_mode_info{mode=\"$mode\",source=\"cmdline\"}")" = 1 ]
		[ "$(value 'gpuvm_info{version="'"$("$GPUVM" --version | cut -d' ' -f2)"'"}')" = 1 ]
		[ "$(value 'gpuvm_iommu_active')" = 1 ]
		[ "$(value 'gpuvm_run_errors')" = 0 ]
		# the time of the run: within a minute of now
		now=$(date +%s)
		t=$(printf '%.0f' "$(value gpuvm_run_timestamp_seconds)")
		[ $((now - t)) -ge 0 ] && [ $((now - t)) -lt 60 ]
		[ "$(stat -c %a "$PROM")" = 644 ]
		[ -z "$(find "$ROOT/run/gpuvm" -name '.*')" ] # no temporary file left
	done
	# the last, vm-vgpu: the GPU reserved for nvidia, the audio function left
	[ "$(value 'gpuvm_result{result="ok"}')" = 1 ]
	[ "$(value 'gpuvm_device_info{action="reserve",address="0000:01:00.0",driver_after="",driver_before="nouveau",pci_id="10de:1e87",result="unverified",role="gpu",target="nvidia"}')" = 1 ]
	# vm-passthrough: four functions bound, their group viable; then a live switch to
	# container from it (the state file before it says vm-passthrough)
	fx workstation
	gv --cmdline "gpuvm.mode=vm-passthrough" apply
	served
	[ "$(grep -c '^gpuvm_device_info{action="bind",.*,target="vfio-pci"} 1$' "$SCRAPE")" = 4 ]
	[ "$(value 'gpuvm_device_info{action="bind",address="0000:01:00.1",driver_after="",driver_before="snd_hda_intel",pci_id="10de:10f8",result="unverified",role="companion",target="vfio-pci"}')" = 1 ]
	[ "$(value 'gpuvm_iommu_group_viable{group="2"}')" = 1 ]
	gv --cmdline "gpuvm.mode=container" apply --live
	assert_success
	served
	[ "$(value 'gpuvm_run_info{call="live",command="apply",kernel="6.1.0-99-amd64"}')" = 1 ]
	[ "$(value 'gpuvm_mode{mode="container"}')" = 1 ]
}

@test "a failed bind: result failed, the device failed, the errors counted" {
	fx workstation
	# driver_override that cannot be written (a directory): the group's bind fails
	rm "$ROOT/sys/bus/pci/devices/$GPU/driver_override"
	mkdir "$ROOT/sys/bus/pci/devices/$GPU/driver_override"
	gv --cmdline "gpuvm.mode=vm-passthrough" apply
	assert_failure 1
	served
	[ "$(jq -r .result "$ROOT/run/gpuvm/state.json")" = failed ]
	[ "$(value 'gpuvm_result{result="failed"}')" = 1 ]
	[ "$(value 'gpuvm_result{result="ok"}')" = 0 ]
	[ "$(value 'gpuvm_device_info{action="bind",address="0000:01:00.0",driver_after="nouveau",driver_before="nouveau",pci_id="10de:1e87",result="failed",role="gpu",target="vfio-pci"}')" = 1 ]
	errors=$(jq '.errors | length' "$ROOT/run/gpuvm/state.json")
	[ "$errors" -gt 0 ]
	[ "$(value gpuvm_run_errors)" = "$errors" ]
}

@test "a held boot, then the root's config: the boot calls' files, no next-boot judgement" {
	fx workstation
	nodriver $GPU # before udev
	mkdir -p "$ROOT/proc/sys/kernel/random"
	echo 6f1d9c1e-0b7a-4c55-9d8e-3a2b1c0d9e8f >"$ROOT/proc/sys/kernel/random/boot_id"
	gv --cmdline "quiet" apply --defer
	assert_success
	served
	[ "$(value 'gpuvm_run_info{call="defer",command="apply",kernel="6.1.0-99-amd64"}')" = 1 ]
	[ "$(value 'gpuvm_result{result="waiting"}')" = 1 ]
	[ "$(value 'gpuvm_device_info{action="hold",address="0000:01:00.0",driver_after="",driver_before="",pci_id="10de:1e87",result="held",role="gpu",target="gpuvm-hold"}')" = 1 ]
	run grep -q '^gpuvm_next_boot_info' "$SCRAPE"
	assert_failure 1
	# the last call reads the root's config: vm-passthrough, from its file and line
	sysroot="$BATS_TEST_TMPDIR/sysroot"
	mkdir -p "$sysroot/etc/gpuvm"
	printf '# the label\nmode=vm-passthrough\n' >"$sysroot/etc/gpuvm/gpuvm.conf"
	gv --cmdline "quiet" apply --resume --sysroot "$sysroot"
	assert_success
	served
	[ "$(value 'gpuvm_run_info{call="resume",command="apply",kernel="6.1.0-99-amd64"}')" = 1 ]
	[ "$(value 'gpuvm_result{result="ok"}')" = 1 ]
	[ "$(value 'gpuvm_mode_info{mode="vm-passthrough",source="/etc/gpuvm/gpuvm.conf:2"}')" = 1 ]
	run grep -q '^gpuvm_next_boot_info' "$SCRAPE"
	assert_failure 1

	# On the running host (the root's config in the tree now), apply by hand judges the next
	# boot: the boot read the file; then a GRUB default pins the mode.
	mkdir -p "$ROOT/etc/gpuvm"
	printf 'mode=vm-passthrough\n' >"$ROOT/etc/gpuvm/gpuvm.conf"
	gv --cmdline "quiet" apply
	served
	[ "$(value 'gpuvm_next_boot_info{mode="vm-passthrough",verdict="reads"}')" = 1 ]
	mkdir -p "$ROOT/etc/default"
	printf 'GRUB_CMDLINE_LINUX="gpuvm.mode=vm-vgpu"\n' >"$ROOT/etc/default/grub"
	gv --cmdline "quiet" apply
	served
	[ "$(value 'gpuvm_next_boot_info{mode="vm-vgpu",verdict="pinned"}')" = 1 ]
}

@test "what sysfs and a config path may hold is escaped: a quote, a backslash, a newline, controls" {
	local conf
	fx workstation
	# a driver name as a uevent may give it: quote, backslash, ESC, DEL, a byte of no UTF-8
	sed -i 's/^DRIVER=.*/DRIVER=nou"ve\\au\x1b[31m\x7f\xff/' "$ROOT/sys/bus/pci/devices/$GPU/uevent"
	# the host config named by a path with a newline and a quote: mode_source says it
	conf="$BATS_TEST_TMPDIR/we\"ird
dir"
	mkdir -p "$conf"
	printf 'mode=vm-passthrough\n' >"$conf/gpuvm.conf"
	gv --cmdline "" --config "$conf/gpuvm.conf" apply
	served
	grep -qF 'driver_before="nou\"ve\\au?[31m??"' "$PROM"
	grep -qF 'source="'"$BATS_TEST_TMPDIR"'/we\"ird\ndir/gpuvm.conf:1"' "$PROM"
	[ "$(value 'gpuvm_mode_info{mode="vm-passthrough",source="'"$BATS_TEST_TMPDIR"'/we\"ird\ndir/gpuvm.conf:1"}')" = 1 ]
	# no control byte in the file but the newlines that end its lines
	[ "$(tr -d '\n' <"$PROM" | LC_ALL=C grep -c '[[:cntrl:]]')" = 0 ]
}

@test "a symlinked metrics directory is not followed; the state file and the exit status stand" {
	secret
	fx workstation
	mkdir -p "$ROOT/run/gpuvm"
	ln -s "$(dirname "$SECRET")" "$ROOT/run/gpuvm/metrics"
	ln -s "$SECRET" "$(dirname "$SECRET")/gpuvm.prom" 2>/dev/null || true
	gv --cmdline "gpuvm.mode=vm-passthrough" apply
	assert_success
	assert_regex "$stderr" "cannot write /run/gpuvm/metrics/gpuvm.prom: a directory on its path is a symbolic link \(not followed\)"
	secret_intact
	[ "$(jq -r .result "$ROOT/run/gpuvm/state.json")" = ok ]
	rm "$ROOT/run/gpuvm/metrics"
}

@test "node-exporter says node_textfile_scrape_error 1 for a file that does not parse: the check can fail" {
	fx workstation
	gv --cmdline "gpuvm.mode=vm-passthrough" apply
	served
	# cut inside a label value: the file no longer parses
	head -c "$(($(grep -b -m1 'driver_before=' "$PROM" | cut -d: -f1) + 20))" "$PROM" >"$PROM.cut"
	mv "$PROM.cut" "$PROM"
	run scrape
	assert_failure
	grep -qx 'node_textfile_scrape_error 1' "$SCRAPE"
	rm "$PROM"
}
