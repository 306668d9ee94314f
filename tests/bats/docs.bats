#!/usr/bin/env bats
# shellcheck disable=SC2154 # $stderr and $output are set by bats' run
# The docs that the tests keep true: gpuvm(8)'s fault table (doc/faults.tsv, scripts/faults.sh),
# the exit codes in README.md and gpuvm(8), the Markdown links (none leaves the repository).

load helpers

@test "gpuvm(8)'s fault table is doc/faults.tsv's, and every test it names is there" {
	run --separate-stderr "$TOP/scripts/faults.sh" --check
	assert_success
	assert_output --regexp '^faults: [0-9]+ tests named by doc/faults.tsv are there$'
}

@test "the fault table check fails on a test that is gone and on a page that differs" {
	tsv=$BATS_TEST_TMPDIR/faults.tsv
	page=$BATS_TEST_TMPDIR/gpuvm.8
	sed 's/groupless GPU held/a test nobody wrote/' "$TOP/doc/faults.tsv" >"$tsv"
	FAULTS_TSV=$tsv FAULTS_PAGE=$TOP/doc/gpuvm.8 run --separate-stderr "$TOP/scripts/faults.sh" --check
	assert_failure
	assert_regex "$stderr" "tests/unit/test-execute.c does not hold 'a test nobody wrote'"
	sed 's/^drivers_probe write fails\t/drivers_probe write is fine\t/' "$TOP/doc/gpuvm.8" >"$page"
	FAULTS_PAGE=$page run --separate-stderr "$TOP/scripts/faults.sh" --check
	assert_failure
	assert_regex "$stderr" "FAULTS table differs from doc/faults.tsv"
	FAULTS_PAGE=$page run "$TOP/scripts/faults.sh" --update
	FAULTS_PAGE=$page run --separate-stderr "$TOP/scripts/faults.sh" --check
	assert_success
	cmp "$page" "$TOP/doc/gpuvm.8"
}

# The exit codes of src/main.c's enum (EXIT_NAME = N, /* meaning */), one "N meaning" a line.
enum_codes() {
	sed -n 's|^[[:space:]]*EXIT_[A-Z_]* = \([0-9][0-9]*\),[[:space:]]*/\* \(.*\) \*/$|\1 \2|p' "$1"
}

# The codes of README.md's "### Exit status" table and of gpuvm(8)'s EXIT STATUS, one a line.
readme_codes() {
	sed -n '/^### Exit status$/,/^#/{s/^| \([0-9][0-9]*\) | .* |$/\1/p}' "$1"
}
page_codes() {
	sed -n '/^\.SH EXIT STATUS$/,/^\.SH /{/^\.TP$/{n;s/^\.B \([0-9][0-9]*\)$/\1/p}}' "$1"
}

# exit_codes MAIN README PAGE: every code of the enum, and no other, in both and in order.
exit_codes() {
	enum_codes "$1" >"$BATS_TEST_TMPDIR/enum"
	[ -s "$BATS_TEST_TMPDIR/enum" ] || { echo "no EXIT_* = N in $1" >&2; return 1; }
	cut -d' ' -f1 "$BATS_TEST_TMPDIR/enum" >"$BATS_TEST_TMPDIR/codes"
	readme_codes "$2" >"$BATS_TEST_TMPDIR/readme"
	page_codes "$3" >"$BATS_TEST_TMPDIR/page"
	bad=0
	for f in readme page; do
		if ! diff -u "$BATS_TEST_TMPDIR/codes" "$BATS_TEST_TMPDIR/$f" >&2; then
			echo "exit codes: $f differs from main.c's:" >&2
			cat "$BATS_TEST_TMPDIR/enum" >&2
			bad=1
		fi
	done
	return "$bad"
}

@test "README's exit-status table and gpuvm(8)'s EXIT STATUS list main.c's codes, no other" {
	[ "$(enum_codes "$TOP/src/main.c" | cut -d' ' -f1 | tr '\n' ' ')" = "0 1 2 3 4 5 6 7 " ]
	run --separate-stderr exit_codes "$TOP/src/main.c" "$TOP/README.md" "$TOP/doc/gpuvm.8"
	assert_success
	# --help's list too.
	[ "$("$GPUVM" --help | sed '1,/^Exit status:$/d' | sed -n 's/^  \([0-9]\)  .*/\1/p' | tr '\n' ' ')" = "0 1 2 3 4 5 6 7 " ]
	# The check fails on a row taken out of either, and on a code the enum gains.
	sed '/^| 4 | partial/d' "$TOP/README.md" >"$BATS_TEST_TMPDIR/README.md"
	run --separate-stderr exit_codes "$TOP/src/main.c" "$BATS_TEST_TMPDIR/README.md" "$TOP/doc/gpuvm.8"
	assert_failure
	assert_regex "$stderr" "exit codes: readme differs from main.c's"
	sed '/^\.SH EXIT STATUS$/,/^\.SH /{/^\.B 6$/s/6/9/}' "$TOP/doc/gpuvm.8" >"$BATS_TEST_TMPDIR/gpuvm.8"
	run --separate-stderr exit_codes "$TOP/src/main.c" "$TOP/README.md" "$BATS_TEST_TMPDIR/gpuvm.8"
	assert_failure
	assert_regex "$stderr" "exit codes: page differs from main.c's"
	sed 's|^\(.*EXIT_IN_USE = 7,.*\)$|\1\n\tEXIT_NEW = 8, /* new */|' "$TOP/src/main.c" >"$BATS_TEST_TMPDIR/main.c"
	run --separate-stderr exit_codes "$BATS_TEST_TMPDIR/main.c" "$TOP/README.md" "$TOP/doc/gpuvm.8"
	assert_failure
	assert_regex "$stderr" "8 new"
}

# The Markdown files of a tree (build outputs and git's own files aside).
md_files() {
	find "$1" \( -path "$1/build" -o -path "$1/.git" \) -prune -o -name '*.md' -type f -print
}

# bad_links TOP: "FILE: TARGET" for each relative link of TOP's Markdown files that leaves TOP
# or names nothing in it, and each mention of the shared folder beside the repository. A
# URL (scheme:) or an anchor (#...) is not a relative link.
bad_links() {
	local top f t path
	top=$(cd "$1" && pwd -P)
	while IFS= read -r f; do
		while IFS= read -r t; do
			t=${t#](}
			t=${t%)}
			t=${t%%#*}
			case $t in '' | *:*) continue ;; esac
			path=$(realpath -m "$(dirname "$f")/$t")
			case $path in "$top"/*) [ -e "$path" ] && continue ;; esac
			echo "${f#"$top"/}: $t"
		done < <(grep -o '](\([^)]*\))' "$f")
	done < <(md_files "$top")
	grep -rn --exclude-dir=.git --exclude-dir=build -e '\.\./shared' "$top" | sed "s|^$top/||"
	return 0
}

@test "no link of the docs leaves the repository, and each names a file in it" {
	run --separate-stderr bad_links "$TOP"
	assert_success
	assert_output ""
	# the check finds a link out of the tree, one to nothing, and a mention of the folder beside
	local up=..
	mkdir -p "$BATS_TEST_TMPDIR/t/doc"
	printf '%s\n' '[up](../../outside.md) [gone](nothing.md) [ok](../README.md#x) [web](https://example.org/a) [here](#y)' >"$BATS_TEST_TMPDIR/t/doc/a.md"
	echo "# readme, as in $up/shared/DESIGN.md" >"$BATS_TEST_TMPDIR/t/README.md"
	run --separate-stderr bad_links "$BATS_TEST_TMPDIR/t"
	assert_line "doc/a.md: ../../outside.md"
	assert_line "doc/a.md: nothing.md"
	assert_line "README.md:1:# readme, as in $up/shared/DESIGN.md"
	[ "${#lines[@]}" = 3 ]
}

# The keys of src/settings.c's keys[], of gpuvm.conf(5)'s KEYS (each .TP's name) and of the
# example config's commented lines, one a line, sorted.
src_keys() {
	sed -n 's/^[[:space:]]*\[KEY_[A-Z_]*\] = { "\([a-z_]*\)".*/\1/p' "$1" | LC_ALL=C sort
}
page5_keys() {
	sed -n '/^\.SH KEYS$/,/^\.SH /{/^\.TP$/{n;s/^\.B \([a-z_]*\)$/\1/p}}' "$1" | LC_ALL=C sort
}
example_keys() {
	sed -n 's/^#\([a-z_]*\)=.*/\1/p' "$1" | LC_ALL=C sort -u
}

# conf_keys SETTINGS PAGE EXAMPLE: the page and the example name every key, and no other.
conf_keys() {
	src_keys "$1" >"$BATS_TEST_TMPDIR/src"
	[ -s "$BATS_TEST_TMPDIR/src" ] || { echo "no keys[] rows in $1" >&2; return 1; }
	page5_keys "$2" >"$BATS_TEST_TMPDIR/page5"
	example_keys "$3" >"$BATS_TEST_TMPDIR/example"
	bad=0
	for f in page5 example; do
		diff -u "$BATS_TEST_TMPDIR/src" "$BATS_TEST_TMPDIR/$f" >&2 || { echo "keys: $f differs from settings.c's" >&2; bad=1; }
	done
	return "$bad"
}

@test "gpuvm.conf(5) and the example config name settings.c's keys, no other; the page renders without a warning" {
	run --separate-stderr conf_keys "$TOP/src/settings.c" "$TOP/doc/gpuvm.conf.5" "$TOP/doc/gpuvm.conf.example"
	assert_success
	[ "$(wc -l <"$BATS_TEST_TMPDIR/src")" -ge 9 ]
	# A key the page leaves out, one it has too many, a key settings.c gains: each fails.
	sed '/^\.SH KEYS$/,/^\.SH /{/^\.B nvswitch$/s/nvswitch/nvswitches/}' "$TOP/doc/gpuvm.conf.5" >"$BATS_TEST_TMPDIR/gpuvm.conf.5"
	run --separate-stderr conf_keys "$TOP/src/settings.c" "$BATS_TEST_TMPDIR/gpuvm.conf.5" "$TOP/doc/gpuvm.conf.example"
	assert_failure
	assert_regex "$stderr" "keys: page5 differs from settings.c's"
	sed 's|^\(.*\[KEY_MODE\] = .*\)$|\1\n\t[KEY_NEW] = { "new_key", "x", parse_new },|' "$TOP/src/settings.c" >"$BATS_TEST_TMPDIR/settings.c"
	run --separate-stderr conf_keys "$BATS_TEST_TMPDIR/settings.c" "$TOP/doc/gpuvm.conf.5" "$TOP/doc/gpuvm.conf.example"
	assert_failure
	assert_regex "$stderr" "-new_key"
	assert_regex "$stderr" "keys: example differs from settings.c's"
	need "man (man-db)" command -v man
	LC_ALL=C.UTF-8 MANWIDTH=80 run --separate-stderr man --warnings -l "$TOP/doc/gpuvm.conf.5"
	assert_success
	assert_equal "$stderr" ""
	assert_output --partial "GPUVM.CONF(5)"
}
