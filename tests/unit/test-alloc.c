// SPDX-License-Identifier: MIT
/*
 * Allocation failure at every point: apply against the fake kernel with malloc, calloc,
 * realloc and strdup failing at the Nth call, for every N the flow reaches. Each run
 * must end without a crash, leave every selected device either untouched or bound (the
 * group all or nothing), and say so: an error, a failure, or the normal outcome, never
 * more than is true (check_run). Built with
 * -Wl,--wrap= for those four, so only gpuvm's own calls fail, not libc's inside.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake-kernel.h"
#include "json.h"
#include "log.h"
#include "cmd/cmd.h"
#include "unit.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);

static long fail_at = -1, calls;

static int failing(void)
{
	return fail_at >= 0 && ++calls == fail_at;
}

void *__wrap_malloc(size_t n)
{
	return failing() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
	return failing() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
	return failing() ? NULL : __real_realloc(p, n);
}

char *__wrap_strdup(const char *s)
{
	return failing() ? NULL : __real_strdup(s);
}

static void host(void)
{
	fk_reset(true);
	fk_add("0000:01:00.0", 0x10de, 0x2204, 0x030000, 1, "nouveau", NULL);
	fk_add("0000:01:00.1", 0x10de, 0x1aef, 0x040300, 1, "snd_hda_intel", NULL);
	fk_add("0000:02:00.0", 0x10de, 0x2204, 0x030000, 2, "nouveau", NULL);
	fk_driver_loaded("nouveau");
	fk_driver_loaded("snd_hda_intel");
	fk_module("vfio-pci", "vfio-pci");
}

static bool on_vfio(const char *a)
{
	return strcmp(fk_driver(a), "vfio-pci") == 0;
}

static bool whole(const char *a, const char *b)
{
	/* A group is all or nothing: both on vfio-pci, or neither. */
	return on_vfio(a) == on_vfio(b);
}

/* Is a GPU where the mode that ran puts it: on vfio-pci, or (container) off vfio? */
static bool reached(const char *a, bool vm)
{
	return vm ? on_vfio(a) : !on_vfio(a) && strcmp(fk_override(a), "vfio-pci") != 0;
}

/*
 * What one run's outcome says must be true, as in test-faults.c. Group 1 whole. Without an
 * error, never more GPUs reported where the mode puts them than are there, and the counts
 * add up; the mode is the one the state file names, for a settings allocation that fails
 * loses the command line's mode=, with an error logged. A run that says nothing went wrong
 * (no error, no failure, nothing logged as an error) is the clean run: both GPUs bound.
 */
static void check_run(const char *what, const struct outcome *out)
{
	const char *st = fk_state();
	bool vm = !st || strstr(st, "\"mode\": \"vm-passthrough\"");
	size_t bound = (size_t)on_vfio("0000:01:00.0") + (size_t)on_vfio("0000:02:00.0");
	size_t there = (size_t)reached("0000:01:00.0", vm) + (size_t)reached("0000:02:00.0", vm);
	size_t errors = log_count(LOG_ERR);

	CHECK(whole("0000:01:00.0", "0000:01:00.1"), "%s: group 1 whole (GPU %s, audio %s)", what,
	      fk_driver("0000:01:00.0"), fk_driver("0000:01:00.1"));
	if (!out->error) {
		CHECK(there >= out->ok,
		      "%s: the outcome is true (%s: ok=%zu failed=%zu, %zu there, %zu bound)", what,
		      vm ? "vm-passthrough" : "container", out->ok, out->failed, there, bound);
		CHECK(out->selected == 2 && out->ok + out->failed == 2,
		      "%s: both GPUs selected and accounted for (selected=%zu ok=%zu failed=%zu)",
		      what, out->selected, out->ok, out->failed);
	}
	if (!out->error && !out->failed && !errors)
		CHECK(vm && bound == 2 && out->ok == 2,
		      "%s: nothing said to be wrong: the clean run's outcome (%zu bound)", what,
		      bound);
	CHECK(!st || json_valid(st, strlen(st)), "%s: state file valid", what);
}

int main(void)
{
	struct options o = { .cmdline = "gpuvm.mode=vm-passthrough gpuvm.on_error=release" };
	struct outcome out;
	char what[64];
	long n, total;

	/* How many allocations a whole run makes. */
	host();
	log_setup(false, 0);
	calls = 0;
	fail_at = 0;
	memset(&out, 0, sizeof(out));
	cmd_apply.run(&o, &out);
	total = calls;
	CHECK(total > 10 && !out.error && out.ok == 2 && out.failed == 0 && !log_count(LOG_ERR),
	      "a clean run makes %ld allocations and binds both GPUs (error=%d ok=%zu failed=%zu)",
	      total, out.error, out.ok, out.failed);
	check_run("the clean run", &out);
	log_close();

	for (n = 1; n <= total; n++) {
		host();
		log_setup(false, 0);
		calls = 0;
		fail_at = n;
		memset(&out, 0, sizeof(out));
		cmd_apply.run(&o, &out);
		fail_at = -1;
		snprintf(what, sizeof(what), "allocation %ld of %ld fails", n, total);
		check_run(what, &out);
		log_close();
	}
	fk_reset(false);
	return unit_done();
}
