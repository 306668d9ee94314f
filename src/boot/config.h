/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_CONFIG_H
#define GPUVM_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#define CONFIG_PATH "/etc/gpuvm/gpuvm.conf"
#define CONFIG_MAX_SIZE ((size_t)64 * 1024)
#define CONFIG_LINE_MAX 4096 /* room for a whole list (settings.h, SETTINGS_VALUE_MAX) */

/* The node label's key: a line "LABEL_KEY=VALUE" is read as "mode=VALUE". */
#define LABEL_KEY "nvidia.com/gpu.workload.config"

/* One line of the host config: either key and value, or an error about the line. */
struct config_item {
	unsigned line;
	const char *key; /* NULL on error */
	const char *value;
	const char *error; /* why the line was not taken, else NULL */
};

typedef void (*config_cb)(const struct config_item *item, void *data);

/*
 * Parse KEY=VALUE lines: '#' comments and blank lines are skipped, whitespace around key
 * and value is dropped, one pair of matching quotes around the value is removed.
 * Malformed lines (no '=', bad key, NUL byte, overlong) are reported and skipped.
 */
int config_parse(const char *buf, size_t len, config_cb cb, void *data);

/*
 * Read a file of the caller's (--config FILE, --pciids FILE: a path as given, links
 * followed; never one beneath the root, which rootio.h's root_read_file() reads) into a
 * NUL-terminated buffer the caller frees. -EISDIR, -EFBIG (over CONFIG_MAX_SIZE),
 * -ENOENT, -EACCES and the like are returned as they are; only a regular file is read.
 */
int config_read(const char *path, char **buf, size_t *len);
/* The same with another size limit (pci.ids is larger than any config). */
int config_read_max(const char *path, size_t max, char **buf, size_t *len);
/*
 * Why a read above or root_read_file()'s failed, in words for a message after the file's name ("a symlink on
 * the way: not followed", "larger than MAX bytes", "cannot read: ..."); max: the limit.
 */
void config_read_why(int err, size_t max, char *buf, size_t size);

/* How long config set waits for another writer's lock before it gives up. */
#define CONFIG_LOCK_WAIT_S 5
/*
 * The lock: a file of the config's directory, created 0600 and kept. Not the directory
 * itself, which anyone may open (and flock) where anyone may read it.
 */
#define CONFIG_LOCK_NAME ".gpuvm.lock"

/*
 * Set KEY=VALUE in the config at path (relative to dirfd): the last line whose key
 * same_key() matches is rewritten in place, keeping its spelling (the label key stays
 * the label key); otherwise the line is appended. Comments, order and other keys stay.
 * Atomic and serialised: under an exclusive flock of CONFIG_LOCK_NAME in the directory
 * (opened with O_NOFOLLOW, a regular file with one link or refused: -ELOOP, -EINVAL,
 * -EMLINK; waited for CONFIG_LOCK_WAIT_S at most: -ETIMEDOUT), a temporary file in it is
 * written, fsynced and renamed, then the directory is fsynced. The directory (0755) and the
 * file (0644) are created when absent; an existing file keeps its permission bits. Nothing
 * is followed or copied that is not the config itself (src/writefile.h): a symlink on the
 * way or at the file, a file that is not regular or has another hard link is refused
 * (-ELOOP, -ENOTDIR, -EINVAL, -EMLINK) with *why saying which. *changed tells whether the
 * file's text changed.
 */
int config_update(int dirfd, const char *path, const char *key, const char *value,
		  bool (*same_key)(const char *a, const char *b), bool *changed, const char **why);

#endif
