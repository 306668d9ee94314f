/* SPDX-License-Identifier: MIT */
/* A tiny TAP harness for table-driven C tests: one "ok N - name" line per check. */
#ifndef GPUVM_UNIT_H
#define GPUVM_UNIT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int unit_n, unit_failed;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		int ok_ = !!(cond);                                                                \
		unit_n++;                                                                          \
		if (ok_) {                                                                         \
			printf("ok %d - ", unit_n);                                                \
		} else {                                                                           \
			unit_failed++;                                                             \
			printf("not ok %d - ", unit_n);                                            \
		}                                                                                  \
		printf(__VA_ARGS__);                                                               \
		printf("\n");                                                                      \
		if (!ok_)                                                                          \
			printf("#   failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__);             \
	} while (0)

#define CHECK_STR(got, want, ...)                                                                    \
	do {                                                                                         \
		const char *g_ = (got), *w_ = (want);                                                \
		int eq_ = (g_ && w_) ? strcmp(g_, w_) == 0 : g_ == w_;                               \
		CHECK(eq_, __VA_ARGS__);                                                             \
		if (!eq_)                                                                            \
			printf("#   got '%s', want '%s'\n", g_ ? g_ : "(null)", w_ ? w_ : "(null)"); \
	} while (0)

#define CHECK_INT(got, want, ...)                                                                  \
	do {                                                                                       \
		long long g_ = (long long)(got), w_ = (long long)(want);                           \
		CHECK(g_ == w_, __VA_ARGS__);                                                      \
		if (g_ != w_)                                                                      \
			printf("#   got %lld, want %lld\n", g_, w_);                               \
	} while (0)

/*
 * A whole pci.ids ($PCIIDS, else the host's), NUL-terminated, its length in *len, its path
 * in *path; NULL after a skip line when there is none (the pci.ids package, or PCIIDS).
 */
static inline char *unit_pciids(size_t *len, const char **path)
{
	FILE *f;
	char *ids;
	long sz;

	*path = getenv("PCIIDS") ? getenv("PCIIDS") : "/usr/share/misc/pci.ids";
	f = fopen(*path, "rb");
	if (!f) {
		printf("ok %d # skip %s: no pci.ids (package pci.ids, or set PCIIDS)\n", ++unit_n,
		       *path);
		return NULL;
	}
	fseek(f, 0, SEEK_END);
	sz = ftell(f);
	rewind(f);
	ids = malloc(sz > 0 ? (size_t)sz + 1 : 1);
	if (!ids)
		abort();
	*len = sz > 0 ? fread(ids, 1, (size_t)sz, f) : 0;
	fclose(f);
	ids[*len] = '\0';
	return ids;
}

static inline int unit_done(void)
{
	printf("1..%d\n", unit_n);
	return unit_failed ? 1 : 0;
}

#endif
