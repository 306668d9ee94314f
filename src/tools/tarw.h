/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_TARW_H
#define GPUVM_TARW_H

#include <stdbool.h>
#include <stddef.h>

/*
 * A tar archive built in memory (POSIX ustar, with a pax header for a name or a link target
 * longer than its field), bounded: gpuvm dump's one file. Every member is named by a
 * relative path of plain components (no "", ".", "..", no leading '/'), each goes in once,
 * and the directories above it go in before it; mode 0644 (0755 for a directory, 0777 for
 * a link), owner root, time 0, so that the same tree makes the same archive. No member is
 * written through a link member: a path is rejected (-ENOTDIR) when one of the
 * directories above it went in as a link. A link's target is the caller's to check.
 */
struct tarw {
	char *buf;
	size_t len, cap, max;
	size_t entries, max_entries;
	/* the paths in, by hash (open addressing); kind: 'f' file, 'd' directory, 'l' link */
	char **path;
	char *kind;
	size_t slots;
};

/* -ENOMEM. max: the archive's bytes at most; max_entries: its members at most. */
int tarw_init(struct tarw *t, size_t max, size_t max_entries);
void tarw_free(struct tarw *t);

/*
 * 0 when added, or already there as the same kind (a second file of one path keeps the
 * first's contents); -EEXIST when there as another kind; -EINVAL for a path that is not
 * one; -EFBIG past max bytes, -E2BIG past max entries (nothing more can be added then);
 * -ENOMEM.
 */
int tarw_file(struct tarw *t, const char *path, const void *data, size_t len);
int tarw_dir(struct tarw *t, const char *path);
int tarw_link(struct tarw *t, const char *path, const char *target);
/* What path went in as ('f', 'd', 'l'), or 0. */
char tarw_kind(const struct tarw *t, const char *path);
/* The end of the archive: two zero blocks. -EFBIG. */
int tarw_finish(struct tarw *t);

#endif
