// SPDX-License-Identifier: MIT
/*
 * kmod's index format, written (see modindex.h): a header (magic, version, the root's
 * offset), then the nodes, children before their parent. A node's offset carries flags for
 * what it has: a prefix (the bytes its keys share past the edge that leads to it), a range
 * of children by their next byte, values. As libkmod's own reader documents the format.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "modindex.h"

#define INDEX_MAGIC 0xB007F457u
#define INDEX_VERSION 0x00020001u
#define NODE_PREFIX 0x80000000u
#define NODE_VALUES 0x40000000u
#define NODE_CHILDS 0x20000000u

struct out {
	char *b;
	size_t len, cap;
	int err;
};

static void put(struct out *o, const void *d, size_t n)
{
	if (o->err)
		return;
	if (o->len + n > o->cap) {
		size_t cap = o->cap ? o->cap * 2 : 4096;
		char *b;

		while (cap < o->len + n)
			cap *= 2;
		b = realloc(o->b, cap);
		if (!b) {
			o->err = -ENOMEM;
			return;
		}
		o->b = b;
		o->cap = cap;
	}
	memcpy(o->b + o->len, d, n);
	o->len += n;
}

static void put32(struct out *o, uint32_t v)
{
	v = htonl(v);
	put(o, &v, 4);
}

/* The node of keys [lo, hi), which share their first d bytes: its offset and flags. */
static uint32_t node(struct out *o, const struct modindex_entry *e, size_t lo, size_t hi, size_t d)
{
	uint32_t kids[128] = { 0 }, off, flags = 0;
	size_t p = 0, i, n;
	int first = -1, last = -1, c;
	bool value;

	/* The bytes all share past d, up to where one ends (sorted: the first is the shortest). */
	while (e[lo].key[d + p] && e[hi - 1].key[d + p] == e[lo].key[d + p])
		p++;
	value = e[lo].key[d + p] == '\0';
	for (i = value ? lo + 1 : lo; i < hi; i = n) {
		c = (unsigned char)e[i].key[d + p];
		for (n = i + 1; n < hi && (unsigned char)e[n].key[d + p] == c; n++)
			;
		if (c >= 128) {
			o->err = -EINVAL;
			return 0;
		}
		kids[c] = node(o, e, i, n, d + p + 1);
		if (first < 0)
			first = c;
		last = c;
	}
	off = (uint32_t)o->len;
	if (p) {
		put(o, e[lo].key + d, p);
		put(o, "", 1);
		flags |= NODE_PREFIX;
	}
	if (first >= 0) {
		char fl[2] = { (char)first, (char)last };

		put(o, fl, 2);
		for (c = first; c <= last; c++)
			put32(o, kids[c]);
		flags |= NODE_CHILDS;
	}
	if (value) {
		put32(o, 1);
		put32(o, 0); /* priority */
		put(o, e[lo].value, strlen(e[lo].value) + 1);
		flags |= NODE_VALUES;
	}
	return off | flags;
}

int modindex_build(const struct modindex_entry *e, size_t n, char **out, size_t *len)
{
	struct out o = { 0 };
	uint32_t root;
	size_t i;

	for (i = 1; i < n; i++)
		if (strcmp(e[i - 1].key, e[i].key) >= 0)
			return -EINVAL;
	put32(&o, INDEX_MAGIC);
	put32(&o, INDEX_VERSION);
	put32(&o, 0); /* the root's offset, once it is written */
	if (n) {
		root = node(&o, e, 0, n, 0);
	} else {
		root = (uint32_t)o.len | NODE_VALUES; /* an empty root: no value */
		put32(&o, 0);
	}
	if (!o.err && o.len > 0x0fffffff)
		o.err = -E2BIG;
	if (o.err) {
		free(o.b);
		return o.err;
	}
	root = htonl(root);
	memcpy(o.b + 8, &root, 4);
	*out = o.b;
	*len = o.len;
	return 0;
}
