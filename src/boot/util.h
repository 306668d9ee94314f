/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_UTIL_H
#define GPUVM_UTIL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static inline bool streq(const char *a, const char *b)
{
	return strcmp(a, b) == 0;
}

static inline bool startswith(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Copy at most size-1 bytes and always terminate; returns -ENAMETOOLONG on truncation. */
int strscpy(char *dst, const char *src, size_t size);
/* Strip trailing whitespace in place; returns the new length. */
size_t rstrip(char *s);
/* Parse a hexadecimal number of at most max_digits digits, optional "0x"; whole string. */
int parse_hex(const char *s, unsigned max_digits, unsigned long *out);
/* The same on the len bytes at s, which need not end there (a value inside a line). */
int parse_hex_n(const char *s, size_t len, unsigned max_digits, unsigned long *out);
/* A byte's value as a hex digit plus one; 0 where it is none. */
extern const uint8_t hex_digit1[256];
/*
 * Exactly n hex digits (either case), no prefix: the fixed fields the kernel writes (an
 * address's, a line's of /proc/bus/pci/devices), parsed for every function: inline, a
 * table lookup a digit and no branch but the one at the end.
 */
static inline __attribute__((always_inline)) int parse_hex_fixed(const char *s, size_t n,
								 unsigned long *out)
{
	unsigned long v = 0, bad = 0;
	size_t i;

#pragma GCC unroll 8
	for (i = 0; i < n; i++) {
		unsigned long d = (unsigned long)hex_digit1[(unsigned char)s[i]] - 1;

		bad |= d;
		v = v << 4 | (d & 0xf);
	}
	*out = v;
	return n && bad <= 0xf ? 0 : -EINVAL;
}
/*
 * Copy in for a terminal (a log line, text output): C0 controls, DEL, C1 controls (as
 * UTF-8, U+0080-U+009F, and as raw bytes), and every byte that is not part of a valid,
 * shortest-form UTF-8 character become '?', one a byte; valid UTF-8 is kept. A copy cut
 * short ends in "..." (when size > 4), never inside a character. in and out may be the
 * same buffer. Returns the length written.
 */
size_t term_safe(const char *in, char *out, size_t size);
/*
 * The length of the character at s that term_safe keeps (valid, shortest-form UTF-8 that is
 * no control and no bidirectional control); 0 for a byte it would make '?', and at the NUL.
 */
size_t term_char(const char *s);
/* A sort key and the index of what it sorts. */
struct sort_key {
	uint64_t key;
	size_t idx;
};

/*
 * Sort by key, then index: a radix sort when the keys come in index order (as every caller
 * fills them) and a second array can be had, else an in-place heapsort; no callback
 * (libc's qsort, called for each comparison, cost a fifth of a plan's instructions).
 */
void sort_keys(struct sort_key *k, size_t n);

/* A driver or module name: [A-Za-z0-9_-], 1..55 characters. */
bool valid_driver_name(const char *s);

/*
 * A Kubernetes label value: empty, or at most 63 characters of [-_.A-Za-z0-9] that begin
 * and end with [A-Za-z0-9] (what NFD's feature file may carry after KEY=).
 */
bool valid_label_value(const char *s);

/*
 * The name nearest to a word a user got wrong (an option, a command, a key), by edit
 * distance: start from { NULL }, try each valid name in turn; best is the first of the
 * nearest, NULL when none was tried.
 */
struct nearest {
	const char *best;
	size_t dist;
};
void nearest_try(struct nearest *n, const char *word, const char *name);

/*
 * Flush and close stdout, as util-linux's close_stdout does, so that a write error the
 * buffer hid (a full disk behind `> FILE`) is not an exit 0 with a truncated file: 0, or
 * -errno (EPIPE, a reader that went away, is 0). Call once, at exit, after the last output.
 */
int stdout_close(void);

/*
 * snprintf for a message cut to its buffer on purpose (a reason, a finding): the tree builds
 * with -Wformat-truncation, which this call does not ask, so that a cut the code does not
 * mean shows as a warning. Data (a path, a name) is never cut: its buffer is sized.
 */
__attribute__((format(printf, 3, 4))) void fmt_cut(char *buf, size_t size, const char *fmt, ...);

/*
 * The clock id's time in milliseconds (CLOCK_MONOTONIC, CLOCK_BOOTTIME, CLOCK_REALTIME) or
 * microseconds: one place for the arithmetic the deadlines, the timings and the metrics use.
 */
unsigned long long clock_ms(clockid_t id);
unsigned long long clock_us(clockid_t id);

/* One read(2) restarted on EINTR: the bytes read, 0 at the end, or -errno. */
ssize_t read_nointr(int fd, void *buf, size_t size);
/* All of len bytes written, restarted on EINTR and short writes: 0, or -errno (-EIO: none taken). */
int write_all(int fd, const void *data, size_t len);
/*
 * fd read to its end into a new buffer (NUL-terminated; the caller frees *buf): -EFBIG
 * when it holds more than max bytes (a file that grew since its size was looked at),
 * -ENOMEM, or the read's -errno. fd is left open.
 */
int read_whole(int fd, size_t max, char **buf, size_t *len);

#endif
