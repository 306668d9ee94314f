// SPDX-License-Identifier: MIT
/*
 * The initramfs reader's parser (src/cpio.c) on archives made here as the kernel's buffer
 * format describes them: whole, fed a byte at a time, an early archive followed by other
 * bytes, and malformed or cut short.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cpio.h"
#include "unit.h"

static unsigned char arc[65536];
static size_t arc_len;

static void pad4(void)
{
	while (arc_len % 4)
		arc[arc_len++] = 0;
}

/* One newc member; magic NULL: "070701". */
static void add(const char *magic, const char *name, const char *data)
{
	size_t dlen = data ? strlen(data) : 0;

	arc_len += (size_t)sprintf((char *)arc + arc_len,
				   "%s%08X%08X%08X%08X%08X%08X%08zX%08X%08X%08X%08X%08zX%08X",
				   magic ? magic : "070701", 1u, 0100644u, 0u, 0u, 1u, 0u, dlen, 0u,
				   0u, 0u, 0u, strlen(name) + 1, 0u);
	memcpy(arc + arc_len, name, strlen(name) + 1);
	arc_len += strlen(name) + 1;
	pad4();
	if (dlen)
		memcpy(arc + arc_len, data, dlen);
	arc_len += dlen;
	pad4();
}

static char seen[1024], got[256];

static size_t on_member(const char *name, unsigned long size, void *arg)
{
	(void)arg;
	snprintf(seen + strlen(seen), sizeof(seen) - strlen(seen), "%s:%lu;", name, size);
	return strcmp(name, "etc/gpuvm/gpuvm.conf") ? 0 : 5;
}

static void on_data(const char *name, const char *buf, size_t len, void *arg)
{
	(void)arg;
	snprintf(got, sizeof(got), "%s=%.*s", name, (int)len, buf);
}

static const struct cpio_visit visit = { on_member, on_data, NULL };

static int parse(size_t step, struct cpio *c)
{
	size_t i;
	int r = 0;

	seen[0] = got[0] = '\0';
	cpio_init(c, &visit);
	for (i = 0; i < arc_len && r == 0; i += step)
		r = cpio_feed(c, arc + i, arc_len - i < step ? arc_len - i : step);
	return r;
}

int main(void)
{
	static struct cpio c;
	size_t step, early;
	int r;

	arc_len = 0;
	add(NULL, "usr", NULL);
	add("070702", "usr/sbin/gpuvm", "ELF...");
	add(NULL, "etc/gpuvm/gpuvm.conf", "mode=vm-passthrough\n");
	add(NULL, "TRAILER!!!", NULL);
	memset(arc + arc_len, 0, 512); /* the padding between archives */
	arc_len += 512;
	for (step = 1; step <= 7; step += 3) {
		r = parse(step, &c);
		CHECK_INT(r, 0, "an archive fed %zu bytes at a time", step);
		CHECK_STR(seen, "usr:0;usr/sbin/gpuvm:6;etc/gpuvm/gpuvm.conf:20;",
			  "each member named, with its size (step %zu)", step);
		CHECK_STR(got, "etc/gpuvm/gpuvm.conf=mode=", "only the bytes asked for (step %zu)",
			  step);
		CHECK_INT(cpio_finish(&c), 0, "it ended whole (step %zu)", step);
		cpio_fini(&c);
	}

	/* An early archive, then a compressed stream: where it starts, and by what it is read. */
	early = arc_len;
	memcpy(arc + arc_len, "\x28\xb5\x2f\xfd\x00\x00\x00\x00", 8);
	arc_len += 8;
	for (step = 1; step <= 5; step += 4) {
		r = parse(step, &c);
		CHECK_INT(r, 1, "other bytes after the archives (step %zu)", step);
		CHECK_INT(c.off, early, "they start where the archives end (step %zu)", step);
		cpio_fini(&c);
	}
	CHECK_STR(cpio_decompressor(arc + early, 8), "zstd", "zstd by its magic");
	CHECK_STR(cpio_decompressor((const unsigned char *)"\x1f\x8b\x08\0\0\0", 6), "gzip", "gzip");
	CHECK_STR(cpio_decompressor((const unsigned char *)"\xfd"
							   "7zXZ\0",
				    6),
		  "xz", "xz");
	CHECK(cpio_decompressor((const unsigned char *)"garbage", 7) == NULL, "garbage: none");

	/* Cut short: in a header, in a name, in the data. */
	arc_len = 0;
	add(NULL, "usr/sbin/gpuvm", "ELF...");
	add(NULL, "TRAILER!!!", NULL);
	for (early = arc_len, arc_len = 1; arc_len < early; arc_len += 13) {
		r = parse(3, &c);
		CHECK(r == 0 && cpio_finish(&c) == -ENODATA, "cut at byte %zu: truncated", arc_len);
		cpio_fini(&c);
	}

	/* Malformed: another magic inside an archive, a bad hex digit, a name without its NUL. */
	arc_len = 0;
	add(NULL, "a", "x");
	add("070707", "b", NULL);
	CHECK_INT(parse(4, &c), -EINVAL, "an odc header inside a newc archive");
	cpio_fini(&c);
	arc_len = 0;
	add(NULL, "a", NULL);
	arc[6 + 8 * 6] = 'g';
	CHECK_INT(parse(4, &c), -EINVAL, "a size that is not hex");
	cpio_fini(&c);
	arc_len = 0;
	add(NULL, "abc", NULL);
	arc[6 + 8 * 11 + 7] = '2'; /* namesize 2: "ab" with no NUL after it */
	CHECK_INT(parse(4, &c), -EINVAL, "a name that does not end where its size says");
	cpio_fini(&c);
	arc_len = 0;
	add(NULL, "a", NULL);
	memcpy(arc + 6 + 8 * 11, "00002000", 8); /* 8 KiB: past PATH_MAX */
	CHECK_INT(parse(4, &c), -EINVAL, "a name longer than the kernel takes");
	cpio_fini(&c);
	return unit_done();
}
