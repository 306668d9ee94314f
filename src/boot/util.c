// SPDX-License-Identifier: MIT
/* Small string helpers shared by the parsers. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "util.h"

int strscpy(char *dst, const char *src, size_t size)
{
	size_t n = strlen(src);

	if (size == 0)
		return -ENAMETOOLONG;
	if (n >= size) {
		memcpy(dst, src, size - 1);
		dst[size - 1] = '\0';
		return -ENAMETOOLONG;
	}
	memcpy(dst, src, n + 1);
	return 0;
}

size_t rstrip(char *s)
{
	size_t n = strlen(s);

	while (n > 0 && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	return n;
}

const uint8_t hex_digit1[256] = {
	['0'] = 1,  ['1'] = 2,	['2'] = 3,  ['3'] = 4,	['4'] = 5,  ['5'] = 6,
	['6'] = 7,  ['7'] = 8,	['8'] = 9,  ['9'] = 10, ['a'] = 11, ['b'] = 12,
	['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16, ['A'] = 11, ['B'] = 12,
	['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

int parse_hex_n(const char *s, size_t len, unsigned max_digits, unsigned long *out)
{
	unsigned long v = 0;
	size_t i = 0;
	unsigned n = 0;

	if (len >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		i = 2;
	for (; i < len; i++, n++) {
		int c = (unsigned char)s[i], d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return -EINVAL;
		if (n >= max_digits)
			return -ERANGE;
		v = v * 16 + (unsigned long)d;
	}
	if (n == 0)
		return -EINVAL;
	*out = v;
	return 0;
}

int parse_hex(const char *s, unsigned max_digits, unsigned long *out)
{
	return parse_hex_n(s, strlen(s), max_digits, out);
}

/*
 * The length of the UTF-8 sequence at s if it encodes, in shortest form, a code point a
 * terminal shows without acting on it; else 0. Not C0, DEL or C1 (U+0080-U+009F, which a
 * VT takes as ESC-sequences: U+009B is CSI), not a surrogate, not past U+10FFFF.
 */
static size_t shown_char(const unsigned char *s)
{
	unsigned char c = s[0];
	uint32_t cp;
	size_t n, i;

	if (c < 0x80)
		return c >= ' ' && c != 0x7f;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 0; /* a continuation byte, C0/C1 overlong leads, past U+10FFFF */
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0; /* also the NUL at the end */
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp <= 0x9f || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	/* Bidirectional controls reorder what a terminal shows of the rest of the line. */
	if (cp == 0x061c || cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
	    (cp >= 0x2066 && cp <= 0x2069))
		return 0;
	return n;
}

size_t term_char(const char *s)
{
	return shown_char((const unsigned char *)s);
}

size_t term_safe(const char *in, char *out, size_t size)
{
	const unsigned char *s = (const unsigned char *)in;
	size_t i = 0, o = 0, room, cut = 0, n;

	if (size == 0)
		return 0;
	room = size - 1;
	while (s[i]) {
		n = shown_char(s + i);
		if (o + (n ? n : 1) > room) {
			/* cut short: whole characters up to room - 3, then "..." */
			if (size > 4) {
				o = cut;
				memcpy(out + o, "...", 4);
				return o + 3;
			}
			break;
		}
		if (o + (n ? n : 1) <= room - (room >= 3 ? 3 : room))
			cut = o + (n ? n : 1);
		if (n) {
			memmove(out + o, s + i, n);
			o += n;
			i += n;
		} else {
			out[o++] = '?';
			i++;
		}
	}
	out[o] = '\0';
	return o;
}

bool valid_driver_name(const char *s)
{
	size_t n = 0;

	for (; s[n]; n++) {
		unsigned char c = (unsigned char)s[n];

		if (!isalnum(c) && c != '_' && c != '-')
			return false;
	}
	return n > 0 && n <= 55;
}

bool valid_label_value(const char *s)
{
	size_t n = strlen(s), i;

	if (n == 0)
		return true;
	if (n > 63 || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
		return false;
	for (i = 1; i + 1 < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (!isalnum(c) && c != '-' && c != '_' && c != '.')
			return false;
	}
	return true;
}

/* Levenshtein's distance of a and b, each cut at 31 bytes (names, not text). */
static size_t edit_distance(const char *a, const char *b)
{
	size_t row[32], la = strnlen(a, 31), lb = strnlen(b, 31), i, j, diag, up, v;

	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		diag = row[0];
		row[0] = i;
		for (j = 1; j <= lb; j++) {
			up = row[j];
			v = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < v)
				v = up + 1;
			if (row[j - 1] + 1 < v)
				v = row[j - 1] + 1;
			row[j] = v;
			diag = up;
		}
	}
	return row[lb];
}

void nearest_try(struct nearest *n, const char *word, const char *name)
{
	size_t d = edit_distance(word, name);

	if (!n->best || d < n->dist) {
		n->best = name;
		n->dist = d;
	}
}

static bool key_less(const struct sort_key *a, const struct sort_key *b)
{
	return a->key < b->key || (a->key == b->key && a->idx < b->idx);
}

static void sift_down(struct sort_key *k, size_t root, size_t n)
{
	for (;;) {
		size_t child = 2 * root + 1;
		struct sort_key t;

		if (child >= n)
			return;
		if (child + 1 < n && key_less(&k[child], &k[child + 1]))
			child++;
		if (!key_less(&k[root], &k[child]))
			return;
		t = k[root];
		k[root] = k[child];
		k[child] = t;
		root = child;
	}
}

/*
 * LSD radix sort by key, a byte a pass, skipping the bytes every key shares (most of a PCI
 * address's domain): 3,000 functions in a few passes, not 70,000 comparisons. Stable, so
 * keys that tie keep their order: by index when they came so. false when they did not, or
 * without memory for the second array: the heap sort then.
 */
static bool radix_sort(struct sort_key *k, size_t n)
{
	struct sort_key *tmp, *src = k, *dst, *t;
	uint64_t any = 0, all = ~(uint64_t)0;
	size_t count[256], i;
	unsigned b;

	for (i = 0; i < n; i++) {
		if (i && k[i].idx <= k[i - 1].idx)
			return false;
		any |= k[i].key;
		all &= k[i].key;
	}
	tmp = malloc(n * sizeof(*tmp));
	if (!tmp)
		return false;
	dst = tmp;
	for (b = 0; b < 64; b += 8) {
		size_t pos = 0, c;

		if ((((any ^ all) >> b) & 0xff) == 0)
			continue; /* the same byte in every key */
		memset(count, 0, sizeof(count));
		for (i = 0; i < n; i++)
			count[(src[i].key >> b) & 0xff]++;
		for (i = 0; i < 256; i++) {
			c = count[i];
			count[i] = pos;
			pos += c;
		}
		for (i = 0; i < n; i++)
			dst[count[(src[i].key >> b) & 0xff]++] = src[i];
		t = src;
		src = dst;
		dst = t;
	}
	if (src != k)
		memcpy(k, src, n * sizeof(*k));
	free(tmp);
	return true;
}

void sort_keys(struct sort_key *k, size_t n)
{
	size_t i;

	if (n < 2)
		return;
	if (n >= 64 && radix_sort(k, n))
		return;
	for (i = n / 2; i-- > 0;)
		sift_down(k, i, n);
	for (i = n - 1; i > 0; i--) {
		struct sort_key t = k[0];

		k[0] = k[i];
		k[i] = t;
		sift_down(k, 0, i);
	}
}

int stdout_close(void)
{
	int err = 0;

	errno = 0;
	if (fflush(stdout) != 0 || ferror(stdout))
		err = errno ? errno : EIO;
	if (fclose(stdout) != 0 && !err)
		err = errno ? errno : EIO;
	return err == EPIPE ? 0 : -err;
}

void fmt_cut(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, size, fmt, ap);
	va_end(ap);
}

unsigned long long clock_us(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (unsigned long long)ts.tv_sec * 1000000ULL + (unsigned long long)ts.tv_nsec / 1000;
}

unsigned long long clock_ms(clockid_t id)
{
	return clock_us(id) / 1000;
}

ssize_t read_nointr(int fd, void *buf, size_t size)
{
	ssize_t n;

	do
		n = read(fd, buf, size);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

int write_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int read_whole(int fd, size_t max, char **buf, size_t *len)
{
	size_t got = 0;
	char *b = malloc(max + 1);

	*buf = NULL;
	*len = 0;
	if (!b)
		return -ENOMEM;
	for (;;) {
		ssize_t n = read_nointr(fd, b + got, max + 1 - got);

		if (n < 0) {
			free(b);
			return (int)n;
		}
		if (n == 0)
			break;
		got += (size_t)n;
		if (got > max) {
			free(b);
			return -EFBIG;
		}
	}
	b[got] = '\0';
	*buf = b;
	*len = got;
	return 0;
}
