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

# need WHAT COMMAND...: skip the test when COMMAND (a probe for a tool it needs) fails. CI
# installs every such tool (scripts/install-packages.sh) and sets CI=true: there a missing
# tool fails the test, so that a skip cannot hide that it never ran.
need() {
	local what=$1
	shift
	"$@" >/dev/null 2>&1 && return 0
	[ "${CI:-}" != true ] || fail "$what is missing under CI=true (scripts/install-packages.sh installs it)"
	skip "$what is missing (scripts/install-packages.sh installs it)"
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
