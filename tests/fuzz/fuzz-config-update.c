// SPDX-License-Identifier: MIT
/*
 * config_update (gpuvm config set): the input is FLAG KEY \0 VALUE \0 OLD-FILE; a pair
 * that settings_check refuses is not written, as gpuvm config set does. The file lives in
 * a private temporary directory, on /dev/shm unless FUZZ_TMPDIR names another (FLAG's low
 * bit: no file before).
 *
 * Invariants: the update succeeds; read back, the file gives the key the value set
 * (its source is the file) and every other key exactly its old value and source; at
 * most one line changed, or one line was added at the end, and that line is KEY=VALUE
 * under a spelling of the key; "changed" says whether the text changed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

#include "config.h"
#include "fuzz.h"
#include "settings.h"
#include "util.h"

#define NAME "gpuvm.conf"

static int dirfd_;
static char dir_[64];

static void cleanup(void)
{
	unlinkat(dirfd_, NAME, 0);
	unlinkat(dirfd_, CONFIG_LOCK_NAME, 0);
	rmdir(dir_);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("FUZZ_TMPDIR");

	(void)argc;
	(void)argv;
	fuzz_log_quiet();
	/* Every update fsyncs the file and its directory: tmpfs makes that cheap. */
	if (!tmp || strlen(tmp) >= 40)
		tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	snprintf(dir_, sizeof(dir_), "%s/gpuvm-fuzz.XXXXXX", tmp);
	if (!mkdtemp(dir_))
		abort();
	dirfd_ = open(dir_, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd_ < 0)
		abort();
	atexit(cleanup);
	return 0;
}

static void load(struct settings *s, const char *text, size_t len)
{
	struct settings_input in = { .config = text, .config_len = len, .config_path = NAME };

	settings_load(s, &in, NULL);
	log_close();
}

struct lines {
	const char *p[CONFIG_MAX_SIZE / 8];
	size_t len[CONFIG_MAX_SIZE / 8], n;
};

static void split(const char *t, size_t len, struct lines *l)
{
	size_t i = 0;

	l->n = 0;
	while (i < len && l->n < ARRAY_SIZE(l->p)) {
		const char *nl = memchr(t + i, '\n', len - i);
		size_t n = nl ? (size_t)(nl - t - i) : len - i;

		l->p[l->n] = t + i;
		l->len[l->n++] = n;
		i += n + (nl ? 1 : 0);
	}
}

/* Is line KEY=VALUE, with KEY a spelling of key? */
static bool is_setting(const char *line, size_t n, const char *key, const char *value)
{
	const char *eq = memchr(line, '=', n);
	char k[CONFIG_LINE_MAX];

	if (!eq || (size_t)(eq - line) >= sizeof(k))
		return false;
	memcpy(k, line, (size_t)(eq - line));
	k[eq - line] = '\0';
	return settings_same_key(k, key) && n - (size_t)(eq - line) - 1 == strlen(value) &&
		memcmp(eq + 1, value, strlen(value)) == 0;
}

static bool same_line(const struct lines *a, size_t i, const struct lines *b, size_t j)
{
	return a->len[i] == b->len[j] && memcmp(a->p[i], b->p[j], a->len[i]) == 0;
}

static void check_lines(const char *old, size_t oldlen, const char *neu, size_t newlen,
			const char *key, const char *value)
{
	static struct lines a, b;
	size_t i, diff = 0;

	split(old, oldlen, &a);
	split(neu, newlen, &b);
	if (b.n == a.n + 1) {
		for (i = 0; i < a.n; i++)
			fuzz_assert(same_line(&a, i, &b, i), "line %zu changed by an append", i + 1);
		fuzz_assert(is_setting(b.p[a.n], b.len[a.n], key, value),
			    "the line added is '%.*s'", (int)b.len[a.n], b.p[a.n]);
		return;
	}
	fuzz_assert(b.n == a.n, "%zu lines became %zu", a.n, b.n);
	for (i = 0; i < a.n; i++) {
		if (same_line(&a, i, &b, i))
			continue;
		diff++;
		fuzz_assert(is_setting(b.p[i], b.len[i], key, value), "line %zu became '%.*s'",
			    i + 1, (int)b.len[i], b.p[i]);
	}
	fuzz_assert(diff <= 1, "%zu lines changed", diff);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *in = (const char *)data + 1, *z1, *z2, *expect, *why;
	struct settings before, after, want;
	char *key, *value, *old, *neu = NULL, a[1024], b[1024];
	size_t n, oldlen, newlen;
	bool changed, fresh;
	int k, i, r, fd;

	if (size < 1 || size > CONFIG_MAX_SIZE / 2)
		return 0;
	fresh = data[0] & 1;
	n = size - 1;
	z1 = memchr(in, '\0', n);
	z2 = z1 ? memchr(z1 + 1, '\0', n - (size_t)(z1 + 1 - in)) : NULL;
	if (!z2)
		return 0;
	key = strndup(in, (size_t)(z1 - in));
	value = strndup(z1 + 1, (size_t)(z2 - z1 - 1));
	if (!key || !value)
		abort();
	k = settings_check(key, value, &expect);
	if (k < 0)
		goto out_kv; /* gpuvm config set refuses it before any write */
	oldlen = fresh ? 0 : n - (size_t)(z2 + 1 - in);
	old = fuzz_cstr((const uint8_t *)z2 + 1, oldlen); /* NUL-terminated, as read */

	unlinkat(dirfd_, NAME, 0);
	if (!fresh) {
		fd = openat(dirfd_, NAME, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0 || write(fd, old, oldlen) != (ssize_t)oldlen || close(fd) < 0)
			abort();
	}
	load(&before, old, oldlen);

	r = config_update(dirfd_, NAME, key, value, settings_same_key, &changed, &why);
	fuzz_assert(r == 0, "config_update returned %d (%s)", r, why ? why : "");
	{
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/%s", dir_, NAME);
		r = config_read(path, &neu, &newlen);
	}
	fuzz_assert(r == 0, "the file written cannot be read: %d", r);
	fuzz_assert(changed == (fresh || newlen != oldlen || memcmp(old, neu, newlen) != 0),
		    "changed is %d", changed);
	check_lines(old, oldlen, neu, newlen, key, value);

	/* What the pair gives on its own, and what the new file gives. */
	snprintf(a, sizeof(a), "%s=%s\n", key, value);
	load(&want, a, strlen(a));
	load(&after, neu, newlen);
	fuzz_assert(after.from[k] != FROM_DEFAULT, "%s=%s not taken from the file", key, value);
	for (i = 0; i < KEY__MAX; i++) {
		const struct settings *ref = i == k ? &want : &before;

		settings_value(&after, (enum setting_key)i, a, sizeof(a));
		settings_value(ref, (enum setting_key)i, b, sizeof(b));
		fuzz_assert(streq(a, b), "%s is '%s' after setting %s=%s, expected '%s'",
			    key_name((enum setting_key)i), a, key, value, b);
		if (i != k)
			fuzz_assert(after.from[i] == before.from[i] &&
					    streq(settings_source(&after, (enum setting_key)i),
						  settings_source(&before, (enum setting_key)i)),
				    "%s moved from %s to %s", key_name((enum setting_key)i),
				    settings_source(&before, (enum setting_key)i),
				    settings_source(&after, (enum setting_key)i));
	}
	free(old);
	free(neu);
out_kv:
	free(key);
	free(value);
	return 0;
}
