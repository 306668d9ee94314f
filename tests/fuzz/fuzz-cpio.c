// SPDX-License-Identifier: MIT
/*
 * The initramfs reader's parser (cpio_feed): any bytes, fed whole and in chunks of every
 * size from 1 to 16 (the first input byte picks it).
 *
 * Invariants: the members, their sizes, the bytes kept and the result are the same however
 * the input is cut; data() never gets more than member() asked nor more than the member
 * holds; where the other bytes start (result 1) is inside the input.
 */
#include <errno.h>

#include "cpio.h"
#include "fuzz.h"

struct trace {
	char text[8192];
	size_t len;
	size_t asked;
};

static void add(struct trace *t, const char *s, size_t n)
{
	if (t->len + n < sizeof(t->text)) {
		memcpy(t->text + t->len, s, n);
		t->len += n;
	}
}

static size_t on_member(const char *name, unsigned long size, void *arg)
{
	struct trace *t = arg;
	char num[32];

	add(t, name, strlen(name) + 1);
	snprintf(num, sizeof(num), "%lu", size);
	add(t, num, strlen(num) + 1);
	t->asked = size & 1 ? 0 : (size_t)(size % 7); /* some kept, some not */
	return t->asked;
}

static void on_data(const char *name, const char *buf, size_t len, void *arg)
{
	struct trace *t = arg;

	fuzz_assert(len <= t->asked, "%s: %zu bytes kept, %zu asked", name, len, t->asked);
	add(t, buf, len);
}

static int run(const uint8_t *p, size_t n, size_t step, struct trace *t, unsigned long long *off)
{
	struct cpio_visit v = { on_member, on_data, t };
	static struct cpio c;
	size_t i;
	int r = 0;

	memset(t, 0, sizeof(*t));
	cpio_init(&c, &v);
	for (i = 0; i < n && r == 0; i += step)
		r = cpio_feed(&c, p + i, n - i < step ? n - i : step);
	if (r == 0)
		r = cpio_finish(&c) == 0 ? 2 : 3;
	*off = c.off;
	cpio_fini(&c);
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct trace a, b;
	unsigned long long oa, ob;
	size_t step;
	int ra, rb;

	if (size < 1)
		return 0;
	step = (size_t)(data[0] % 16) + 1;
	data++, size--;
	ra = run(data, size, size ? size : 1, &a, &oa);
	rb = run(data, size, step, &b, &ob);
	fuzz_assert(ra == rb, "result %d whole, %d in chunks of %zu", ra, rb, step);
	fuzz_assert(a.len == b.len && !memcmp(a.text, b.text, a.len), "trace differs (step %zu)", step);
	if (ra == 1)
		fuzz_assert(oa == ob && oa < size, "other bytes at %llu / %llu of %zu", oa, ob, size);
	return 0;
}
