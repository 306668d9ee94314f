// SPDX-License-Identifier: MIT
/*
 * A list of a directory's names: names.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"

int names_take(struct names *l, char *s)
{
	char **v;

	if (s && l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;

		v = realloc(l->v, cap * sizeof(*v));
		if (!v) {
			free(s);
			s = NULL;
		} else {
			l->v = v;
			l->cap = cap;
		}
	}
	if (!s) {
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
