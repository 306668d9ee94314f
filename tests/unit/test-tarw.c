// SPDX-License-Identifier: MIT
/*
 * src/tools/tarw.c, gpuvm dump's archive: the ustar headers as POSIX has them (checksum, magic,
 * type, size), a pax record for a name or link target past its field, each directory once
 * and before what it holds, paths that are not plain refused, no member through a link
 * member, and the bounds (bytes, members) refused before anything is written past them.
 * tests/bats/dump.bats unpacks real archives with GNU tar.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tarw.h"
#include "unit.h"

/* The header at block i: its checksum is right, and it is ustar. */
static int header_ok(const struct tarw *t, size_t i)
{
	const unsigned char *h = (const unsigned char *)t->buf + i * 512;
	unsigned sum = 0, want;
	size_t k;

	for (k = 0; k < 512; k++)
		sum += (k >= 148 && k < 156) ? ' ' : h[k];
	want = (unsigned)strtoul((const char *)h + 148, NULL, 8);
	return sum == want && !memcmp(h + 257, "ustar", 6) && !memcmp(h + 263, "00", 2);
}

static const char *name_at(const struct tarw *t, size_t i)
{
	return t->buf + i * 512;
}

static char type_at(const struct tarw *t, size_t i)
{
	return t->buf[i * 512 + 156];
}

static unsigned long size_at(const struct tarw *t, size_t i)
{
	return strtoul(t->buf + i * 512 + 124, NULL, 8);
}

static void test_members(void)
{
	struct tarw t;
	char path[300], target[300];
	const char *rec;
	size_t n1, n2;
	int n;

	CHECK_INT(tarw_init(&t, 1 << 20, 100), 0, "init");
	CHECK_INT(tarw_file(&t, "sys/devices/pci0000:00/vendor", "0x10de\n", 7), 0, "a file");
	/* sys/, sys/devices/, sys/devices/pci0000:00/, then the file and its one data block */
	CHECK_STR(name_at(&t, 0), "sys/", "its directories first, each with a slash");
	CHECK(type_at(&t, 0) == '5' && type_at(&t, 1) == '5' && type_at(&t, 2) == '5',
	      "three directories");
	CHECK_STR(name_at(&t, 3), "sys/devices/pci0000:00/vendor", "then the file");
	CHECK(type_at(&t, 3) == '0' && size_at(&t, 3) == 7, "a regular file of 7 bytes");
	CHECK(!memcmp(t.buf + 4 * 512, "0x10de\n", 7), "its contents in the next block");
	CHECK(header_ok(&t, 0) && header_ok(&t, 3), "checksums and magic");
	CHECK_INT(t.len, 5 * 512, "five blocks");
	CHECK_INT(tarw_kind(&t, "sys/devices"), 'd', "the directory is known");
	CHECK_INT(tarw_file(&t, "sys/devices/pci0000:00/vendor", "x", 1), 0,
		  "the same file again: nothing added");
	CHECK_INT(t.len, 5 * 512, "still five blocks");
	CHECK_INT(tarw_dir(&t, "sys/devices/pci0000:00/vendor"), -EEXIST, "a file is no directory");
	CHECK_INT(tarw_link(&t, "sys/bus", "../devices"), 0, "a link");
	CHECK(type_at(&t, 5) == '2' && !strcmp(t.buf + 5 * 512 + 157, "../devices"),
	      "its type and target");
	CHECK_INT(tarw_file(&t, "sys/bus/x", "", 0), -ENOTDIR, "nothing through a link member");
	CHECK_INT(tarw_file(&t, "sys/devices/pci0000:00/vendor/x", "", 0), -ENOTDIR,
		  "nor under a file");
	CHECK_INT(tarw_file(&t, "/etc/passwd", "", 0), -EINVAL, "no absolute path");
	CHECK_INT(tarw_file(&t, "sys/../etc", "", 0), -EINVAL, "no ..");
	CHECK_INT(tarw_file(&t, "sys//x", "", 0), -EINVAL, "no empty component");
	CHECK_INT(tarw_file(&t, "sys/./x", "", 0), -EINVAL, "no .");
	CHECK_INT(tarw_file(&t, "", "", 0), -EINVAL, "no empty path");
	CHECK_INT(tarw_file(&t, "x/", "", 0), -EINVAL, "no trailing slash");

	/* A name and a target longer than their fields: a pax header says them whole. */
	n = snprintf(path, sizeof(path), "sys/%0150d", 0);
	snprintf(target, sizeof(target), "../%0120d", 0);
	CHECK(n > 100, "a long name");
	t.len = 0;
	CHECK_INT(tarw_link(&t, path, target), 0, "a link with a long name and target");
	CHECK(type_at(&t, 0) == 'x' && header_ok(&t, 0), "a pax header first");
	rec = t.buf + 512;
	n1 = strtoul(rec, NULL, 10);
	CHECK_INT(n1, 3 + 6 + strlen(path) + 1, "the path record counts its own length");
	CHECK(!strncmp(rec + 3, " path=", 6) && !strncmp(rec + 9, path, strlen(path)) &&
		      rec[n1 - 1] == '\n',
	      "the path record");
	n2 = strtoul(rec + n1, NULL, 10);
	CHECK_INT(n2, 3 + 10 + strlen(target) + 1, "the linkpath record counts its own length");
	CHECK(!strncmp(rec + n1 + 3, " linkpath=", 10) &&
		      !strncmp(rec + n1 + 13, target, strlen(target)) && rec[n1 + n2 - 1] == '\n',
	      "the linkpath record");
	CHECK_INT(size_at(&t, 0), n1 + n2, "the pax data's size");
	CHECK(type_at(&t, 2) == '2' && header_ok(&t, 2), "then the link's own header");
	CHECK_INT(tarw_finish(&t), 0, "the end");
	CHECK_INT(t.len, 5 * 512, "two zero blocks");
	tarw_free(&t);
}

static void test_bounds(void)
{
	struct tarw t;
	char data[2000] = { 0 }, name[16];
	int i, r = 0;

	CHECK_INT(tarw_init(&t, 4096, 1000), 0, "init, 4 KiB at most");
	CHECK_INT(tarw_file(&t, "a", data, 1500), 0, "4 blocks");
	CHECK_INT(tarw_file(&t, "b", data, 2000), -EFBIG, "5 more: past the bound");
	CHECK_INT(t.len, 2048, "nothing of it written");
	CHECK_INT(tarw_kind(&t, "b"), 0, "nor remembered");
	tarw_free(&t);

	CHECK_INT(tarw_init(&t, 1 << 20, 3), 0, "init, 3 members at most");
	CHECK_INT(tarw_file(&t, "d/x", "", 0), 0, "2 members");
	CHECK_INT(tarw_file(&t, "e/y", "", 0), -E2BIG, "its directory is the third, itself the fourth");
	tarw_free(&t);

	/* The set of paths grows past its first 1,024 slots. */
	CHECK_INT(tarw_init(&t, 16 << 20, 5000), 0, "init");
	for (i = 0; i < 3000 && r == 0; i++) {
		snprintf(name, sizeof(name), "g/%d", i);
		r = tarw_dir(&t, name);
	}
	CHECK_INT(r, 0, "3,000 directories");
	CHECK_INT(t.entries, 3001, "and g");
	CHECK_INT(tarw_kind(&t, "g/2999"), 'd', "the last is known");
	CHECK_INT(tarw_kind(&t, "g/3000"), 0, "one never added is not");
	tarw_free(&t);
}

int main(void)
{
	test_members();
	test_bounds();
	return unit_done();
}
