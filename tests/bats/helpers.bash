# Shared setup for the bats suites: the static binary, fixture trees, JSON checks.
# shellcheck disable=SC2154 # $stderr and $output are set by bats' run
bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

TOP=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
GPUVM="${GPUVM:-$TOP/build/gpuvm}"
# shellcheck source=tests/fixture/lib.sh
. "$TOP/tests/fixture/lib.sh"

# mkfx SCENARIO [ARG]: build a named fixture tree in $ROOT (ARG: synthetic's and hgx8-wide's
# number of functions).
mkfx() {
	ROOT="$BATS_TEST_TMPDIR/root"
	rm -rf "$ROOT"
	"$TOP/tests/fixture/mkfixture" "$ROOT" "$@" >/dev/null
}

# gv ARGS...: run the static binary against $ROOT (stdout and stderr apart).
gv() {
	run --separate-stderr "$GPUVM" --root "$ROOT" "$@"
}

# nodriver ADDR: the function as the boot's first call finds it before udev: no driver (the
# uevent's DRIVER= line and the driver link gone).
nodriver() {
	local d="$ROOT/sys/bus/pci/devices/$1"
	sed -i '/^DRIVER=/d' "$d/uevent"
	rm -f "$d/driver"
}

# jqr FILTER: evaluate FILTER on $output (JSON), print the raw result.
jqr() {
	printf '%s' "$output" | jq -r "$1"
}

# The action, target and driver of one device in a JSON plan in $output.
dev_field() {
	jqr ".devices[] | select(.address == \"$1\") | .$2"
}

# need WHAT COMMAND...: skip the test when COMMAND (a probe for a tool it needs) fails. CI
# installs every such tool (scripts/install-packages.sh) and make test sets CI=true: there a missing
# tool fails the test, so that a skip cannot hide that it never ran.
need() {
	local what=$1
	shift
	"$@" >/dev/null 2>&1 && return 0
	[ "${CI:-}" != true ] || fail "$what is missing under CI=true (scripts/install-packages.sh installs it)"
	skip "$what is missing (scripts/install-packages.sh installs it)"
}

# built FILE: FILE (under build/) must have been built by an earlier stage of make test; a
# skip says how elsewhere, CI=true (make test sets it) fails instead.
built() {
	[ -f "$TOP/build/$1" ] && return 0
	[ "${CI:-}" != true ] || fail "build/$1 is missing under CI=true (make test builds it: make packages)"
	skip "build/$1 is not built (make deb rpm; ARCH=arm64 for the arm64 ones)"
}

# secret: $SECRET, a root-only file outside the tree, as an attacker would point a link at;
# secret_intact: it still holds what it held, with its mode.
secret() {
	SECRET="$BATS_TEST_TMPDIR/secret"
	printf 's3cret, root only\n' >"$SECRET"
	chmod 600 "$SECRET"
}
secret_intact() {
	[ "$(cat "$SECRET")" = 's3cret, root only' ]
	[ "$(stat -c %a "$SECRET")" = 600 ]
}

# mkinitrd PATH [--comp gzip|xz|zstd|none] [--early] [--no-gpuvm] [--no-hook] [--conf TEXT]
#   [--cmdline TEXT]: an initramfs image as dracut lays one out (its library, gpuvm's binary
# and pre-udev hook), made with cpio -H newc and compressed; --early puts an uncompressed
# microcode archive before it; --conf and --cmdline bake /etc/gpuvm/gpuvm.conf and
# /etc/cmdline.d/01-default.conf in it.
mkinitrd() {
	local out=$1 comp=gzip early='' gpuvm=1 hook=1 conf='' cmdl='' itools='' d
	shift
	while [ $# -gt 0 ]; do
		case $1 in
		--comp) comp=$2 && shift ;;
		--early) early=1 ;;
		--no-gpuvm) gpuvm='' ;;
		--no-hook) hook='' ;;
		--conf) conf=$2 && shift ;;
		--cmdline) cmdl=$2 && shift ;;
		--itools) itools=1 ;;
		*) fail "mkinitrd: unknown option $1" ;;
		esac
		shift
	done
	d=$(mktemp -d "$BATS_TEST_TMPDIR/img.XXXXXX")
	mkdir -p "$d/usr/sbin"
	[ -z "$gpuvm" ] || printf '\177ELF' >"$d/usr/sbin/gpuvm"
	if [ -n "$itools" ]; then
		# initramfs-tools' layout: its scripts and the boot script's stages
		mkdir -p "$d/scripts/init-top" "$d/scripts/init-bottom"
		echo 'log_warning_msg() { :; }' >"$d/scripts/functions"
		[ -z "$gpuvm" ] || [ -z "$hook" ] || echo gpuvm | tee "$d/scripts/init-top/gpuvm" >"$d/scripts/init-bottom/gpuvm"
	else
		mkdir -p "$d/usr/lib/dracut" "$d/var/lib/dracut/hooks/pre-udev"
		echo 'getarg() { :; }' >"$d/usr/lib/dracut/dracut-lib.sh"
		[ -z "$gpuvm" ] || [ -z "$hook" ] || echo gpuvm >"$d/var/lib/dracut/hooks/pre-udev/00-gpuvm-pre-udev.sh"
	fi
	if [ -n "$conf" ]; then
		mkdir -p "$d/etc/gpuvm"
		printf '%s\n' "$conf" >"$d/etc/gpuvm/gpuvm.conf"
	fi
	if [ -n "$cmdl" ]; then
		mkdir -p "$d/etc/cmdline.d"
		printf '%s\n' "$cmdl" >"$d/etc/cmdline.d/01-default.conf"
	fi
	mkdir -p "$(dirname "$out")"
	: >"$out"
	if [ -n "$early" ]; then
		mkdir -p "$d.early/kernel/x86/microcode"
		echo ucode >"$d.early/kernel/x86/microcode/GenuineIntel.bin"
		(cd "$d.early" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) >"$out"
	fi
	if [ "$comp" = none ]; then
		(cd "$d" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) >>"$out"
	else
		(cd "$d" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) | "$comp" -c >>"$out"
	fi
}
