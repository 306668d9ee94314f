#!/usr/bin/env bats
# shellcheck disable=SC2154,SC2016 # $stderr and $output: bats' run; ` and $ quoted: the docs' own
# The docs that the tests keep true: gpuvm(8)'s fault table (doc/faults.tsv, scripts/faults.sh),
# the exit codes in README.md and gpuvm(8), the Markdown links (none leaves the repository);
# gpuvm.conf(5)'s keys; and what the front page and the shipped config say against what the
# program does: no rebuild after a config change, the commands, the package-file install, the
# make targets and e2e cells it names, the dracut module's check(), what the next boot reads.

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

# The keys of src/boot/settings.c's keys[], of gpuvm.conf(5)'s KEYS (each .TP's name) and of the
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
	run conf_keys "$TOP/src/boot/settings.c" "$TOP/doc/gpuvm.conf.5" "$TOP/doc/gpuvm.conf.example"
	assert_success
	[ "$(wc -l <"$BATS_TEST_TMPDIR/src")" -ge 9 ]
	# A key the page leaves out, one it has too many, a key settings.c gains: each fails.
	sed '/^\.SH KEYS$/,/^\.SH /{/^\.B nvswitch$/s/nvswitch/nvswitches/}' "$TOP/doc/gpuvm.conf.5" >"$BATS_TEST_TMPDIR/gpuvm.conf.5"
	run --separate-stderr conf_keys "$TOP/src/boot/settings.c" "$BATS_TEST_TMPDIR/gpuvm.conf.5" "$TOP/doc/gpuvm.conf.example"
	assert_failure
	assert_regex "$stderr" "keys: page5 differs from settings.c's"
	sed 's|^\(.*\[KEY_MODE\] = .*\)$|\1\n\t[KEY_NEW] = { "new_key", "x", parse_new },|' "$TOP/src/boot/settings.c" >"$BATS_TEST_TMPDIR/settings.c"
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

# What the front page and the shipped config say against what the program does. Each checker
# takes the files it reads as arguments, so that each test also runs it on a broken copy.

# no_rebuild EXAMPLE README PAGE5 MODULE HOOK: the initramfs carries no host config (neither the
# dracut module's install() nor the initramfs-tools hook puts /etc/gpuvm in the image), so a
# change of the config needs no rebuild: the example config, gpuvm.conf(5) and the README's
# "Set the mode" section say so, and name no rebuild command.
no_rebuild() {
	local bad=0 f
	if grep -nE '^[^#]*(inst[a-z_]*|copy_file)[^#]*etc/gpuvm' "$4" "$5" >&2; then
		echo "the image now carries the host config: the docs' 'no initramfs rebuild' is to be rewritten" >&2
		return 1
	fi
	sed -n '/^## Set the mode/,/^## /p' "$2" >"$BATS_TEST_TMPDIR/setmode"
	[ -s "$BATS_TEST_TMPDIR/setmode" ] || { echo "$2: no '## Set the mode' section" >&2; bad=1; }
	for f in "$1" "$BATS_TEST_TMPDIR/setmode" "$3"; do
		tr '\n' ' ' <"$f" | sed 's/\\f[BIRP]//g; s/\\-/-/g; s/[#[:space:]]\+/ /g' | grep -q 'no initramfs rebuild' ||
			{ echo "$f: does not say that a change needs no initramfs rebuild" >&2; bad=1; }
		if grep -nE 'dracut +(\\)?-f|update(\\)?-initramfs|mkinitrd|regenerate(\\)?-all' "$f" >&2; then
			echo "$f: names a rebuild after a change of the config" >&2
			bad=1
		fi
	done
	return "$bad"
}

@test "the example config, gpuvm.conf(5) and the README: a config change needs no initramfs rebuild" {
	local m=$TOP/dracut/90gpuvm/module-setup.sh h=$TOP/initramfs-tools/hooks/gpuvm
	run no_rebuild "$TOP/doc/gpuvm.conf.example" "$TOP/README.md" "$TOP/doc/gpuvm.conf.5" "$m" "$h"
	assert_success
	# The example as it was shipped, a README that tells to rebuild, a hook that bakes the file.
	printf '# Where the config is baked into the initramfs (dracut), run `dracut -f` after a change.\n#mode=container\n' \
		>"$BATS_TEST_TMPDIR/old.example"
	run --separate-stderr no_rebuild "$BATS_TEST_TMPDIR/old.example" "$TOP/README.md" "$TOP/doc/gpuvm.conf.5" "$m" "$h"
	assert_failure
	assert_regex "$stderr" "old.example: does not say that a change needs no initramfs rebuild"
	assert_regex "$stderr" "old.example: names a rebuild"
	sed 's/^writes `\/etc\/gpuvm\/gpuvm.conf`/then `update-initramfs -u` &/' "$TOP/README.md" >"$BATS_TEST_TMPDIR/README.md"
	run --separate-stderr no_rebuild "$TOP/doc/gpuvm.conf.example" "$BATS_TEST_TMPDIR/README.md" "$TOP/doc/gpuvm.conf.5" "$m" "$h"
	assert_failure
	assert_regex "$stderr" "setmode: names a rebuild"
	sed 's|^manual_add_modules ext4 .*|&\ncopy_file config /etc/gpuvm/gpuvm.conf|' "$h" >"$BATS_TEST_TMPDIR/hook"
	run --separate-stderr no_rebuild "$TOP/doc/gpuvm.conf.example" "$TOP/README.md" "$TOP/doc/gpuvm.conf.5" "$m" "$BATS_TEST_TMPDIR/hook"
	assert_failure
	assert_regex "$stderr" "the image now carries the host config"
}

# The commands of main.c's commands[] (cmd_NAME), and of the README's "## Commands" block
# (its "    gpuvm NAME" lines), one a line, in order.
main_commands() {
	sed -n '/^static const struct command \*const commands\[\] = {$/,/^};$/p' "$1" |
		grep -o '&cmd_[a-z]*' | sed 's/^&cmd_//'
}
readme_commands() {
	sed -n '/^## Commands$/,/^#/{s/^    gpuvm \([a-z][a-z]*\).*/\1/p}' "$1" | uniq
}

# same_commands MAIN README: the README lists main.c's commands, no other, in --help's order.
same_commands() {
	main_commands "$1" >"$BATS_TEST_TMPDIR/main.cmds"
	[ -s "$BATS_TEST_TMPDIR/main.cmds" ] || { echo "no commands[] in $1" >&2; return 1; }
	readme_commands "$2" >"$BATS_TEST_TMPDIR/readme.cmds"
	diff -u "$BATS_TEST_TMPDIR/main.cmds" "$BATS_TEST_TMPDIR/readme.cmds" >&2 ||
		{ echo "commands: the README's differ from main.c's" >&2; return 1; }
}

@test "the README's commands are main.c's commands, no other" {
	run same_commands "$TOP/src/main.c" "$TOP/README.md"
	assert_success
	[ "$(tr '\n' ' ' <"$BATS_TEST_TMPDIR/main.cmds")" = "status check plan config kubevirt cmdline dump apply " ]
	sed '/^    gpuvm dump /d' "$TOP/README.md" >"$BATS_TEST_TMPDIR/README.md"
	run --separate-stderr same_commands "$TOP/src/main.c" "$BATS_TEST_TMPDIR/README.md"
	assert_failure
	assert_regex "$stderr" "-dump"
	sed 's/&cmd_kubevirt,/&cmd_kubevirt, \&cmd_reboot,/' "$TOP/src/main.c" >"$BATS_TEST_TMPDIR/main.c"
	run --separate-stderr same_commands "$BATS_TEST_TMPDIR/main.c" "$TOP/README.md"
	assert_failure
	assert_regex "$stderr" "-reboot"
}

# front_page README DEB_SH RPM_SH MAKEFILE MATRIX SCENARIOS: at most 220 lines, the install
# within its first 80; the package-file route with the names the packaging scripts give; every
# make target it names is the Makefile's; every e2e cell its proof table names (a glob) is one
# of tests/e2e/matrix's or a scenario's.
front_page() {
	local bad=0 deb rpm rel t c n
	n=$(wc -l <"$1")
	[ "$n" -le 220 ] || { echo "$1: $n lines, more than 220" >&2; bad=1; }
	n=$(grep -n '^## Install on one host$' "$1" | cut -d: -f1)
	if [ -z "$n" ] || [ "$n" -gt 80 ]; then
		echo "$1: '## Install on one host' not within its first 80 lines (${n:-none})" >&2
		bad=1
	fi
	grep -qF 'deb=$out/gpuvm_${version}_$arch.deb' "$2" || { echo "$2: no longer names gpuvm_VERSION_ARCH.deb" >&2; bad=1; }
	rel=$(sed -n 's/^RELEASE=\([0-9][0-9]*\)$/\1/p' "$3")
	grep -qF 'name=gpuvm-$version-$RELEASE.$rpmarch.rpm' "$3" || { echo "$3: no longer names gpuvm-VERSION-RELEASE.ARCH.rpm" >&2; bad=1; }
	deb="apt-get install ./gpuvm_VERSION_amd64.deb"
	rpm="dnf install ./gpuvm-VERSION-$rel.x86_64.rpm"
	for c in "$deb" "$rpm"; do
		grep -qF "$c" "$1" || { echo "$1: the install does not name the package file: $c" >&2; bad=1; }
	done
	while read -r t; do
		grep -qE "^([A-Za-z0-9_. -]* )?$t( [A-Za-z0-9_. -]*)?:([^=]|$)" "$4" ||
			{ echo "$1: make $t: no such target in $4" >&2; bad=1; }
	done < <(grep -oE '(`|^    )make [a-z][a-z0-9-]*' "$1" | sed 's/.*make //' | sort -u)
	{ awk '!/^#/ && NF { print $1 }' "$5"; for c in "$6"/*.sh; do basename "$c" .sh; done; } >"$BATS_TEST_TMPDIR/cells"
	sed -n '/^## What is proven/,/^## /p' "$1" | grep '^|' | grep -oE '`(gpuvm|kernel|dracut|itools|config-disk|switch-root|arm64)[-a-z0-9.*]*`' |
		tr -d '`' | sort -u >"$BATS_TEST_TMPDIR/named"
	[ -s "$BATS_TEST_TMPDIR/named" ] || { echo "$1: its proof table names no e2e cell" >&2; bad=1; }
	while read -r c; do
		n=0
		while read -r t; do
			# shellcheck disable=SC2053 # $c is a glob on purpose
			[[ $t == $c ]] && n=1 && break
		done <"$BATS_TEST_TMPDIR/cells"
		[ "$n" = 1 ] || { echo "$1: the proof table names $c, which no e2e cell or scenario is" >&2; bad=1; }
	done <"$BATS_TEST_TMPDIR/named"
	return "$bad"
}

@test "the README: a front page, the package-file install, make targets and e2e cells that exist" {
	local p=$TOP/packaging E=$TOP/tests/e2e
	run front_page "$TOP/README.md" "$p/deb.sh" "$p/rpm.sh" "$TOP/Makefile" "$E/matrix" "$E/scenarios"
	assert_success
	grep -qx 'itools-deb' "$BATS_TEST_TMPDIR/cells"
	grep -qx 'dracut-\*' "$BATS_TEST_TMPDIR/named"
	# The old front page: 868 lines, the install far down, no package file.
	git -C "$TOP" show 4238cee:README.md >"$BATS_TEST_TMPDIR/old.md" 2>/dev/null ||
		{ seq 300 | sed 's/^/line /'; echo '## Install on one host'; } >"$BATS_TEST_TMPDIR/old.md"
	run --separate-stderr front_page "$BATS_TEST_TMPDIR/old.md" "$p/deb.sh" "$p/rpm.sh" "$TOP/Makefile" "$E/matrix" "$E/scenarios"
	assert_failure
	assert_regex "$stderr" "more than 220"
	assert_regex "$stderr" "not within its first 80 lines"
	assert_regex "$stderr" "does not name the package file: apt-get install ./gpuvm_VERSION_amd64.deb"
	# A cell, a target or a package name that is not there.
	sed 's/`kernel-6.12-arm64-race`/`kernel-6.12-arm64-amd`/; s/make demo /make demos /; s/gpuvm-VERSION-1\.x86_64/gpuvm-VERSION-2.x86_64/' \
		"$TOP/README.md" >"$BATS_TEST_TMPDIR/README.md"
	run --separate-stderr front_page "$BATS_TEST_TMPDIR/README.md" "$p/deb.sh" "$p/rpm.sh" "$TOP/Makefile" "$E/matrix" "$E/scenarios"
	assert_failure
	assert_regex "$stderr" "names kernel-6.12-arm64-amd, which no e2e cell"
	assert_regex "$stderr" "make demos: no such target"
	assert_regex "$stderr" "does not name the package file: dnf install ./gpuvm-VERSION-1.x86_64.rpm"
}

# dracut_claims MODULE_SETUP FILE...: module-setup.sh's check() includes the module in every
# image while the binary is there (it asks no mode), so no document may say the module is
# included only for a VM mode (or a config= disk); were check() to ask the mode, none may say
# it is in every image. One sentence of a file at a time, its line breaks and troff's marks
# taken out.
dracut_claims() {
	local m=$1
	shift
	python3 - "$m" "$@" <<'PY'
import re, sys
src = open(sys.argv[1]).read()
body = re.search(r'(?ms)^check\(\) \{\n(.*?)^\}', src)
if not body:
    sys.exit("%s: no check()" % sys.argv[1])
always = not re.search(r'gpuvm_vm_mode|gpuvm_build_mode|gpuvm_conf|mode', body.group(1))
only = re.compile(r'(only (when|if|for|where)\b.*\b(VM mode|vm-passthrough|vm-vgpu|config=))|(\b(VM mode|vm-passthrough)s?\b.*\bonly\b)', re.I)
every = re.compile(r'in every (image|initramfs)', re.I)
bad = 0
for f in sys.argv[2:]:
    text = open(f, errors='replace').read()
    text = re.sub(r'\\f[BIRP]|\\\(..|\\%|\\&', '', text).replace('\\-', '-')
    text = re.sub(r'(?m)^\.[A-Z]{1,2}\b ?', '', text)
    text = re.sub(r'\s+', ' ', text)
    for s in re.split(r'(?<=[.;])\s+(?=[A-Z`(*])', text):
        if not re.search(r'dracut', s, re.I) or not re.search(r'\bmodule\b', s) or not re.search(r'includ', s):
            continue
        if always and only.search(s):
            print("%s: says the dracut module is included only for a VM mode; check() includes it always: %s" % (f, s.strip()[:200]), file=sys.stderr)
            bad = 1
        if not always and every.search(s):
            print("%s: says the dracut module is in every image; check() now asks the mode: %s" % (f, s.strip()[:200]), file=sys.stderr)
            bad = 1
sys.exit(bad)
PY
}

# The documents: every Markdown file, the man pages, the example config.
doc_files() {
	md_files "$TOP"
	printf '%s\n' "$TOP/doc/gpuvm.8" "$TOP/doc/gpuvm.conf.5" "$TOP/doc/gpuvm.conf.example"
}

@test "no document says the dracut module is included only for VM modes: check() includes it always" {
	local m=$TOP/dracut/90gpuvm/module-setup.sh
	mapfile -t docs < <(doc_files)
	[ "${#docs[@]}" -gt 10 ]
	run dracut_claims "$m" "${docs[@]}"
	assert_success
	# packaging/README.md's sentence as it was, and a check() that asks for a VM mode.
	printf 'With initramfs-tools it has gpuvm. With dracut the module includes itself\nonly when the host asks for a VM mode or names a `config=` disk: an image stays without gpuvm.\n' \
		>"$BATS_TEST_TMPDIR/old.md"
	run --separate-stderr dracut_claims "$m" "$BATS_TEST_TMPDIR/old.md"
	assert_failure
	assert_regex "$stderr" "old.md: says the dracut module is included only for a VM mode"
	sed '/^check() {$/,/^}$/s/^    return 0$/    gpuvm_vm_mode || return 255/' "$m" >"$BATS_TEST_TMPDIR/module-setup.sh"
	run --separate-stderr dracut_claims "$BATS_TEST_TMPDIR/module-setup.sh" "${docs[@]}"
	assert_failure
	assert_regex "$stderr" "README.md: says the dracut module is in every image"
}

# nextboot_paths NEXTBOOT_C README: the files the next-boot judge opens (the string literals of
# nextboot.c that are paths under the root, %s as *) against the paths the README's "The
# next-boot judge reads" sentence names (up to "It does not read" or "A file it cannot read").
# Each path of the source is one the README names, a folder the README names a file under, or
# a glob that matches one it names; each path the README names is one of the source's, matched
# by its glob, or a file under a folder of the source's.
nextboot_paths() {
	local s r ok bad=0
	grep -oE '"(etc|boot|efi|run|proc|usr|var|lib)/[^"]*"' "$1" | tr -d '"' | sed 's|^|/|; s|%s|*|g' | sort -u >"$BATS_TEST_TMPDIR/src.paths"
	[ -s "$BATS_TEST_TMPDIR/src.paths" ] || { echo "no paths in $1" >&2; return 1; }
	tr '\n' ' ' <"$2" | sed -n 's/.*The next-boot judge reads \(.*\)/\1/p' | sed 's/It does not read.*//; s/A file it cannot read.*//' |
		grep -oE '`/[^`]*`' | tr -d '`' | sort -u >"$BATS_TEST_TMPDIR/readme.paths"
	[ -s "$BATS_TEST_TMPDIR/readme.paths" ] || { echo "$2: no 'The next-boot judge reads' with paths" >&2; return 1; }
	# names R S: the README's R is the source's S, or matched by S's glob
	names() {
		# shellcheck disable=SC2053 # S is a glob on purpose
		[[ $1 == "$2" || $1 == $2 ]]
	}
	while read -r s; do
		ok=0
		while read -r r; do
			names "$r" "$s" || [[ $r == "$s"/* ]] && ok=1 && break
		done <"$BATS_TEST_TMPDIR/readme.paths"
		[ "$ok" = 1 ] || { echo "$2: the next-boot judge reads $s (nextboot.c), the README does not say so" >&2; bad=1; }
	done <"$BATS_TEST_TMPDIR/src.paths"
	while read -r r; do
		ok=0
		while read -r s; do { names "$r" "$s" || [[ $r == "$s"/* ]]; } && ok=1 && break; done <"$BATS_TEST_TMPDIR/src.paths"
		[ "$ok" = 1 ] || { echo "$2: says the next-boot judge reads $r, which nextboot.c does not open" >&2; bad=1; }
	done <"$BATS_TEST_TMPDIR/readme.paths"
	return "$bad"
}

@test "the README's list of what the next-boot judge reads is the files src/tools/nextboot.c opens" {
	run nextboot_paths "$TOP/src/tools/nextboot.c" "$TOP/README.md"
	assert_success
	grep -qx '/etc/kernel/cmdline' "$BATS_TEST_TMPDIR/src.paths"
	grep -qx '/boot/efi/EFI/\*/grubenv' "$BATS_TEST_TMPDIR/src.paths"
	[ "$(wc -l <"$BATS_TEST_TMPDIR/readme.paths")" -ge 12 ]
	# The judge learns to read another file; the README claims a file it does not open.
	sed 's|^#define BOOT_ID .*|&\n#define INSTALL_CONF "etc/kernel/install.conf"|' "$TOP/src/tools/nextboot.c" >"$BATS_TEST_TMPDIR/nextboot.c"
	run --separate-stderr nextboot_paths "$BATS_TEST_TMPDIR/nextboot.c" "$TOP/README.md"
	assert_failure
	assert_regex "$stderr" "the next-boot judge reads /etc/kernel/install.conf \(nextboot.c\), the README does not say so"
	sed 's|`/etc/kernel/cmdline`,|`/etc/kernel/cmdline`, `/etc/kernel/uki.conf`,|' "$TOP/README.md" >"$BATS_TEST_TMPDIR/README.md"
	run --separate-stderr nextboot_paths "$TOP/src/tools/nextboot.c" "$BATS_TEST_TMPDIR/README.md"
	assert_failure
	assert_regex "$stderr" "says the next-boot judge reads /etc/kernel/uki.conf, which nextboot.c does not open"
}

# dump_adds SRC PAGE: dumpcollect.c's diag_attrs[] (what dump adds to what gpuvm read) and
# the list gpuvm(8)'s DUMP gives of it, one a line each, in order; differ: exit 1.
dump_adds() {
	sed -n '/^static const char \*const diag_attrs\[\] = {$/,/^};$/s/^\t"\(.*\)",$/\1/p' "$1" \
		>"$BATS_TEST_TMPDIR/src.adds"
	sed -n '/diag_attrs\[\], in its order/{n;p;}' "$2" | tr -d ';' | sed 's/, /\n/g' \
		>"$BATS_TEST_TMPDIR/page.adds"
	diff "$BATS_TEST_TMPDIR/src.adds" "$BATS_TEST_TMPDIR/page.adds" >&2
}

@test "gpuvm(8)'s DUMP names what dump adds to what gpuvm read: dumpcollect.c's diag_attrs[], no other" {
	run dump_adds "$TOP/src/tools/dumpcollect.c" "$TOP/doc/gpuvm.8"
	assert_success
	[ "$(wc -l <"$BATS_TEST_TMPDIR/src.adds")" -ge 10 ]
	# The dump learns to add an attribute; the page lists one it does not add.
	sed 's|^\t"resource",$|&\n\t"numa_node",|' "$TOP/src/tools/dumpcollect.c" >"$BATS_TEST_TMPDIR/dc.c"
	run --separate-stderr dump_adds "$BATS_TEST_TMPDIR/dc.c" "$TOP/doc/gpuvm.8"
	assert_failure
	assert_regex "$stderr" "< numa_node"
	sed 's|^vendor, device, subsystem_vendor,|vendor, device, boot_vga, subsystem_vendor,|' "$TOP/doc/gpuvm.8" >"$BATS_TEST_TMPDIR/gpuvm.8"
	run --separate-stderr dump_adds "$TOP/src/tools/dumpcollect.c" "$BATS_TEST_TMPDIR/gpuvm.8"
	assert_failure
	assert_regex "$stderr" "> boot_vga"
}
