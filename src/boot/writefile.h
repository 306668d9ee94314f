/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_WRITEFILE_H
#define GPUVM_WRITEFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * The files gpuvm writes (/etc/gpuvm/gpuvm.conf, /run/gpuvm/state.json, /run/gpuvm/pending)
 * sit in directories that others may write (the label mirror's pod writes /etc/gpuvm). No
 * symlink is followed and no file that is not ours is opened for writing: the directories
 * are walked one component at a time with O_NOFOLLOW, temporaries are created with O_EXCL,
 * and the file is replaced by a rename, which never follows what it replaces.
 *
 * Each function returns -errno, and on a refusal points *why at a static reason.
 */

/*
 * Open dir (relative to dirfd, or absolute) one component at a time, never following a
 * symlink; missing components are made when create is set, 0755 whatever the umask. A
 * descriptor, or -ELOOP (a symlink on the way), -ENOTDIR (a component not a directory),
 * other -errno.
 */
int wf_open_dir(int dirfd, const char *dir, bool create, const char **why);

/*
 * Open name in dfd to read what it holds before it is replaced: -ENOENT when absent,
 * -ELOOP (a symlink), -EINVAL (not a regular file), -EMLINK (more than one hard link).
 */
int wf_open_old(int dfd, const char *name, const char **why);

/*
 * Create the temporary ".NAME.PID.tmp" in dfd with O_CREAT | O_EXCL | O_NOFOLLOW and the
 * given mode (umask not applied). A stale one of that name is unlinked, never opened.
 * The descriptor, its name in tmp.
 */
int wf_create_tmp(int dfd, const char *name, mode_t mode, char *tmp, size_t size, const char **why);

/* err (-errno from the functions above, or from what uses them) in words for a message. */
const char *wf_strerror(int err);

#endif
