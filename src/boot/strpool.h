/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_STRPOOL_H
#define GPUVM_STRPOOL_H

/*
 * Interned strings: each distinct string is kept once and lives until strpool_free().
 * Driver names repeat across thousands of PCI functions but there are few of them, so an
 * inventory keeps a pointer a function rather than a copy.
 */

#define STRPOOL_BUCKETS 64

struct strpool_ent;

struct strpool {
	struct strpool_ent *bucket[STRPOOL_BUCKETS];
};

/*
 * The pool's copy of s, added if new; "" is a literal and never allocated. NULL when out
 * of memory. A zero-initialised pool is empty.
 */
const char *strpool_add(struct strpool *p, const char *s);
void strpool_free(struct strpool *p);

#endif
