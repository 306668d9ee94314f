// SPDX-License-Identifier: MIT
/*
 * Allocation failure at every point: apply against the fake kernel with malloc, calloc,
 * realloc and strdup failing at the Nth call, for every N the flow reaches. Each run
 * must end without a crash, leave every selected device either untouched or bound (the
 * group all or nothing), and say so: an error, or the normal outcome. Built with
 * -Wl,--wrap= for those four, so only gpuvm's own calls fail, not libc's inside.
 */
#include <errno.h>
#include <stdlib.h>

#include "fake-kernel.h"
#include "log.h"
#include "run.h"
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

static bool whole(const char *a, const char *b)
{
	/* A group is all or nothing: both on vfio-pci, or neither. */
	return (strcmp(fk_driver(a), "vfio-pci") == 0) == (strcmp(fk_driver(b), "vfio-pci") == 0);
}

int main(void)
{
	struct options o = { .cmdline = "gpuvm.mode=vm-passthrough gpuvm.on_error=release" };
	struct outcome out;
	long n, total;

	/* How many allocations a whole run makes. */
	host();
	log_setup(false, 0);
	calls = 0;
	fail_at = 0;
	run(&o, CMD_APPLY, &out);
	total = calls;
	log_close();
	CHECK(total > 10 && out.failed == 0, "a clean run makes %ld allocations and succeeds", total);

	for (n = 1; n <= total; n++) {
		host();
		log_setup(false, 0);
		calls = 0;
		fail_at = n;
		run(&o, CMD_APPLY, &out);
		fail_at = -1;
		CHECK(whole("0000:01:00.0", "0000:01:00.1"),
		      "allocation %ld of %ld fails: group 1 whole, outcome error=%d ok=%zu failed=%zu",
		      n, total, out.error, out.ok, out.failed);
		log_close();
	}
	fk_reset(false);
	return unit_done();
}
