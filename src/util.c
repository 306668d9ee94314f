// SPDX-License-Identifier: MIT
/* Small string helpers shared by the parsers. */
#include <ctype.h>
#include <errno.h>

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

void printable(const char *in, char *out, size_t size)
{
	size_t i;

	for (i = 0; in[i] && i + 1 < size; i++) {
		unsigned char c = (unsigned char)in[i];

		out[i] = (c < ' ' || c >= 0x7f) ? '?' : (char)c;
	}
	out[i] = '\0';
	if (in[i] && size > 4)
		memcpy(out + size - 4, "...", 4);
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

void sort_keys(struct sort_key *k, size_t n)
{
	size_t i;

	if (n < 2)
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
