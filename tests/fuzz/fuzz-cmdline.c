// SPDX-License-Identifier: MIT
/*
 * The kernel command line tokenizer and cmdline_key.
 *
 * Invariants: the words, with whitespace dropped, are the input with quotes and
 * whitespace dropped, in order (nothing lost, nothing invented); no word is empty, no key
 * holds '=' or '"'; a callback's non-zero return stops the walk and is returned;
 * cmdline_key agrees with a reference written from its contract and never writes past
 * the size it is given.
 */
#include <ctype.h>

#include "cmdline.h"
#include "fuzz.h"

struct ctx {
	char *flat; /* the non-space bytes of the words, in order */
	size_t n_flat;
	unsigned words, stop_at;
	bool stopped;
};

static void flatten(struct ctx *c, const char *s)
{
	for (; *s; s++)
		if (!isspace((unsigned char)*s))
			c->flat[c->n_flat++] = *s;
}

/* cmdline_key as its header describes it. */
static bool ref_key(const char *key, const char *prefix, char *out, size_t size)
{
	size_t plen = strlen(prefix), i;
	const char *name;

	if (strncmp(key, "rd.", 3) == 0)
		key += 3;
	if (strncmp(key, prefix, plen) != 0 || key[plen] != '.')
		return false;
	name = key + plen + 1;
	if (!*name || strlen(name) >= size)
		return false;
	for (i = 0; name[i]; i++)
		out[i] = name[i] == '-' ? '_' : name[i];
	out[i] = '\0';
	return true;
}

static void check_key(const char *key, const char *prefix)
{
	static const size_t sizes[] = { 0, 1, 2, 5, 8, 64 };
	size_t i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t size = sizes[i];
		char *out = malloc(size ? size : 1); /* exact: ASan sees any write past it */
		char *want = malloc(strlen(key) + 1);
		bool ok, ref;

		if (!out || !want)
			abort();
		ok = cmdline_key(key, prefix, out, size);
		ref = ref_key(key, prefix, want, size);
		fuzz_assert(ok == ref, "cmdline_key('%s', '%s', size %zu) = %d, expected %d", key,
			    prefix, size, ok, ref);
		if (ok) {
			fuzz_assert(strcmp(out, want) == 0,
				    "cmdline_key('%s') gave '%s', expected '%s'", key, out, want);
			fuzz_assert(!strchr(out, '-'), "'-' left in '%s'", out);
		}
		free(out);
		free(want);
	}
}

static int on_word(const char *key, const char *value, void *data)
{
	struct ctx *c = data;

	fuzz_assert(!c->stopped, "a word after the callback asked to stop");
	fuzz_assert(key[0] || value, "an empty word");
	fuzz_assert(!strchr(key, '=') && !strchr(key, '"'), "key '%s' holds '=' or '\"'", key);
	fuzz_assert(!value || !strchr(value, '"'), "value '%s' holds '\"'", value);
	flatten(c, key);
	if (value) {
		c->flat[c->n_flat++] = '=';
		flatten(c, value);
	}
	check_key(key, "gpuvm");
	check_key(key, "x");
	if (++c->words == c->stop_at) {
		c->stopped = true;
		return (int)c->stop_at;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ctx c = { 0 };
	char *line, *want;
	size_t i, n = 0;
	int r;

	if (size < 1)
		return 0;
	c.stop_at = data[0] % 8; /* 0: never stop */
	line = fuzz_cstr(data + 1, size - 1);
	c.flat = malloc(size + 1);
	want = malloc(size + 1);
	if (!c.flat || !want)
		abort();
	for (i = 0; line[i]; i++)
		if (line[i] != '"' && !isspace((unsigned char)line[i]))
			want[n++] = line[i];

	r = cmdline_parse(line, on_word, &c);
	fuzz_assert(r == (c.stopped ? (int)c.stop_at : 0), "cmdline_parse returned %d", r);
	if (!c.stopped) {
		fuzz_assert(c.n_flat == n && memcmp(c.flat, want, n) == 0,
			    "the words are not the line: %zu bytes of %zu", c.n_flat, n);
	} else {
		fuzz_assert(c.n_flat <= n && memcmp(c.flat, want, c.n_flat) == 0,
			    "the words before the stop are not a prefix of the line");
	}
	free(line);
	free(want);
	free(c.flat);
	return 0;
}
