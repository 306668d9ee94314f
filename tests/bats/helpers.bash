# Shared setup for the bats suites: the static binary, fixture trees, JSON checks.
# shellcheck disable=SC2154 # $stderr and $output are set by bats' run
bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

TOP=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
GPUVM="${GPUVM:-$TOP/build/gpuvm}"
# shellcheck source=tests/fixture/lib.sh
. "$TOP/tests/fixture/lib.sh"

# mkfx SCENARIO: build a named fixture tree in $ROOT.
mkfx() {
	ROOT="$BATS_TEST_TMPDIR/root"
	rm -rf "$ROOT"
	"$TOP/tests/fixture/mkfixture" "$ROOT" "$1" >/dev/null
}

# gv ARGS...: run the static binary against $ROOT (stdout and stderr apart).
gv() {
	run --separate-stderr "$GPUVM" --root "$ROOT" "$@"
}

# jqr FILTER: evaluate FILTER on $output (JSON), print the raw result.
jqr() {
	printf '%s' "$output" | jq -r "$1"
}

# The action, target and driver of one device in a JSON plan in $output.
dev_field() {
	jqr ".devices[] | select(.address == \"$1\") | .$2"
}
