#!/usr/bin/env bats
# shellcheck disable=SC2154 # $stderr and $output are set by bats' run
# gpuvm dump: what gpuvm reads to decide, as a --root tree in one tar. Unpacked, it is a root
# that gpuvm plans on as on the host it came from (every fixture, each mode; the root disk
# and the console; a vfio variant driver), a dump of it is the same archive, it names no
# person or site, it is safe to unpack, and making it writes nothing. plan --mode and plan
# --in-use (read-only), the dumps of tests/dumps replayed, and scripts/realhost.sh on a tree.

load helpers

MODES="container vm-passthrough vm-vgpu"

# The trees in the test's own directory (tests/tap-run puts it on a tmpfs where there is one:
# a fixture of 300 functions is some 10,000 files).
setup() {
	T=$BATS_TEST_TMPDIR
	O=''
}

teardown() {
	[ -z "$O" ] || rm -rf "$O"
}

# dump [ARGS...]: gpuvm --root $ROOT [ARGS] dump --out $D.tar, unpacked into $D.
dump() {
	D=$T/dump
	rm -rf "$D" "$D.tar"
	mkdir -p "$D"
	run --separate-stderr "$GPUVM" --root "$ROOT" "$@" dump --out "$D.tar"
	assert_success
	tar -xf "$D.tar" -C "$D"
}

# same_plans [ARGS...]: in each mode the dump's plan is the tree's, to the byte, exit status
# too; ARGS go to the tree's runs only (a dump made with them holds them: --cmdline).
same_plans() {
	local m a b ra rb
	for m in $MODES; do
		ra=0 rb=0
		a=$("$GPUVM" --root "$ROOT" "$@" plan --mode "$m" --json 2>/dev/null) || ra=$?
		b=$("$GPUVM" --root "$D" plan --mode "$m" --json 2>/dev/null) || rb=$?
		[ "$ra" = "$rb" ] || fail "$m: exit status $ra on the tree, $rb on its dump"
		[ "$a" = "$b" ] || fail "$m: the plans differ: $(diff <(jq -S . <<<"$a") <(jq -S . <<<"$b") | head -n 20)"
	done
}

# listing DIR: every path under DIR, its type, size, mtime and link target: a write shows.
listing() {
	(cd "$1" && find . -printf '%p %y %s %T@ %l\n' | LC_ALL=C sort)
}

@test "every fixture, in each mode: its dump plans as the tree does, and a dump of the dump is the same archive" {
	local sc arg
	for sc in $("$TOP/tests/fixture/mkfixture" list); do
		arg=''
		case $sc in synthetic) arg=100 ;; hgx8-wide) arg=320 ;; esac
		# shellcheck disable=SC2086 # the scenario's argument, if any
		mkfx "$sc" $arg
		dump
		same_plans
		rm -f "$D.again.tar"
		"$GPUVM" --root "$D" dump --out "$D.again.tar"
		cmp "$D.tar" "$D.again.tar" || fail "$sc: a dump of its dump differs"
		rm -rf "$ROOT"
	done
}

@test "the root disk and the console that ids= meets: hostdev's reads are in the dump, --cmdline as its /proc/cmdline" {
	local cl="gpuvm.ids=8086:7ae0,8086:7aa8,8086:1533 console=ttyS0,115200n8"
	mkfx workstation
	# As refusals.bats: root on a USB disk through device-mapper, the console on the LPSS UART.
	mkdir -p "$ROOT/proc/self" "$ROOT/sys/dev/block" "$ROOT/sys/devices/virtual/block/dm-0/slaves" \
		"$ROOT/sys/class/block" "$ROOT/sys/class/tty"
	printf '21 1 0:20 / /proc rw - proc proc rw\n22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/mapper/vg-root rw\n' \
		>"$ROOT/proc/self/mountinfo"
	ln -s ../../devices/virtual/block/dm-0 "$ROOT/sys/dev/block/254:0"
	sda2=pci0000:00/0000:00:14.0/usb2/2-1/2-1:1.0/host0/target0:0:0/0:0:0:0/block/sda/sda2
	ln -s "../../devices/$sda2" "$ROOT/sys/class/block/sda2"
	ln -s "../../../../$sda2" "$ROOT/sys/devices/virtual/block/dm-0/slaves/sda2"
	ln -s ../../devices/pci0000:00/0000:00:1e.0/dw-apb-uart.0/tty/ttyS0 "$ROOT/sys/class/tty/ttyS0"
	dump --cmdline "$cl"
	same_plans --cmdline "$cl"
	"$GPUVM" --root "$D" plan --mode vm-passthrough --json >"$D.json" || true
	output=$(cat "$D.json")
	assert_regex "$(dev_field 0000:00:14.0 reason)" "the root file system's disk is behind it"
	assert_regex "$(dev_field 0000:00:1e.0 reason)" "a console= serial port is behind it"
	# mountinfo: the root's line only, masked (no such block device as vg-root); the links
	# as the tree has them
	[ "$(cat "$D/proc/self/mountinfo")" = "22 1 254:0 masked / masked - ext4 masked masked" ]
	[ "$(readlink "$D/sys/dev/block/254:0")" = ../../devices/virtual/block/dm-0 ]
	[ "$(readlink "$D/sys/devices/virtual/block/dm-0/slaves/sda2")" = "../../../../$sda2" ]
	[ "$(readlink "$D/sys/class/tty/ttyS0")" = ../../devices/pci0000:00/0000:00:1e.0/dw-apb-uart.0/tty/ttyS0 ]
	[ "$(cat "$D/proc/cmdline")" = "$cl" ]
	[ ! -e "$D/etc/cmdline.d" ]
}

@test "a root of btrfs (no device number of a disk): its source's kernel name is all of it kept, and replayed" {
	local cl="gpuvm.ids=8086:7ae0"
	mkfx workstation
	mkdir -p "$ROOT/proc/self" "$ROOT/sys/class/block"
	printf '30 1 0:31 /@rootfs / rw,relatime - btrfs /dev/sda2 rw,ssd,subvol=/@rootfs\n' >"$ROOT/proc/self/mountinfo"
	ln -s ../../devices/pci0000:00/0000:00:14.0/usb2/2-1/2-1:1.0/host0/target0:0:0/0:0:0:0/block/sda/sda2 \
		"$ROOT/sys/class/block/sda2"
	dump --cmdline "$cl"
	same_plans --cmdline "$cl"
	[ "$(cat "$D/proc/self/mountinfo")" = "30 1 0:31 masked / masked - btrfs /dev/sda2 masked" ]
	"$GPUVM" --root "$D" plan --mode vm-passthrough --json >"$D.json" || true
	output=$(cat "$D.json")
	assert_regex "$(dev_field 0000:00:14.0 reason)" "the root file system's disk is behind it"
}

@test "a vfio variant driver and vfio-pci's presence: the dump's own module indexes answer as the host's did" {
	mkfx arm64-smmu
	fx_kmod "$ROOT" vfio_pci "alias=vfio_pci:v*d*sv*sd*bc*sc*i*"
	fx_kmod "$ROOT" nvgrace_gpu_vfio_pci "alias=vfio_pci:v000010DEd00002342sv*sd*bc*sc*i*"
	fx_depmod "$ROOT"
	dump
	same_plans
	"$GPUVM" --root "$D" plan --mode vm-passthrough --json >"$D.json"
	output=$(cat "$D.json")
	[ "$(dev_field 0009:01:00.0 target)" = nvgrace_gpu_vfio_pci ]
	# One line: the GH200's exact modalias, and the answer; vfio_pci is there (modules.dep).
	m=$D/lib/modules/6.1.0-99-arm64
	[ "$(cat "$m/modules.alias")" = "alias vfio_pci:v000010DEd00002342sv000010DEsd000016EBbc03sc02i00 nvgrace_gpu_vfio_pci" ]
	[ "$(cat "$m/modules.dep")" = "kernel/vfio_pci.ko:" ]
	[ "$(jqr '[.modules[].name] | join(" ")')" = nvgrace_gpu_vfio_pci ]
	# check asks the module directory whether vfio-pci is there: the same findings on the
	# dump (none), and on a tree without it (vfio-pci missing) too.
	a=$("$GPUVM" --root "$ROOT" check --mode vm-passthrough --json) || true
	b=$("$GPUVM" --root "$D" check --mode vm-passthrough --json) || true
	[ "$(jq -c .findings <<<"$a")" = "$(jq -c .findings <<<"$b")" ]
	rm "$ROOT"/lib/modules/6.1.0-99-arm64/kernel/fake/vfio_pci.ko
	fx_depmod "$ROOT"
	dump
	a=$("$GPUVM" --root "$ROOT" check --mode vm-passthrough --json) || true
	b=$("$GPUVM" --root "$D" check --mode vm-passthrough --json) || true
	[ "$(jq -c .findings <<<"$a")" = "$(jq -c .findings <<<"$b")" ]
	assert_regex "$(jq -r '.findings[].what' <<<"$b")" "vfio-pci"
	[ ! -s "$D/lib/modules/6.1.0-99-arm64/modules.dep" ]
}

@test "a group member that is no PCI function, a function whose uevent cannot be read: replayed" {
	mkfx workstation
	g="$ROOT/sys/kernel/iommu_groups/2/devices"
	ln -s ../../../../devices/platform/ACPI0007:00 "$g/ACPI0007:00"
	same_fn=$(readlink -f "$ROOT/sys/bus/pci/devices/0000:01:00.2")
	rm "$same_fn/uevent" && mkdir "$same_fn/uevent" # read(2): EISDIR
	dump
	grep -q "^left out: /sys/devices/pci0000:00/0000:00:01.0/0000:01:00.2/uevent: cannot read: Is a directory$" \
		"$D/gpuvm-dump.txt"
	[ -f "$D/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.2/uevent" ] &&
		[ ! -s "$D/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.2/uevent" ]
	# The same decision; the reasons name the error the replay met (an empty uevent: EINVAL).
	for m in $MODES; do
		a=$("$GPUVM" --root "$ROOT" plan --mode "$m" --json 2>/dev/null) || true
		b=$("$GPUVM" --root "$D" plan --mode "$m" --json 2>/dev/null) || true
		[ "${a//(Is a directory)/(Invalid argument)}" = "$b" ]
		[ "$m" != vm-passthrough ] || output=$b
	done
	[ "$(jqr '.groups[0].blocked_by | join(",")')" = "0000:01:00.2,ACPI0007:00" ]
}

@test "nothing that names a person or a site: what is left out, what is masked" {
	mkfx gpu-nic
	secret=s3cret-site-name
	mkdir -p "$ROOT/etc/gpuvm"
	printf '# written by alice at %s\nmode=vm-passthrough\n  # another\nnvswitch=host\n' "$secret" >"$ROOT/etc/gpuvm/gpuvm.conf"
	printf 'BOOT_IMAGE=(lvm/%s--vg-root)/boot/vmlinuz root=UUID=3f1c2a9e-5b7d-4c1e-9a8f-2d6b1e0c4a7f ro ip=10.1.2.3::10.1.2.1:255.255.255.0:%s:eth0:off hostname=%s intel_iommu=on iommu=pt gpuvm.ids=10de:2204 rd.luks.uuid=%s "quoted=a b" quiet\n' \
		"$secret" "$secret" "$secret" "$secret" >"$ROOT/proc/cmdline"
	mkdir -p "$ROOT/etc/cmdline.d" "$ROOT/proc/sys/kernel/random" "$ROOT/run/gpuvm" "$ROOT/proc/self"
	# the root on LVM, its volume group named after the host; over NFS, a server's address
	printf '21 1 0:20 / /proc rw - proc proc rw\n22 1 254:0 /@%s / rw,relatime shared:1 - ext4 /dev/mapper/%s--vg-root rw,errors=remount-ro\n23 22 0:44 / / rw - nfs4 10.9.8.7:/export/%s rw,vers=4.2,addr=10.9.8.7\n' \
		"$secret" "$secret" "$secret" >"$ROOT/proc/self/mountinfo"
	printf 'rd.gpuvm.mode=container\nnfsroot=%s:/x\n' "$secret" >"$ROOT/etc/cmdline.d/10-gpuvm.conf"
	echo "$secret" >"$ROOT/etc/hostname"
	echo 0123456789abcdef0123456789abcdef >"$ROOT/etc/machine-id"
	echo 8b3e6c1a-7d2f-4e5b-9a0c-1f2e3d4c5b6a >"$ROOT/proc/sys/kernel/random/boot_id"
	printf '{"mode":"vm-passthrough","boot":{"boot_id":"8b3e6c1a-7d2f-4e5b-9a0c-1f2e3d4c5b6a"}}\n' >"$ROOT/run/gpuvm/boot.json"
	# an apply --live's state file: who held a GPU; the next boot's BLS entry, named by machine-id
	printf '{"mode":"container","boot":{"boot_id": "11111111-2222-4333-8444-555555555555"},"devices":[{"address":"0000:01:00.0","error":"in use: /dev/dri/card0 (0000:01:00.0) held by pid 4242 (%s) and 1 other process; its IOMMU group left as it was","holders":[{"pid": 4242,"comm":"%s","node":"/dev/dri/card0"}]}],"next_boot":{"mode_source":"/boot/loader/entries/0123456789abcdef0123456789abcdef-6.1.0.conf:3"}}\n' \
		"$secret" "$secret" >"$ROOT/run/gpuvm/state.json"
	printf '  90000000-9000ffff : %s-BMC\n' "$secret" >>"$ROOT/proc/iomem"
	dump
	same_plans
	# no file of the host's identity, no secret anywhere, no serial number in a config
	[ ! -e "$D/etc/hostname" ] && [ ! -e "$D/etc/machine-id" ]
	run grep -rl "$secret" "$D" "$D.tar"
	assert_failure
	run grep -rl "alice\|3f1c2a9e\|10.1.2.3\|8b3e6c1a\|10.9.8.7\|0123456789abcdef0123456789abcdef" "$D"
	assert_failure
	# the root's mount: IDs, device number, mount point and type; no source that is not a
	# block device's kernel name, no options
	[ "$(cat "$D/proc/self/mountinfo")" = "$(printf '22 1 254:0 masked / masked - ext4 masked masked\n23 22 0:44 masked / masked - nfs4 masked masked')" ]
	# the state file: no pid, no command, no machine-id
	output=$(cat "$D/run/gpuvm/state.json")
	[ "$(jqr '.devices[0].holders[0] | "\(.pid) \(.comm) \(.node)"')" = "0 - /dev/dri/card0" ]
	[ "$(jqr .devices[0].error)" = "in use: /dev/dri/card0 (0000:01:00.0) held by pid 0 (-) and 1 other process; its IOMMU group left as it was" ]
	[ "$(jqr .next_boot.mode_source)" = /boot/loader/entries/00000000000000000000000000000000-6.1.0.conf:3 ]
	# the config keeps its lines (mode_source names them), its comments empty
	[ "$(cat "$D/etc/gpuvm/gpuvm.conf")" = "$(printf '#\nmode=vm-passthrough\n  #\nnvswitch=host')" ]
	# the command line keeps every word, and the values gpuvm and the IOMMU setup read
	[ "$(cat "$D/proc/cmdline")" = 'BOOT_IMAGE=- root=- ro ip=- hostname=- intel_iommu=on iommu=pt gpuvm.ids=10de:2204 rd.luks.uuid=- "quoted=a b" quiet' ]
	[ "$(cat "$D/etc/cmdline.d/10-gpuvm.conf")" = "$(printf 'rd.gpuvm.mode=container\nnfsroot=-')" ]
	# boot_id: this boot's stands for itself in boot.json; another boot's is another
	[ "$(cat "$D/proc/sys/kernel/random/boot_id")" = 00000000-0000-4000-8000-000000000001 ]
	[ "$(jq -r .boot.boot_id "$D/run/gpuvm/boot.json")" = 00000000-0000-4000-8000-000000000001 ]
	[ "$(jq -r .boot.boot_id "$D/run/gpuvm/state.json")" = 00000000-0000-4000-8000-000000000002 ]
	# /proc/cpuinfo: the vendor's line; /proc/iomem: the GPUs' and framebuffers' lines only
	[ "$(cat "$D/proc/cpuinfo")" = "$(printf 'vendor_id\t: GenuineIntel')" ]
	[ "$(wc -l <"$ROOT/proc/iomem")" -gt 20 ] && [ "$(wc -l <"$D/proc/iomem")" -eq 0 ]
	# status on the dump knows this boot's record from another boot's, as on the tree
	a=$("$GPUVM" --root "$ROOT" status --json | jq -c '.next_boot.boot_json')
	b=$("$GPUVM" --root "$D" status --json | jq -c '.next_boot.boot_json')
	[ "$a" = "$b" ]
}

@test "the archive is safe to unpack: relative names, no '..', links kept relative and inside; a link out of the tree is left out" {
	mkfx sriov
	# a function's iommu_group pointing out of the tree, and an absolute link on the way
	d=$(readlink -f "$ROOT/sys/bus/pci/devices/0000:41:00.4")
	ln -sfn ../../../../../../../../../etc "$d/iommu_group"
	ln -sfn /etc "$ROOT/sys/class/iommu/evil"
	# a file of the host's where an attribute or a record of gpuvm's should be: never copied
	e=$(readlink -f "$ROOT/sys/bus/pci/devices/0000:41:00.5")
	ln -sfn /etc/passwd "$e/driver_override"
	mkdir -p "$ROOT/run/gpuvm"
	ln -sfn /etc/passwd "$ROOT/run/gpuvm/pending"
	dump
	run grep -rl "root:x:0:0" "$D" "$D.tar"
	assert_failure
	grep -q "^left out: /run/gpuvm/pending: cannot read: " "$D/gpuvm-dump.txt"
	grep -q "^left out: /sys/devices/.*/0000:41:00.5/driver_override: a link to /etc/passwd, outside the tree: not kept$" "$D/gpuvm-dump.txt"
	run tar -tf "$D.tar"
	assert_success
	refute_line --regexp '^/'
	refute_line --regexp '(^|/)\.\.(/|$)'
	# every link: relative, and where it leads stays inside the tree
	while IFS= read -r l; do
		t=$(readlink "$l")
		[ "${t#/}" = "$t" ] || fail "$l: absolute target $t"
		r=$(realpath -m "$(dirname "$l")/$t")
		case $r in "$D"/*) ;; *) fail "$l -> $t leaves the tree" ;; esac
	done < <(find "$D" -type l)
	[ ! -e "$D/sys/devices/pci0000:40/0000:40:01.1/0000:41:00.4/iommu_group" ]
	[ ! -e "$D/sys/class/iommu/evil" ] && [ ! -L "$D/sys/class/iommu/evil" ]
	grep -q "^left out: /sys/devices/.*/0000:41:00.4/iommu_group: a link to \.\./.*/etc, outside the tree: not kept$" "$D/gpuvm-dump.txt"
	grep -q "^left out: /sys/class/iommu/evil: a link to /etc, outside the tree: not kept$" "$D/gpuvm-dump.txt"
	# the kernel's own links as they are: relative, the function's PF and VFs
	[ "$(readlink "$D/sys/bus/pci/devices/0000:41:00.4")" = ../../../devices/pci0000:40/0000:40:01.1/0000:41:00.4 ]
	[ "$(readlink "$D/sys/devices/pci0000:40/0000:40:01.1/0000:41:00.4/physfn")" = ../0000:41:00.0 ]
	[ "$(readlink "$D/sys/devices/pci0000:40/0000:40:01.1/0000:41:00.0/virtfn3")" = ../0000:41:00.7 ]
	[ "$(head -c 2 "$D/sys/devices/pci0000:40/0000:40:01.1/0000:41:00.0/config" | od -An -tx1 | tr -d ' ')" = de10 ]
}

@test "making a dump writes nothing but the archive, a new file; it refuses /sys, /proc, /etc and a file that is there" {
	mkfx workstation
	listing "$ROOT" >"$BATS_TEST_TMPDIR/before"
	dump
	listing "$ROOT" >"$BATS_TEST_TMPDIR/after"
	diff "$BATS_TEST_TMPDIR/before" "$BATS_TEST_TMPDIR/after"
	# stdout, when it is not a terminal
	"$GPUVM" --root "$ROOT" dump | cmp - "$D.tar"
	# an archive never replaces a file
	echo keep >"$BATS_TEST_TMPDIR/there"
	run --separate-stderr "$GPUVM" --root "$ROOT" dump --out "$BATS_TEST_TMPDIR/there"
	assert_failure 1
	assert_regex "$stderr" "dump: --out .*/there: it exists: a dump never replaces a file"
	[ "$(cat "$BATS_TEST_TMPDIR/there")" = keep ]
	for p in /proc/gpuvm-dump.tar /sys/gpuvm-dump.tar /etc/gpuvm-dump.tar /etc/../etc/x.tar; do
		run --separate-stderr "$GPUVM" --root "$ROOT" dump --out "$p"
		assert_failure 1
		assert_regex "$stderr" "under /(proc|sys|etc), which a dump never writes"
		[ ! -e "$p" ]
	done
	# a device node is never written: it is there (O_EXCL)
	run --separate-stderr "$GPUVM" --root "$ROOT" dump --out /dev/null
	assert_failure 1
	assert_regex "$stderr" "it exists: a dump never replaces a file"
	run --separate-stderr "$GPUVM" --root "$ROOT" plan --out x
	assert_failure 2
	assert_regex "$stderr" "plan: --out is not an option of this command"
}

@test "a file past the dump's bound for one file: stopped, said, nothing written" {
	mkfx two-gpus
	head -c $((17 * 1024 * 1024)) /dev/zero >"$ROOT/proc/bus/pci/devices"
	run --separate-stderr "$GPUVM" --root "$ROOT" dump --out "$BATS_TEST_TMPDIR/big.tar"
	assert_failure 1
	assert_regex "$stderr" "gpuvm: error: dump: stopped at /proc/bus/pci/devices: a file larger than 16 MiB; nothing written"
	[ ! -e "$BATS_TEST_TMPDIR/big.tar" ]
}

@test "plan --mode: the plan of another mode, said as from --mode; a mode that is none is a usage error" {
	mkfx workstation
	gv --cmdline "gpuvm.mode=container" plan --mode vm-passthrough --json
	assert_success
	[ "$(jqr .mode)" = vm-passthrough ]
	[ "$(jqr .mode_source)" = --mode ]
	[ "$(dev_field 0000:01:00.0 action)" = bind ]
	gv plan --mode vm-passthru
	assert_failure 2
	assert_regex "$stderr" "--mode: unknown mode 'vm-passthru'"
}

@test "plan --in-use: who holds what the plan would change, as apply --live finds it, and not a write (no unbindLock)" {
	mkfx two-gpus # both RTX 4090 on nvidia, in group 2
	gpu=0000:03:00.0
	mkdir -p "$ROOT/sys/bus/pci/devices/$gpu/drm/card1" "$ROOT/proc/4242/fd" \
		"$ROOT/proc/driver/nvidia/gpus/$gpu" "$ROOT/proc/driver/nvidia/gpus/0000:04:00.0"
	printf '226:1\n' >"$ROOT/sys/bus/pci/devices/$gpu/drm/card1/dev"
	printf 'Xorg\n' >"$ROOT/proc/4242/comm"
	: >"$ROOT/proc/driver/nvidia/gpus/$gpu/unbindLock"
	: >"$ROOT/proc/driver/nvidia/gpus/0000:04:00.0/unbindLock"
	# free: nothing in use, and no unbindLock asked (apply --live would write it)
	listing "$ROOT" >"$BATS_TEST_TMPDIR/before"
	gv plan --mode vm-passthrough --in-use --json
	assert_success
	[ "$(jqr '[.devices[] | select(.in_use != null)] | length')" = 0 ]
	[ "$(jqr '[.devices[] | select(.action == "bind")] | length')" = 4 ]
	gv plan --mode container --in-use --json
	assert_success
	[ "$(jqr .live.refused)" = 0 ]
	listing "$ROOT" >"$BATS_TEST_TMPDIR/after"
	diff "$BATS_TEST_TMPDIR/before" "$BATS_TEST_TMPDIR/after"
	# held
	ln -s /dev/dri/card1 "$ROOT/proc/4242/fd/5"
	listing "$ROOT" >"$BATS_TEST_TMPDIR/before"
	gv plan --mode vm-passthrough --in-use --json
	assert_failure 7
	[ "$(jqr .live.refused)" = 1 ]
	assert_regex "$(dev_field $gpu in_use)" "^in use: /dev/dri/card1 \\($gpu\\) held by pid 4242 \\(Xorg\\); its IOMMU group left as it is$"
	assert_regex "$(dev_field 0000:04:00.0 in_use)" "^in use: /dev/dri/card1 \\($gpu\\)"
	[ "$(dev_field $gpu 'holders[0].comm')" = Xorg ]
	[ "$(dev_field $gpu action)" = bind ]
	gv plan --mode vm-passthrough --in-use
	assert_failure 7
	assert_output --partial "in use now (apply --live would leave 1 group as it is):"
	listing "$ROOT" >"$BATS_TEST_TMPDIR/after"
	diff "$BATS_TEST_TMPDIR/before" "$BATS_TEST_TMPDIR/after"
	# apply --live --dry-run says where the read-only look is
	gv apply --live --dry-run
	assert_failure 2
	assert_regex "$stderr" "gpuvm plan --in-use looks without switching"
}

@test "tests/dumps: each replays as the host it came from planned it, in each mode" {
	local dir m n=0
	for dir in "$TOP"/tests/dumps/*/; do
		[ -f "$dir/dump.tar.gz" ] || continue
		n=$((n + 1))
		D=$T/replay
		rm -rf "$D" && mkdir -p "$D"
		tar -xzf "$dir/dump.tar.gz" -C "$D"
		for m in $MODES; do
			"$GPUVM" --root "$D" plan --mode "$m" --json >"$D.json" 2>/dev/null || true
			diff <(jq -S 'del(.version)' "$dir/plan-$m.json") <(jq -S 'del(.version)' "$D.json") ||
				fail "$(basename "$dir"), $m: the replay plans otherwise"
		done
	done
	[ "$n" -ge 1 ]
}

@test "tests/dumps: a real kernel's VF (q35-intel-iommu's nvme) is a VF of its PF in the replay" {
	D=$T/replay
	rm -rf "$D" && mkdir -p "$D"
	tar -xzf "$TOP/tests/dumps/q35-intel-iommu/dump.tar.gz" -C "$D"
	[ "$(readlink "$D/sys/bus/pci/devices/0000:00:03.1/physfn")" = ../0000:00:03.0 ]
	"$GPUVM" --root "$D" --cmdline "gpuvm.ids=1b36:0010" plan --mode vm-passthrough --json >"$D.json" || true
	[ "$(jq -c '[.devices[] | select(.vf) | .address]' "$D.json")" = '["0000:00:03.1"]' ]
	[ "$(jq -r '.devices[] | select(.address == "0000:00:03.0") | .sriov_totalvfs' "$D.json")" = 1 ]
}

@test "scripts/realhost.sh --root: runs start to end in its read-only namespace, and writes nothing to the tree" {
	need "root (unshare -m, and a remount in it)" [ "$(id -u)" -eq 0 ]
	mkfx hgx8
	# OUT on the disk: the test's own directory may be on /dev/shm, under /dev, which the
	# script refuses for its output
	O=$(mktemp -d /var/tmp/gpuvm-realhost.XXXXXX)
	listing "$ROOT" >"$BATS_TEST_TMPDIR/before"
	run sh "$TOP/scripts/realhost.sh" --root "$ROOT" --gpuvm "$GPUVM" "$O/out"
	assert_success
	listing "$ROOT" >"$BATS_TEST_TMPDIR/after"
	diff "$BATS_TEST_TMPDIR/before" "$BATS_TEST_TMPDIR/after"
	o=$O/out
	for f in dump.tar plan-container.json plan-vm-passthrough.json plan-vm-vgpu.json \
		in-use-vm-passthrough.json status.json check-vm-passthrough.json check-vm-vgpu.json \
		kubevirt.yaml kubevirt.json iommu-groups.txt version.txt uname.txt commands.txt; do
		[ -s "$o/$f" ] || fail "no $f"
	done
	[ ! -e "$o/lspci.txt" ] && [ ! -e "$o/nvidia-smi.txt" ]
	grep -q '^dump.log  *0  ' "$o/commands.txt"
	grep -q '^plan-vm-passthrough.json  *0  ' "$o/commands.txt"
	grep -q '^group 8: 0000:03:00.0$' "$o/iommu-groups.txt"
	# its dump replays as the tree plans
	D=$T/replay
	mkdir -p "$D" && tar -xf "$o/dump.tar" -C "$D"
	"$GPUVM" --root "$D" plan --mode vm-passthrough --json | cmp - "$o/plan-vm-passthrough.json"
	# /sys left writable (the test's switch): it refuses before gpuvm runs
	REALHOST_SKIP_REMOUNT=1 run sh "$TOP/scripts/realhost.sh" --root "$ROOT" --gpuvm "$GPUVM" "$O/out2"
	assert_failure 1
	assert_output --partial "/sys or /proc is still writable after the remount: stopping before gpuvm runs"
	[ ! -e "$O/out2/commands.txt" ]
	# an OUT with something in it is refused
	run sh "$TOP/scripts/realhost.sh" --root "$ROOT" --gpuvm "$GPUVM" "$o"
	assert_failure 1
	assert_output --partial "is not empty"
}
