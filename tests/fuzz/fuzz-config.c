// SPDX-License-Identifier: MIT
/*
 * The host config parser, on the bytes of a file (NUL bytes, CRLF, overlong lines).
 *
 * Invariants: exactly one callback for each line that is neither blank nor a comment and
 * none for the others, in line order; an item is either a key and a value or an error;
 * a key is [A-Za-z0-9_./-]+ and both key and value are text of their own line, without
 * the surrounding blanks.
 */
#include <ctype.h>

#include "config.h"
#include "fuzz.h"

struct line {
	const char *start;
	size_t len;
	bool counts; /* neither blank nor a comment */
};

struct ctx {
	struct line *lines;
	size_t n_lines;
	unsigned next; /* the next line that must be reported, 1-based */
};

/* The lines as the header describes them: split at '\n', "\r\n" ends a line too. */
static size_t split(const char *buf, size_t len, struct line *out)
{
	size_t n = 0, i = 0;

	while (i < len) {
		const char *s = buf + i, *nl = memchr(s, '\n', len - i);
		size_t l = nl ? (size_t)(nl - s) : len - i, a = 0, b;

		i += l + (nl ? 1 : 0);
		out[n].start = s;
		out[n].len = l;
		/* Overlong lines and NUL bytes are reported whatever they hold. */
		if (l >= CONFIG_LINE_MAX || memchr(s, '\0', l)) {
			out[n++].counts = true;
			continue;
		}
		while (a < l && (s[a] == ' ' || s[a] == '\t'))
			a++;
		b = l;
		while (b > a && isspace((unsigned char)s[b - 1]))
			b--;
		out[n++].counts = b > a && s[a] != '#';
	}
	return n;
}

static bool contains(const struct line *l, const char *s)
{
	size_t n = strlen(s);

	return n == 0 || memmem(l->start, l->len, s, n) != NULL;
}

static void on_item(const struct config_item *it, void *data)
{
	struct ctx *c = data;
	const struct line *l;
	const char *k;

	fuzz_assert(it->line >= 1 && it->line <= c->n_lines, "line %u of %zu", it->line, c->n_lines);
	while (c->next < it->line)
		fuzz_assert(!c->lines[c->next++ - 1].counts, "line %u not reported", c->next - 1);
	fuzz_assert(c->next == it->line, "line %u reported twice or out of order", it->line);
	l = &c->lines[c->next++ - 1];
	fuzz_assert(l->counts, "blank or comment line %u reported", it->line);
	fuzz_assert((it->key == NULL) != (it->error == NULL), "line %u: key xor error", it->line);
	if (it->error) {
		fuzz_assert(!it->value && it->error[0], "line %u: error with a value", it->line);
		return;
	}
	fuzz_assert(it->value, "line %u: no value", it->line);
	fuzz_assert(it->key[0], "line %u: empty key", it->line);
	for (k = it->key; *k; k++)
		fuzz_assert(isalnum((unsigned char)*k) || strchr("_./-", *k),
			    "line %u: key byte 0x%02x", it->line, (unsigned char)*k);
	fuzz_assert(contains(l, it->key) && contains(l, it->value),
		    "line %u: key or value not from the line", it->line);
	fuzz_assert(!strchr(it->value, '\n'), "line %u: newline in the value", it->line);
	if (it->value[0] && isspace((unsigned char)it->value[strlen(it->value) - 1])) {
		size_t e = l->len;

		/* Only quotes keep a trailing blank: the line's last visible byte is one. */
		while (e > 0 && isspace((unsigned char)l->start[e - 1]))
			e--;
		fuzz_assert(e > 0 && strchr("\"'", l->start[e - 1]),
			    "line %u: trailing blank kept in '%s'", it->line, it->value);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ctx c = { 0 };
	char *buf = malloc(size ? size : 1); /* exact: not NUL-terminated, as len says */
	int r;

	if (!buf)
		abort();
	memcpy(buf, data, size);
	c.lines = calloc(size + 1, sizeof(*c.lines));
	if (!c.lines)
		abort();
	c.n_lines = split(buf, size, c.lines);
	c.next = 1;
	r = config_parse(buf, size, on_item, &c);
	fuzz_assert(r == 0, "config_parse returned %d", r);
	while (c.next <= c.n_lines)
		fuzz_assert(!c.lines[c.next++ - 1].counts, "line %u not reported", c.next - 1);
	free(c.lines);
	free(buf);
	return 0;
}
