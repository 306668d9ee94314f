// SPDX-License-Identifier: MIT
/*
 * term_safe() against a reference definition, exhaustively over short byte strings: what a
 * terminal may be shown of a name from sysfs, a config or a command line; and the I/O and
 * clock helpers every file shares.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "log.h"
#include "unit.h"
#include "util.h"

/* The UTF-8 encoding of code point cp (RFC 3629, shortest form) into b; its length. */
static size_t ref_encode(uint32_t cp, unsigned char *b)
{
	if (cp < 0x80) {
		b[0] = (unsigned char)cp;
		return 1;
	}
	if (cp < 0x800) {
		b[0] = (unsigned char)(0xc0 | cp >> 6);
		b[1] = (unsigned char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		b[0] = (unsigned char)(0xe0 | cp >> 12);
		b[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
		b[2] = (unsigned char)(0x80 | (cp & 0x3f));
		return 3;
	}
	b[0] = (unsigned char)(0xf0 | cp >> 18);
	b[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
	b[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
	b[3] = (unsigned char)(0x80 | (cp & 0x3f));
	return 4;
}

/*
 * A code point a terminal shows and does not act on: no C0, DEL, C1, surrogate, nor a
 * bidirectional control (ALM, LRM, RLM, the embeddings and overrides, the isolates).
 */
static bool ref_shown(uint32_t cp)
{
	static const uint32_t bidi[] = { 0x061c, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c,
					 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069 };
	size_t i;

	for (i = 0; i < sizeof(bidi) / sizeof(bidi[0]); i++)
		if (cp == bidi[i])
			return false;
	return cp >= 0x20 && cp != 0x7f && !(cp >= 0x80 && cp <= 0x9f) &&
		!(cp >= 0xd800 && cp <= 0xdfff) && cp <= 0x10ffff;
}

/*
 * The reference: at each position, the k (1..4) whose bytes are exactly the
 * encoding of a shown code point is kept; else that one byte becomes '?'. The code point
 * is found by trying them all for k, so nothing here decodes as term_safe() does.
 */
static size_t ref_safe(const unsigned char *in, size_t len, char *out)
{
	static const uint32_t lo[5] = { 0, 0, 0x80, 0x800, 0x10000 };
	static const uint32_t hi[5] = { 0, 0x7f, 0x7ff, 0xffff, 0x10ffff };
	size_t i = 0, o = 0;

	while (i < len) {
		size_t k, took = 0;

		for (k = 1; k <= 4 && i + k <= len && !took; k++) {
			uint32_t cp = 0;
			unsigned char b[4];
			unsigned sh;

			/* the only candidate of length k: the payload bits of the bytes */
			if (k == 1)
				cp = in[i];
			else
				for (sh = 0, cp = in[i] & (0xff >> (k + 1)); sh + 1 < k; sh++)
					cp = cp << 6 | (in[i + sh + 1] & 0x3f);
			if (cp < lo[k] || cp > hi[k] || ref_encode(cp, b) != k ||
			    memcmp(b, in + i, k) != 0 || !ref_shown(cp))
				continue;
			took = k;
		}
		if (took) {
			memcpy(out + o, in + i, took);
			o += took;
			i += took;
		} else {
			out[o++] = '?';
			i++;
		}
	}
	out[o] = '\0';
	return o;
}

static unsigned mismatches;

static void one(const unsigned char *in, size_t len)
{
	char s[8], want[8], got[8];

	memcpy(s, in, len);
	s[len] = '\0';
	if (memchr(s, '\0', len))
		return; /* a C string ends at its NUL */
	ref_safe(in, len, want);
	term_safe(s, got, sizeof(got));
	if (strcmp(got, want) != 0 && mismatches++ < 5) {
		printf("# in");
		for (size_t i = 0; i < len; i++)
			printf(" %02x", in[i]);
		printf(": got '%s', want '%s'\n", got, want);
	}
}

/* Every string of 1 and 2 bytes; 3 and 4 over the bytes where UTF-8 has its edges. */
static void exhaustive(void)
{
	static const unsigned char edge[] = { 0x01, 0x1b, 0x20, 0x41, 0x7e, 0x7f, 0x80, 0x8f,
					      0x90, 0x9b, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2,
					      0xc3, 0xdf, 0xe0, 0xe1, 0xec, 0xed, 0xee, 0xef,
					      0xf0, 0xf1, 0xf3, 0xf4, 0xf5, 0xf8, 0xfe, 0xff };
	unsigned char b[4];
	size_t a, c, d, e, n = sizeof(edge);
	uint32_t cp;

	for (a = 1; a < 256; a++) {
		b[0] = (unsigned char)a;
		one(b, 1);
		for (c = 1; c < 256; c++) {
			b[1] = (unsigned char)c;
			one(b, 2);
		}
	}
	CHECK_INT(mismatches, 0, "every string of one and two bytes as the reference says");
	for (a = 0; a < n; a++)
		for (c = 0; c < n; c++)
			for (d = 0; d < n; d++) {
				b[0] = edge[a];
				b[1] = edge[c];
				b[2] = edge[d];
				one(b, 3);
				for (e = 0; e < n; e++) {
					b[3] = edge[e];
					one(b, 4);
				}
			}
	CHECK_INT(mismatches, 0, "three and four bytes over UTF-8's edges as the reference says");
	for (cp = 1; cp <= 0x10ffff; cp++)
		one(b, ref_encode(cp, b));
	CHECK_INT(mismatches, 0, "the encoding of every code point as the reference says");
}

static void examples(void)
{
	char out[64];

	term_safe("nvidia\x1b[31m\a", out, sizeof(out));
	CHECK_STR(out, "nvidia?[31m?", "ESC and BEL");
	term_safe("a\xc2\x9b"
		  "2J",
		  out, sizeof(out));
	CHECK_STR(out, "a??2J", "CSI as UTF-8 (U+009B)");
	term_safe("a\x9b"
		  "2J",
		  out, sizeof(out));
	CHECK_STR(out, "a?2J", "CSI as a raw byte");
	term_safe("\xc0\x9b\xe0\x80\x9b\xf0\x80\x80\x9b", out, sizeof(out));
	CHECK_STR(out, "?????????", "overlong encodings of CSI");
	term_safe("GeForce RTX\xe2\x84\xa2 \xc3\xa9t\xc3\xa9 \xf0\x9f\x98\x80", out, sizeof(out));
	CHECK_STR(out, "GeForce RTX\xe2\x84\xa2 \xc3\xa9t\xc3\xa9 \xf0\x9f\x98\x80",
		  "valid UTF-8 kept");
	term_safe("abc\xe2\x80\xae"
		  "fdp.exe \xe2\x81\xa6x\xe2\x81\xa9 \xd8\x9c\xe2\x80\x8f",
		  out, sizeof(out));
	CHECK_STR(out, "abc???fdp.exe ???x??? ?????",
		  "bidirectional controls (RLO, LRI, PDI, ALM, RLM)");
	term_safe("\xe2\x80\x8d\xe2\x80\xaf", out, sizeof(out));
	CHECK_STR(out, "\xe2\x80\x8d\xe2\x80\xaf", "their neighbours U+200D and U+202F kept");
	term_safe("\xed\xa0\x80\xf4\x90\x80\x80", out, sizeof(out));
	CHECK_STR(out, "???????", "surrogates and past U+10FFFF");
	term_safe("0123456789abcdef", out, 8);
	CHECK_STR(out, "0123...", "cut short: ends in ...");
	term_safe("ab\xc3\xa9\xc3\xa9\xc3\xa9", out, 8);
	CHECK_STR(out, "ab\xc3\xa9...", "cut short between characters");
	term_safe("abc\xc3\xa9\xc3\xa9\xc3\xa9", out, 8);
	CHECK_STR(out, "abc...", "cut short, never inside a character");
	term_safe("abc", out, 2);
	CHECK_STR(out, "a", "a buffer too small for ...");
	strcpy(out, "x\x1b\xc2\x9by");
	term_safe(out, out, sizeof(out));
	CHECK_STR(out, "x???y", "in place");
}

/* What reaches the console and kmsg, and what the report keeps. */
static void log_lines(void)
{
	log_setup(false, (enum log_level)0);
	log_err("driver '%s'",
		"a\x1b]0;x\a\xc2\x9b"
		"31m\x9b\xff");
	CHECK_STR(log_get(LOG_ERR, 0),
		  "driver 'a?]0;x???31m?"
		  "?'",
		  "a log line masks C0, C1 and bad UTF-8");
	log_close();
}

/* NFD's feature file carries label values: Kubernetes' rules. */
static void label_values(void)
{
	char long63[64], long64[65];

	memset(long63, 'a', 63);
	long63[63] = '\0';
	memset(long64, 'a', 64);
	long64[64] = '\0';
	CHECK(valid_label_value(""), "label value: empty");
	CHECK(valid_label_value("vm-passthrough"), "label value: a mode");
	CHECK(valid_label_value("a.b_c-9"), "label value: dots, underscores, dashes inside");
	CHECK(valid_label_value(long63), "label value: 63 characters");
	CHECK(!valid_label_value(long64), "label value: not 64");
	CHECK(!valid_label_value("-a") && !valid_label_value("a-") && !valid_label_value("_a") &&
		      !valid_label_value("a."),
	      "label value: not beginning or ending in - _ .");
	CHECK(!valid_label_value("ok\nfeature.node.kubernetes.io/x=y"), "label value: no newline");
	CHECK(!valid_label_value("a\x1b[31mb") && !valid_label_value("a b") &&
		      !valid_label_value("a=b") &&
		      !valid_label_value("a\xe2\x80\xae"
					 "b"),
	      "label value: no ESC, blank, '=' or bidirectional control");
}

/* read_whole, write_all and read_nointr over a pipe and a file; the clocks. */
static void io_helpers(void)
{
	char tmpl[] = "/tmp/test-util.XXXXXX", *buf;
	unsigned long long a, b;
	int fd = mkstemp(tmpl), p[2];
	size_t len;

	CHECK(fd >= 0, "a temporary file");
	unlink(tmpl);
	CHECK_INT(write_all(fd, "0123456789", 10), 0, "write_all: ten bytes");
	lseek(fd, 0, SEEK_SET);
	CHECK_INT(read_whole(fd, 10, &buf, &len), 0, "read_whole: exactly max is read");
	CHECK_STR(buf, "0123456789", "read_whole: the bytes, NUL-terminated");
	CHECK_INT((int)len, 10, "read_whole: the length");
	free(buf);
	lseek(fd, 0, SEEK_SET);
	CHECK_INT(read_whole(fd, 9, &buf, &len), -EFBIG, "read_whole: one past max is -EFBIG");
	CHECK(buf == NULL && len == 0, "read_whole: nothing handed out on an error");
	close(fd);
	CHECK_INT(read_whole(fd, 9, &buf, &len), -EBADF, "read_whole: the read's -errno");
	CHECK_INT(write_all(fd, "x", 1), -EBADF, "write_all: the write's -errno");
	CHECK(pipe(p) == 0, "a pipe");
	CHECK_INT(write_all(p[1], "ab", 2), 0, "write_all into a pipe");
	close(p[1]);
	{
		char two[4] = "";

		CHECK_INT((int)read_nointr(p[0], two, sizeof(two)), 2, "read_nointr: what is there");
		CHECK_INT((int)read_nointr(p[0], two, sizeof(two)), 0, "read_nointr: 0 at the end");
	}
	close(p[0]);
	a = clock_ms(CLOCK_MONOTONIC);
	b = clock_us(CLOCK_MONOTONIC);
	CHECK(b / 1000 >= a && b / 1000 - a < 1000, "clock_ms and clock_us tell the same time");
	CHECK(clock_ms(CLOCK_REALTIME) > 1600000000000ULL, "clock_ms(CLOCK_REALTIME) is the epoch's");
}

/* The name nearest_try keeps for word among names[0..n). */
static const char *nearest_of(const char *word, const char *const *names, size_t n)
{
	struct nearest nn = { NULL, 0 };
	size_t i;

	for (i = 0; i < n; i++)
		nearest_try(&nn, word, names[i]);
	return nn.best;
}

static void nearest_names(void)
{
	static const char *const keys[] = { "mode",	   "ids",      "exclude", "nvswitch",
					    "host_driver", "on_error", "config",  "config_timeout" };
	static const char *const opts[] = { "root",    "cmdline", "config",	  "json",
					    "dry-run", "mode",	  "vgpu-release", "kubevirt-version" };
	static const char *const cmds[] = { "status", "check", "plan", "config", "apply" };
	static const char *const tie[] = { "ab", "ba" };
	struct nearest nn = { NULL, 0 };

	CHECK_STR(nearest_of("mdoe", keys, 8), "mode", "nearest: a transposition");
	CHECK_STR(nearest_of("exlude", keys, 8), "exclude", "nearest: a letter left out");
	CHECK_STR(nearest_of("on-eror", keys, 8), "on_error", "nearest: a dash and a letter");
	CHECK_STR(nearest_of("config-timeout", keys, 8), "config_timeout", "nearest: not config");
	CHECK_STR(nearest_of("vgpu-relase", opts, 8), "vgpu-release", "nearest: an option");
	CHECK_STR(nearest_of("jsn", opts, 8), "json", "nearest: a short option name");
	CHECK_STR(nearest_of("dryrun", opts, 8), "dry-run", "nearest: the dash left out");
	CHECK_STR(nearest_of("stauts", cmds, 5), "status", "nearest: a command");
	CHECK_STR(nearest_of("aply", cmds, 5), "apply", "nearest: apply");
	CHECK_STR(nearest_of("x", tie, 2), "ab", "nearest: the first of equals");
	CHECK_STR(nearest_of("mode", keys, 0), NULL, "nearest: none tried, none");
	nearest_try(&nn, "abc", "abc");
	CHECK_INT(nn.dist, 0, "nearest: the word itself is 0 away");
	nearest_try(&nn, "abc", "");
	CHECK_INT(nn.dist, 0, "nearest: a farther name does not replace it");
	nn.best = NULL;
	nearest_try(&nn, "kitten", "sitting");
	CHECK_INT(nn.dist, 3, "nearest: kitten to sitting is 3");
	nearest_try(&nn, "a-very-long-word-past-thirty-one-bytes-x",
		    "a-very-long-word-past-thirty-one-bytes-y");
	CHECK_INT(nn.dist, 0, "nearest: words are cut at 31 bytes");
}

int main(void)
{
	nearest_names();
	io_helpers();
	exhaustive();
	examples();
	log_lines();
	label_values();
	return unit_done();
}
