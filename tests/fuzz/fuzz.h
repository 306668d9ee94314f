/* SPDX-License-Identifier: MIT */
/*
 * Shared by the libFuzzer harnesses: an invariant check that aborts (libFuzzer saves
 * the input as a crash), a byte reader over the fuzz input, and quiet logging.
 */
#ifndef GPUVM_FUZZ_H
#define GPUVM_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define fuzz_assert(cond, ...)                                                                     \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "gpuvm-fuzz: invariant violated at %s:%d: %s\n  ",         \
				__FILE__, __LINE__, #cond);                                        \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

/* A NUL-terminated copy of the input: the C string ends at the first NUL byte in it. */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	if (size)
		memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* Reads bytes off the front of the input; zeros once it runs dry. */
struct fuzz_in {
	const uint8_t *p;
	size_t n;
};

static inline unsigned fuzz_byte(struct fuzz_in *in)
{
	if (!in->n)
		return 0;
	in->n--;
	return *in->p++;
}

/* A value in [0, n). */
static inline unsigned fuzz_pick(struct fuzz_in *in, unsigned n)
{
	return fuzz_byte(in) % n;
}

/* The gpuvm log keeps errors for the report: nothing on stderr, and freed per input. */
static inline void fuzz_log_quiet(void)
{
	log_setup(false, (enum log_level)0);
}

/*
 * Log lines go to the console and /dev/kmsg: no control bytes from the input in them (C0,
 * DEL, C1, invalid UTF-8), and nothing term_safe() would change.
 */
static inline bool fuzz_printable(const char *s)
{
	char safe[1024];
	size_t n = strlen(s);

	for (const char *c = s; *c; c++)
		if ((unsigned char)*c < 0x20 || (unsigned char)*c == 0x7f)
			return false;
	if (n >= sizeof(safe))
		return false; /* log lines are shorter */
	term_safe(s, safe, sizeof(safe));
	return strcmp(safe, s) == 0;
}

#endif
