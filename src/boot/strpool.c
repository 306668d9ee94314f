// SPDX-License-Identifier: MIT
/* Interned strings: a small chained hash table of individually allocated entries. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "strpool.h"

struct strpool_ent {
	struct strpool_ent *next;
	char s[];
};

static unsigned hash(const char *s)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h % STRPOOL_BUCKETS;
}

const char *strpool_add(struct strpool *p, const char *s)
{
	struct strpool_ent **b, *e;
	size_t len;

	if (!s[0])
		return "";
	b = &p->bucket[hash(s)];
	for (e = *b; e; e = e->next)
		if (strcmp(e->s, s) == 0)
			return e->s;
	len = strlen(s);
	e = malloc(sizeof(*e) + len + 1);
	if (!e)
		return NULL;
	memcpy(e->s, s, len + 1);
	e->next = *b;
	*b = e;
	return e->s;
}

void strpool_free(struct strpool *p)
{
	size_t i;

	for (i = 0; i < STRPOOL_BUCKETS; i++) {
		struct strpool_ent *e = p->bucket[i];

		while (e) {
			struct strpool_ent *next = e->next;

			free(e);
			e = next;
		}
		p->bucket[i] = NULL;
	}
}
