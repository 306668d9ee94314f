// SPDX-License-Identifier: MIT
/* A bounded tar archive in memory: see tarw.h. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tarw.h"

#define BLOCK 512

int tarw_init(struct tarw *t, size_t max, size_t max_entries)
{
	memset(t, 0, sizeof(*t));
	t->max = max;
	t->max_entries = max_entries;
	t->slots = 1024;
	t->path = calloc(t->slots, sizeof(*t->path));
	t->kind = calloc(t->slots, 1);
	if (!t->path || !t->kind) {
		tarw_free(t);
		return -ENOMEM;
	}
	return 0;
}

void tarw_free(struct tarw *t)
{
	size_t i;

	for (i = 0; t->path && i < t->slots; i++)
		free(t->path[i]);
	free(t->path);
	free(t->kind);
	free(t->buf);
	memset(t, 0, sizeof(*t));
}

static size_t hash(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ULL;

	while (n--)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return (size_t)h;
}

/* The slot of the n bytes at path: where it is, or the empty one where it would go. */
static size_t slot(const struct tarw *t, const char *path, size_t n)
{
	size_t i = hash(path, n) & (t->slots - 1);

	while (t->path[i] && (strncmp(t->path[i], path, n) != 0 || t->path[i][n]))
		i = (i + 1) & (t->slots - 1);
	return i;
}

static char kind_of(const struct tarw *t, const char *path, size_t n)
{
	size_t i = slot(t, path, n);

	return t->path[i] ? t->kind[i] : 0;
}

char tarw_kind(const struct tarw *t, const char *path)
{
	return kind_of(t, path, strlen(path));
}

static int remember(struct tarw *t, const char *path, size_t n, char kind)
{
	size_t i;

	if (2 * (t->entries + 1) > t->slots) {
		struct tarw old = *t;

		t->slots *= 2;
		t->path = calloc(t->slots, sizeof(*t->path));
		t->kind = calloc(t->slots, 1);
		if (!t->path || !t->kind) {
			free(t->path);
			free(t->kind);
			t->path = old.path;
			t->kind = old.kind;
			t->slots = old.slots;
			return -ENOMEM;
		}
		for (i = 0; i < old.slots; i++) {
			size_t j;

			if (!old.path[i])
				continue;
			j = slot(t, old.path[i], strlen(old.path[i]));
			t->path[j] = old.path[i];
			t->kind[j] = old.kind[i];
		}
		free(old.path);
		free(old.kind);
	}
	i = slot(t, path, n);
	t->path[i] = strndup(path, n);
	if (!t->path[i])
		return -ENOMEM;
	t->kind[i] = kind;
	t->entries++;
	return 0;
}

/* Room for n more bytes, zeroed: where they start, or NULL with *err set. */
static char *room(struct tarw *t, size_t n, int *err)
{
	char *p;

	if (t->len + n > t->max) {
		*err = -EFBIG;
		return NULL;
	}
	if (t->len + n > t->cap) {
		size_t cap = t->cap ? t->cap : (size_t)64 * 1024;

		while (cap < t->len + n)
			cap *= 2;
		if (cap > t->max)
			cap = t->max;
		p = realloc(t->buf, cap);
		if (!p) {
			*err = -ENOMEM;
			return NULL;
		}
		t->buf = p;
		t->cap = cap;
	}
	p = t->buf + t->len;
	memset(p, 0, n);
	t->len += n;
	return p;
}

static void octal(char *field, size_t width, unsigned long long v)
{
	snprintf(field, width, "%0*llo", (int)width - 1, v);
}

static unsigned mode_of(char type)
{
	if (type == '5')
		return 0755;
	return type == '2' ? 0777 : 0644;
}

/* ustar's type flag of a kind: '0' file, '5' directory, '2' link. */
static char type_of(char kind)
{
	if (kind == 'd')
		return '5';
	return kind == 'l' ? '2' : '0';
}

/* One header block; name and link cut to their fields (a pax header before says them whole). */
static int header(struct tarw *t, const char *name, char type, size_t size, const char *link)
{
	unsigned mode = mode_of(type);
	unsigned sum = 0;
	char *h;
	int err = 0, i;

	h = room(t, BLOCK, &err);
	if (!h)
		return err;
	strncpy(h, name, 100);
	octal(h + 100, 8, mode);
	octal(h + 108, 8, 0);
	octal(h + 116, 8, 0);
	octal(h + 124, 12, size);
	octal(h + 136, 12, 0);
	h[156] = type;
	if (link)
		strncpy(h + 157, link, 100);
	memcpy(h + 257, "ustar", 6); /* magic, its NUL included */
	h[263] = '0';		     /* version "00", no NUL */
	h[264] = '0';
	memcpy(h + 265, "root", 5); /* owner and group names */
	memcpy(h + 297, "root", 5);
	memset(h + 148, ' ', 8);
	for (i = 0; i < BLOCK; i++)
		sum += (unsigned char)h[i];
	snprintf(h + 148, 8, "%06o", sum);
	return 0;
}

static int data(struct tarw *t, const void *d, size_t n)
{
	int err = 0;
	char *p = room(t, (n + BLOCK - 1) / BLOCK * BLOCK, &err);

	if (!p)
		return err;
	if (n)
		memcpy(p, d, n);
	return 0;
}

/* "LEN key=value\n", LEN counting the whole record, its own digits too. */
static size_t record(char *out, size_t size, const char *key, const char *value)
{
	size_t body = 1 + strlen(key) + 1 + strlen(value) + 1, len = body + 1;

	while (snprintf(NULL, 0, "%zu", len) + body != len)
		len++;
	return (size_t)snprintf(out, size, "%zu %s=%s\n", len, key, value);
}

/* One member, whole or not at all (a bound reached halfway takes back what it wrote). */
static int member(struct tarw *t, const char *name, char type, const void *d, size_t size,
		  const char *link)
{
	char pax[2 * 4200];
	size_t n = 0, start = t->len;
	int r;

	if (strlen(name) > 100)
		n += record(pax + n, sizeof(pax) - n, "path", name);
	if (link && strlen(link) > 100)
		n += record(pax + n, sizeof(pax) - n, "linkpath", link);
	if (n) {
		r = header(t, "././@PaxHeader", 'x', n, NULL);
		if (r == 0)
			r = data(t, pax, n);
		if (r < 0) {
			t->len = start;
			return r;
		}
	}
	r = header(t, name, type, size, link);
	if (r == 0 && type == '0')
		r = data(t, d, size);
	if (r < 0)
		t->len = start;
	return r;
}

/* A path tarw takes: plain components, 4,000 bytes at most. */
static bool valid(const char *path)
{
	const char *p = path;

	if (!*p || strlen(p) > 4000)
		return false;
	for (;;) {
		const char *e = strchrnul(p, '/');
		size_t n = (size_t)(e - p);

		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		if (!*e)
			return true;
		p = e + 1;
	}
}

static int add(struct tarw *t, const char *path, char kind, const void *d, size_t size, const char *link)
{
	char name[4096];
	const char *p;
	char k;
	int r;

	if (!valid(path) || (link && strlen(link) > 4000))
		return -EINVAL;
	/* The directories above it, each once, before it. */
	for (p = strchr(path, '/'); p; p = strchr(p + 1, '/')) {
		size_t n = (size_t)(p - path);

		k = kind_of(t, path, n);
		if (k == 'd')
			continue;
		if (k)
			return -ENOTDIR;
		if (t->entries >= t->max_entries)
			return -E2BIG;
		memcpy(name, path, n);
		memcpy(name + n, "/", 2);
		r = member(t, name, '5', NULL, 0, NULL);
		if (r == 0)
			r = remember(t, path, n, 'd');
		if (r < 0)
			return r;
	}
	k = tarw_kind(t, path);
	if (k)
		return k == kind ? 0 : -EEXIST;
	if (t->entries >= t->max_entries)
		return -E2BIG;
	snprintf(name, sizeof(name), "%s%s", path, kind == 'd' ? "/" : "");
	r = member(t, name, type_of(kind), d, size, link);
	if (r == 0)
		r = remember(t, path, strlen(path), kind);
	return r;
}

int tarw_file(struct tarw *t, const char *path, const void *d, size_t len)
{
	return add(t, path, 'f', d, len, NULL);
}

int tarw_dir(struct tarw *t, const char *path)
{
	return add(t, path, 'd', NULL, 0, NULL);
}

int tarw_link(struct tarw *t, const char *path, const char *target)
{
	return add(t, path, 'l', NULL, 0, target);
}

int tarw_finish(struct tarw *t)
{
	int err = 0;

	return room(t, (size_t)2 * BLOCK, &err) ? 0 : err;
}
