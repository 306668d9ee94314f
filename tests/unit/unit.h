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

static inline int unit_done(void)
{
	printf("1..%d\n", unit_n);
	return unit_failed ? 1 : 0;
}

#endif
