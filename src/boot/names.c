// SPDX-License-Identifier: MIT
/*
 * A list of a directory's names: names.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"

/* Room for one more name; -ENOMEM. */
static int grow(struct names *l)
{
	size_t cap = l->cap ? 2 * l->cap : 16;
	char **v = realloc(l->v, cap * sizeof(*v));

	if (!v)
		return -ENOMEM;
	l->v = v;
	l->cap = cap;
	return 0;
}

/*
 * gcc 12's -fanalyzer loses a pointer stored into an array member at a computed index and
 * reports it leaked (names_free frees every l->v[i]); the same as settings.c's raw_set.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wanalyzer-malloc-leak"
#endif
int names_take(struct names *l, char *s)
{
	if (!s || (l->n == l->cap && grow(l) < 0)) {
		free(s);
		l->err = -ENOMEM;
		return 1;
	}
	l->v[l->n++] = s;
	return 0;
}

int names_add(const char *name, void *data)
{
	struct names *l = data;
	size_t len = strlen(name), sl = l->suffix ? strlen(l->suffix) : 0;

	if (l->suffix && (len <= sl || strcmp(name + len - sl, l->suffix) != 0))
		return 0;
	if (l->want && !l->want(name))
		return 0;
	return names_take(l, strdup(name));
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void names_sort(struct names *l)
{
	if (l->n > 1)
		qsort(l->v, l->n, sizeof(*l->v), name_cmp);
}

void names_free(struct names *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = l->cap = 0;
}
