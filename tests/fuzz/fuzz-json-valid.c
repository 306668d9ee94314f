// SPDX-License-Identifier: MIT
/*
 * json_valid on arbitrary bytes, in an exact buffer (no NUL after it: ASan sees a read
 * past len).
 *
 * Invariants: never reads past len, never recurses without bound; a valid text stays
 * valid with whitespace around it and inside an array or object (while shallow enough),
 * and is no longer valid with a stray ']' or a second value after it.
 */
#include "fuzz.h"
#include "json.h"

#define DEPTH_LIMIT 64	/* json_valid's nesting bound */

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size ? size : 1);
	bool ok;

	if (!buf)
		abort();
	if (size)
		memcpy(buf, data, size);
	ok = json_valid(buf, size);
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
