#!/usr/bin/env bats
# shellcheck disable=SC2154 # $stderr and $output are set by bats' run
# The tree's own rules that make lint checks: no include reaches up a layer
# (scripts/layers.sh), every file beneath the root opened by rootio.c (scripts/door.sh),
# and commit subjects "area: what changed" of at most 72 characters
# (scripts/subjects.sh). Each check is shown to pass on the tree and to fail where it must.
# And the runner every suite goes through (tests/tap-run): no file holds the run forever.

load helpers

@test "layers: no file of src/ includes a header of a layer above its own" {
	run sh "$TOP/scripts/layers.sh"
	assert_success
	assert_output ""
}

@test "layers: an include that reaches up, and a file in no layer, each fail the check" {
	local s=$BATS_TEST_TMPDIR/src
	cp -r "$TOP/src" "$s"
	# inventory (the host) including settings (what is asked): the kind the check is for
	sed -i 's/#include "iommu.h"/#include "iommu.h"\n#include "settings.h"/' "$s/boot/inventory.h"
	printf '#include "util.h"\n' >"$s/boot/newunit.c"
	run sh "$TOP/scripts/layers.sh" "$s"
	assert_failure
	assert_line "boot/inventory.h: includes settings.h (layer asked) from layer machine: an include that reaches up"
	assert_line "boot/newunit.c: unit newunit is in no layer of scripts/layers.sh"
	[ "${#lines[@]}" = 2 ]
}

@test "layers: the boot's path (src/boot/, main.c, cmd/apply.c) including a header of src/tools/ fails" {
	local s=$BATS_TEST_TMPDIR/src
	cp -r "$TOP/src" "$s"
	# report (the report layer) including live (the act layer, below it): no layer is
	# crossed, but live is a running host's, in tools/
	sed -i 's/#include "json.h"/#include "json.h"\n#include "live.h"/' "$s/boot/report.c"
	sed -i 's/#include "cmd.h"/#include "cmd.h"\n#include "nextboot.h"/' "$s/cmd/apply.c"
	sed -i 's/#include "log.h"/#include "log.h"\n#include "hostreport.h"/' "$s/main.c"
	# a command of a running host may include both
	sed -i 's/#include "cmd.h"/#include "cmd.h"\n#include "nextboot.h"/' "$s/cmd/kubevirt.c"
	run sh "$TOP/scripts/layers.sh" "$s"
	assert_failure
	assert_line "boot/report.c: includes live.h, a header of src/tools/: the boot's path (src/boot/, main.c, cmd/apply.c) includes none"
	assert_line "cmd/apply.c: includes nextboot.h, a header of src/tools/: the boot's path (src/boot/, main.c, cmd/apply.c) includes none"
	assert_line "main.c: includes hostreport.h, a header of src/tools/: the boot's path (src/boot/, main.c, cmd/apply.c) includes none"
	[ "${#lines[@]}" = 3 ]
}

@test "door: every file beneath the root is opened by rootio.c; a read around it fails the check" {
	run sh "$TOP/scripts/door.sh"
	assert_success
	assert_output ""
	local s=$BATS_TEST_TMPDIR/src
	cp -r "$TOP/src" "$s"
	# pci.ids read by its own openat again, as it was before the door; a reason keeps one
	sed -i 's|^char \*pciids_read(size_t \*len, size_t \*which)$|static int again(int fd) { return openat(fd, "usr/share/misc/pci.ids", O_RDONLY); }\n&|' \
		"$s/boot/pciids.c"
	printf 'int a(int d)\n{\n\t/* door: a path of the caller'"'"'s */\n\treturn openat(d, "x", 0);\n}\n' >"$s/ok.c"
	printf 'int b(void)\n{\n\treturn faccessat(root_fd(), "etc", 0, 0);\n}\n' >"$s/cmd/bad.c"
	run sh "$TOP/scripts/door.sh" "$s"
	assert_failure
	assert_line --partial "pciids.c:"
	assert_line --partial ": openat(): a file opened beneath the root outside rootio.c"
	assert_line "cmd/bad.c:3: faccessat(): a file opened beneath the root outside rootio.c (or say door: and why not)"
	[ "${#lines[@]}" = 2 ]
}

@test "subjects: the commits since the rule began pass; a long or area-less subject fails" {
	need git command -v git
	git -C "$TOP" rev-parse --git-dir >/dev/null 2>&1 || skip "not a git checkout"
	run sh "$TOP/scripts/subjects.sh"
	assert_success
	local c=$BATS_TEST_TMPDIR/clone
	git clone -q "$TOP" "$c"
	cp "$TOP/scripts/subjects.sh" "$c/scripts/" # this tree's, committed or not
	git -C "$c" -c user.name=t -c user.email=t@t commit -q --allow-empty \
		-m "tests: a subject far longer than the seventy-two characters that a subject may have"
	git -C "$c" -c user.name=t -c user.email=t@t commit -q --allow-empty -m "Fixed it"
	git -C "$c" -c user.name=t -c user.email=t@t commit -q --allow-empty -m "tree: a good one"
	run sh "$c/scripts/subjects.sh"
	assert_failure
	assert_line --partial "subject of 83 characters (at most 72): tests: a subject far longer"
	assert_line --partial 'not "area: what changed": Fixed it'
	[ "${#lines[@]}" = 2 ]
}

@test "style: HACKING's rules for src/ pass on the tree; a split string, a glued macro, a ?: chain (one line or several), open(), a source compared as text fail" {
	run sh "$TOP/scripts/style.sh"
	assert_success
	local d=$BATS_TEST_TMPDIR/src
	mkdir -p "$d"
	cat >"$d/bad.c" <<'C'
const char *a(int s)
{
	log_warn("a message cut in two "
		 "halves, which grep finds neither way");
	log_warn(SOME_FMT
		 " and the rest");
	printf("usage: one line of text\n"
	       "and the next: no offence\n");
	return s == 1 ? "one" : s == 2 ? "two" : "many";
}
const char *b(int n, int room)
{
	return (n ? "a ? b" : "c") + (room >= 3 ? 3 : room); /* two, not a chain: no offence */
}
int c(const char *p)
{
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	/* open() in a comment, openat(), fopen(), o->open(): no offence */
	return fd + openat(AT_FDCWD, p, O_RDONLY) + !fopen(p, "r") + o->open(p);
}
const char *d(const struct settings *s, int held)
{
	log_warn("%s", s->mode ? "pinned" :
			 held ?
			 "held" :
			 "released");
	if (streq(settings_source(s, KEY_MODE), "cmdline") || s->from[KEY_IDS] == FROM_DEFAULT)
		return "a";
	if (startswith(s->where[KEY_CONFIG],
		       "/etc/gpuvm/gpuvm.conf"))
		return "b";
	/* what is shown, and a source compared with another: no offence */
	log_info("%s %d", settings_source(s, KEY_MODE), streq(s->where[KEY_IDS], s->where[KEY_MODE]));
	return streq(s->config, "x") ? settings_source(s, KEY_MODE) : "";
}
C
	run sh "$TOP/scripts/style.sh" "$d/bad.c"
	assert_failure
	assert_line "$d/bad.c:4: a string split across lines (one literal, so that grep finds it)"
	assert_line "$d/bad.c:6: a string glued to a macro across a line break (a #define holds the whole message)"
	assert_line "$d/bad.c:9: a chain of ?: (a small function or an if)"
	assert_line "$d/bad.c:17: open(): openat(AT_FDCWD, ...) (musl follows an open with O_CLOEXEC by a fcntl)"
	assert_line "$d/bad.c:23: a chain of ?: (a small function or an if)"
	assert_line "$d/bad.c:27: a setting's source compared as text (ask its enum set_from)"
	assert_line "$d/bad.c:29: a setting's source compared as text (ask its enum set_from)"
	[ "${#lines[@]}" = 7 ]
}

@test "tap-run: a clean file passes; one past its limit, or one that leaves a process behind, fails and leaves nothing" {
	local d=$BATS_TEST_TMPDIR/tr mark
	mark="gpuvm-tap-run-$$-$RANDOM"
	mkdir -p "$d"
	printf '@test "fine" { true; }\n' >"$d/fine.bats"
	# the leaked process closes bats' fd 3, so bats itself ends and only tap-run sees it
	printf '@test "leaks" { exec -a %s sleep 300 3>&- & }\n' "$mark-leak" >"$d/leak.bats"
	printf '@test "hangs" { exec -a %s sleep 300; }\n' "$mark-hang" >"$d/hang.bats"
	# the inner bats in an environment of its own: this one's BATS_ variables, and its PATH's
	# bats-core libexec folder before /usr/bin's bats, would lead it astray
	local path
	path=$(printf '%s\n' "$PATH" | tr : '\n' | grep -v bats-core | paste -sd:)
	clean() { env -i PATH="$path" TMPDIR="$BATS_TEST_TMPDIR" "$@"; }
	run clean prove -e "$TOP/tests/tap-run" "$d/fine.bats"
	assert_success
	run clean TAP_RUN_GRACE=1 prove -e "$TOP/tests/tap-run" "$d/leak.bats"
	assert_failure
	assert_output --partial "tap-run: bats --tap $d/leak.bats left these behind, killed now:"
	assert_output --regexp "tap-run: +[0-9]+ $mark-leak 300"
	run clean TAP_RUN_TIMEOUT=2 prove -e "$TOP/tests/tap-run" "$d/hang.bats"
	assert_failure
	assert_output --partial "tap-run: bats --tap $d/hang.bats ran past 2 s (TAP_RUN_TIMEOUT); killed with what it started"
	sleep 0.5
	run pgrep -f "$mark"
	assert_failure
}
