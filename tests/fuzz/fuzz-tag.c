// SPDX-License-Identifier: MIT
/*
 * config= values: tag_parse, tag_format, tag_value_matches.
 *
 * The input, up to its first NUL, is copied into a buffer of exactly its length + 1, so
 * ASan sees any read past the string's end. Invariants: a failure is -EINVAL with a reason
 * and nothing else; a success has no reason, a known type, a value of 1..127 printable
 * bytes found in the input, a device path under /dev/ without "/.." or blanks, a file that
 * is absolute, printable, without blanks or empty, "." or ".." components, under 128 bytes,
 * and either the default or the input's own tail; tag_format's output parses back to the
 * same spec, and cut to any buffer size is a terminated prefix of it, never written past;
 * a spec's value matches itself, UUIDs also in another case, labels only exactly.
 */
#include <ctype.h>
#include <errno.h>

#include "config.h"
#include "fuzz.h"
#include "tagspec.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_log_quiet();
	return 0;
}

static bool printable_ascii(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
			return false;
	return true;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), m = strlen(tail);

	return n >= m && memcmp(s + n - m, tail, m) == 0;
}

static void check_file(const char *f)
{
	const char *c = f;

	fuzz_assert(f[0] == '/', "file '%s' not absolute", f);
	fuzz_assert(strlen(f) < TAG_FILE_MAX, "file of %zu bytes", strlen(f));
	fuzz_assert(printable_ascii(f) && !strchr(f, ' '), "file '%s' not printable or blank", f);
	while (*c == '/') {
		const char *end = strchrnul(c + 1, '/');
		size_t n = (size_t)(end - c - 1);

		fuzz_assert(n > 0 && !(n == 1 && c[1] == '.') && !(n == 2 && c[1] == '.' && c[2] == '.'),
			    "file '%s' has an empty, '.' or '..' component", f);
		c = end;
	}
}

static void check_format(const struct tag_spec *t)
{
	static const size_t sizes[] = { 1, 2, 7, 10, 64, 129, 300 };
	struct tag_spec u;
	const char *why;
	char full[600];
	size_t i, n;
	int r;

	tag_format(t, full, sizeof(full));
	n = strlen(full);
	fuzz_assert(n < sizeof(full) - 1, "formatted spec of %zu bytes", n);
	r = tag_parse(full, &u, &why);
	fuzz_assert(r == 0, "'%s' formatted as '%s' does not parse: %s", t->value, full,
		    why ? why : "(no reason)");
	fuzz_assert(u.type == t->type && strcmp(u.value, t->value) == 0 && strcmp(u.file, t->file) == 0,
		    "'%s' '%s' formatted as '%s' parses to '%s' '%s'", t->value, t->file, full,
		    u.value, u.file);

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char *b = malloc(sizes[i]); /* exact: ASan sees a write past it */

		if (!b)
			abort();
		tag_format(t, b, sizes[i]);
		fuzz_assert(strlen(b) < sizes[i] && strncmp(b, full, strlen(b)) == 0 &&
				    strlen(b) == (n < sizes[i] ? n : sizes[i] - 1),
			    "format cut to %zu bytes: '%s' of '%s'", sizes[i], b, full);
		free(b);
	}
}

static void check_match(const struct tag_spec *t)
{
	char other[TAG_VALUE_MAX];
	size_t i;
	bool changed = false, uuid = t->type == TAG_UUID || t->type == TAG_PARTUUID;

	fuzz_assert(tag_value_matches(t, t->value), "'%s' does not match itself", t->value);
	for (i = 0; t->value[i]; i++) {
		int c = (unsigned char)t->value[i];
		int o = islower(c) ? toupper(c) : tolower(c);

		other[i] = (char)o;
		changed |= o != c;
	}
	other[i] = '\0';
	fuzz_assert(tag_value_matches(t, other) == (uuid || !changed), "'%s' against '%s' (%s)",
		    t->value, other, tag_name(t->type));
	/* Bit 0 of the last byte: another byte in any case (case is bit 5 in ASCII). */
	other[i - 1] ^= 0x01;
	fuzz_assert(!tag_value_matches(t, other), "'%s' matches '%s'", t->value, other);
	fuzz_assert(!tag_value_matches(t, ""), "'%s' matches the empty string", t->value);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t n = strnlen((const char *)data, size);
	char *s = malloc(n + 1);
	struct tag_spec t;
	const char *why = "unset";
	int r;

	if (!s)
		abort();
	memcpy(s, data, n);
	s[n] = '\0';

	r = tag_parse(s, &t, &why);
	if (r != 0) {
		fuzz_assert(r == -EINVAL, "tag_parse returned %d", r);
		fuzz_assert(why && *why && printable_ascii(why), "a failure without a reason");
		free(s);
		return 0;
	}
	fuzz_assert(why == NULL, "a success with a reason: %s", why);
	fuzz_assert(t.type <= TAG_PATH, "type %d", (int)t.type);
	fuzz_assert(t.value[0] && strlen(t.value) < TAG_VALUE_MAX, "value of %zu bytes",
		    strlen(t.value));
	fuzz_assert(printable_ascii(t.value), "value '%s' not printable", t.value);
	fuzz_assert(strstr(s, t.value) != NULL, "value '%s' is not in the input '%s'", t.value, s);
	if (t.type == TAG_PATH) {
		fuzz_assert(strncmp(s, t.value, strlen(t.value)) == 0, "path '%s' not at the start",
			    t.value);
		fuzz_assert(strncmp(t.value, "/dev/", 5) == 0 && !strstr(t.value, "/..") &&
				    !strchr(t.value, ' '),
			    "device path '%s'", t.value);
	} else {
		const char *name = tag_name(t.type);

		fuzz_assert(strncmp(s, name, strlen(name)) == 0 && s[strlen(name)] == '=',
			    "'%s' parsed as %s", s, name);
	}
	fuzz_assert(!strstr(t.value, ":/") || s[strlen(tag_name(t.type)) + 1] == '"',
		    "an unquoted value '%s' holds ':/'", t.value);
	check_file(t.file);
	fuzz_assert(strcmp(t.file, CONFIG_PATH) == 0 ||
			    (strlen(t.file) < n && ends_with(s, t.file) &&
			     s[n - strlen(t.file) - 1] == ':'),
		    "file '%s' is neither the default nor the input's tail", t.file);
	check_format(&t);
	check_match(&t);
	free(s);
	return 0;
}
