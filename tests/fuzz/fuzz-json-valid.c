// SPDX-License-Identifier: MIT
/*
 * json_valid on arbitrary bytes, in an exact buffer (no NUL after it: ASan sees a read
 * past len).
 *
 * Invariants: never reads past len, never recurses without bound; a valid text stays
 * valid with whitespace around it and inside an array or object (while shallow enough),
 * and is no longer valid with a stray ']' or a second value after it.
 *
 * json_get_string, the reader, on the same bytes: -EINVAL on every text json_valid refuses;
 * on a valid one only 0, -ENOENT, -EINVAL or -E2BIG; what it gives is NUL-terminated within
 * its buffer, and read back the same from {"k": <it, written by json_escape>} (so it is
 * valid UTF-8: json_escape replaces what is not).
 */
#include <errno.h>

#include "fuzz.h"
#include "json.h"
#include "util.h"

#define DEPTH_LIMIT 64 /* json_valid's nesting bound */

static bool valid_with(const char *pre, const uint8_t *data, size_t size, const char *post)
{
	size_t a = strlen(pre), b = strlen(post);
	char *buf = malloc(a + size + b + 1);
	bool ok;

	if (!buf)
		abort();
	memcpy(buf, pre, a);
	if (size)
		memcpy(buf + a, data, size);
	memcpy(buf + a + size, post, b);
	ok = json_valid(buf, a + size + b);
	free(buf);
	return ok;
}

/* Brackets outside strings: an upper bound of the nesting depth. */
static size_t brackets(const uint8_t *data, size_t size)
{
	size_t i, n = 0;
	bool in_str = false;

	for (i = 0; i < size; i++) {
		if (in_str && data[i] == '\\')
			i++;
		else if (data[i] == '"')
			in_str = !in_str;
		else if (!in_str && (data[i] == '[' || data[i] == '{'))
			n++;
	}
	return n;
}

static void read_back(const char *got)
{
	static const char *const k[] = { "k" };
	char *doc = NULL, again[256];
	size_t len = 0;
	FILE *f = open_memstream(&doc, &len);
	int r;

	if (!f)
		abort();
	fputs("{\"k\": \"", f);
	json_escape(f, got);
	fputs("\"}", f);
	fclose(f);
	r = json_get_string(doc, len, k, 1, again, sizeof(again));
	fuzz_assert(r == 0 && streq(again, got), "'%s' reads back as '%s' (%d) from %s", got, again,
		    r, doc);
	free(doc);
}

/* The reader on the input, at a few paths and buffer sizes. */
static void reader(const char *buf, size_t size, bool valid)
{
	static const char *const paths[][2] = {
		{ "mode", NULL },
		{ "config_disk", "spec" },
		{ "", NULL },
		{ "a", "b" },
	};
	char out[256];
	size_t i, cap;

	for (i = 0; i <= ARRAY_SIZE(paths); i++) {
		size_t depth = i == ARRAY_SIZE(paths) ? 0 : paths[i][1] ? 2 : 1;
		const char *const *path = i == ARRAY_SIZE(paths) ? paths[0] : paths[i];

		for (cap = 1; cap <= sizeof(out); cap *= 16) {
			int r;

			memset(out, 'X', sizeof(out));
			r = json_get_string(buf, size, path, depth, out, cap);
			fuzz_assert(valid || r == -EINVAL, "%d from a text json_valid refuses", r);
			fuzz_assert(r == 0 || r == -ENOENT || r == -EINVAL || r == -E2BIG, "%d", r);
			if (r != 0 && r != -E2BIG)
				continue;
			fuzz_assert(memchr(out, '\0', cap) != NULL, "not terminated within %zu", cap);
			if (r == 0)
				read_back(out); /* json_escape would have replaced invalid UTF-8 */
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size ? size : 1);
	bool ok;

	if (!buf)
		abort();
	if (size)
		memcpy(buf, data, size);
	ok = json_valid(buf, size);
	reader(buf, size, ok);
	free(buf);
	if (!ok)
		return 0;
	fuzz_assert(valid_with(" \t\r\n", data, size, "\n \t"), "not valid with whitespace around");
	fuzz_assert(!valid_with("", data, size, "]"), "valid with a stray ']' after it");
	fuzz_assert(!valid_with("", data, size, " 0"), "valid with a second value after it");
	fuzz_assert(!valid_with("", data, size, ","), "valid with a ',' after it");
	if (brackets(data, size) + 1 < DEPTH_LIMIT) {
		fuzz_assert(valid_with("[", data, size, "]"), "not valid inside an array");
		fuzz_assert(valid_with("[1,", data, size, ",null]"), "not valid among others");
		fuzz_assert(valid_with("{\"k\":", data, size, "}"), "not valid as a member");
	}
	return 0;
}
