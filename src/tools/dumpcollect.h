/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_DUMPCOLLECT_H
#define GPUVM_DUMPCOLLECT_H

#include <stddef.h>

#include "tarw.h"

/* The bounds: the archive, its members, one file read, the time (gpuvm(8) says them). */
#define DUMP_BYTES_MAX ((size_t)64 * 1024 * 1024)
#define DUMP_ENTRIES_MAX ((size_t)262144)
#define DUMP_FILE_MAX ((size_t)16 * 1024 * 1024)
#define DUMP_ATTR_MAX ((size_t)64 * 1024)
#define DUMP_SECONDS 60

/* Where the dump reads from: the options of gpuvm dump that say it (NULL: the host's). */
struct dump_from {
	const char *root;    /* --root, or NULL */
	const char *cmdline; /* --cmdline, or NULL: /proc/cmdline and /etc/cmdline.d */
	const char *config;  /* --config, or NULL: the root's */
};

/*
 * What gpuvm reads to decide, as a --root tree, into t (a whole archive, to tarw_free):
 * 0, or -errno: what the preparation said (it has logged it), or what stopped the dump (a
 * bound: -ENOSPC, -E2BIG, -EFBIG, -ETIME; -ENOMEM) with the path it stopped at in what
 * ("" when the preparation failed). Writes nothing; the caller has denied writes first.
 */
int dump_collect(const struct dump_from *from, struct tarw *t, char *what, size_t size);

#endif
