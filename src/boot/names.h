/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_NAMES_H
#define GPUVM_NAMES_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The names of a directory's entries, as root_list() hands them over, kept if they end in
 * suffix and want() takes them, then sorted: the one list of names the units keep (the next
 * boot's folders, the dump's listings, the pinned records). A leaf: no logging.
 */
struct names {
	char **v;
	size_t n, cap;
	const char *suffix;		/* kept only when longer and ending in it (NULL: any) */
	bool (*want)(const char *name); /* kept only when it says so (NULL: any) */
	int err;			/* -ENOMEM once a name could not be kept */
};

/* root_list()'s callback: name kept as l's filters say; 1 (stop) when out of memory. */
int names_add(const char *name, void *data);
/* s (allocated; NULL: out of memory) as l's next name, unfiltered; 1 (stop) when it fails. */
int names_take(struct names *l, char *s);
/* The names in byte order. */
void names_sort(struct names *l);
void names_free(struct names *l);

#endif
