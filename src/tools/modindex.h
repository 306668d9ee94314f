/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_MODINDEX_H
#define GPUVM_MODINDEX_H

#include <stddef.h>

/*
 * Pure: an index in kmod's format (modules.alias.bin, modules.dep.bin, modules.builtin.bin:
 * the trie depmod writes and libkmod reads, big-endian, version 2.1), of n keys (sorted by
 * strcmp, each once, ASCII), each with one value. gpuvm dump writes the few keys gpuvm asks
 * about, with the answers the host's module directory gave. *out is the caller's to free.
 * -EINVAL for keys out of order or not ASCII, -ENOMEM.
 */
struct modindex_entry {
	const char *key;
	const char *value;
};

int modindex_build(const struct modindex_entry *e, size_t n, char **out, size_t *len);

#endif
