/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_ROOTIO_H
#define GPUVM_ROOTIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>
#include <unistd.h>

#include "config.h"

/*
 * The seam between gpuvm and the kernel: every read and write beneath the root directory
 * (/ or --root DIR: /sys, /proc, /run, /etc, /usr, /boot) goes through here, relative to it
 * (scripts/door.sh refuses a file opened elsewhere). Paths are given
 * without a leading '/'. The unit tests link a fake kernel in place of this file. One reader
 * goes around it: libkmod, given the module directory as a path (kmod.c).
 */

int root_init(const char *root); /* NULL: "/" */
void root_fini(void);

/*
 * One read() of an attribute into buf, NUL-terminated: sysfs hands out a whole
 * attribute in one read. Returns the length or -errno.
 */
ssize_t root_read(const char *path, char *buf, size_t size);
/*
 * Whole files beneath the root: the one door for every reader of one (the host config,
 * the pending records, the state file, boot.json, pci.ids, the boot loader's files, the
 * kernel command line's). The path is resolved beneath the root with no symlink followed
 * on the way or at the file (-ELOOP) and nothing above it ('..': -EXDEV); a regular file
 * (a directory: -EISDIR, else -EINVAL), never a FIFO waited on. Flags:
 */
#define ROOT_FILE_OWN 1u /* gpuvm's own, or the host config: one link only (-EMLINK) */
#define ROOT_FILE_LINKS                                                                            \
	2u /* a host's file that distributions link (pci.ids, a grubenv):
			    * symlinks followed, resolved as if the root were / (where the
			    * kernel has no openat2, none) */
/* The descriptor, for a reader that reads it its own way (to its end, a header); -errno. */
int root_open_file(const char *path, unsigned flags);
/* The whole file, at most max bytes (-EFBIG), NUL-terminated in a buffer to free; -errno. */
int root_read_file(const char *path, size_t max, unsigned flags, char **buf, size_t *len);
/*
 * The same beneath another top directory, a path of the caller's (links followed there):
 * the real root mounted at boot (--sysroot). NULL: the root.
 */
int root_open_file_at(const char *top, const char *path, unsigned flags);
int root_read_file_at(const char *top, const char *path, size_t max, unsigned flags, char **buf,
		      size_t *len);
/* 0 when top (NULL: the root) is a directory and so is its dir (not a link; NULL: none). */
int root_dir_at(const char *top, const char *dir);
/* Whether dir (a path of the caller's) is the root itself. */
bool root_is(const char *dir);
/*
 * The host config: --config's file (a path of the caller's, read as any file) or, when
 * file is NULL, the root's CONFIG_PATH, read as gpuvm's own (ROOT_FILE_OWN).
 */
static inline int root_read_config(const char *file, char **buf, size_t *len)
{
	if (file)
		return config_read(file, buf, len);
	return root_read_file(&CONFIG_PATH[1], CONFIG_MAX_SIZE, ROOT_FILE_OWN, buf, len);
}
/*
 * A file of gpuvm's own (the state file, a pending record) read whole into buf, through
 * the same door with ROOT_FILE_OWN (a directory: -EINVAL); -EFBIG past size - 1.
 */
ssize_t root_read_own(const char *path, char *buf, size_t size);
/*
 * The same read for many files (a uevent a PCI function): the descriptors are kept, up to
 * ROOT_BATCH_MAX, and closed with one close_range(2) a run of consecutive ones rather
 * than one close(2) a file. root_batch_close() closes what is held.
 */
#define ROOT_BATCH_MAX 64
struct root_batch {
	int fd[ROOT_BATCH_MAX];
	unsigned n;
};
#define ROOT_BATCH_INIT                                                                            \
	{                                                                                          \
		.n = 0                                                                             \
	}
ssize_t root_read_batched(struct root_batch *b, const char *path, char *buf, size_t size);
void root_batch_close(struct root_batch *b);
/*
 * A file through buf (of size bytes), a read at a time: cb(buf, len, eof, data) gets what
 * is there and returns how many bytes of it it used (whole records), or -errno to stop;
 * the rest starts the next call. eof: the file ended, all of it is there. -errno when the
 * file cannot be read, -EFBIG for a record longer than buf.
 */
int root_read_chunks(const char *path, char *buf, size_t size,
		     ssize_t (*cb)(const char *chunk, size_t len, bool eof, void *data), void *data);
/*
 * A file of the root opened read-only for a reader that needs the descriptor itself (a
 * block device probed, a file read to its end past a bound): O_CLOEXEC, O_NOCTTY and
 * O_NONBLOCK (a FIFO is never waited on). A leading '/' is the root's. -errno.
 */
int root_open(const char *path);
/* 0 when root_open() opens path (links followed: the module directory may be one), or -errno. */
static inline int root_opens(const char *path)
{
	int fd = root_open(path);

	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}
/* The last component of a symlink's target ("vfio-pci" for a driver link). */
int root_link_name(const char *path, char *buf, size_t size);
/* A symlink's whole target, as readlink(2) gives it; -ENAMETOOLONG past size. */
int root_link_target(const char *path, char *buf, size_t size);
/* Call cb for each entry of a directory but "." and ".."; cb's non-zero return stops. */
int root_list(const char *dir, int (*cb)(const char *name, void *data), void *data);
bool root_exists(const char *path);
/*
 * The link count of directory path: 2 and one a subdirectory where the file system counts
 * them so (sysfs, tmpfs, ext4; btrfs says 1). -errno.
 */
int root_dir_links(const char *path, unsigned long *links);
/*
 * The device number of the character device path leads to (links followed: a
 * /proc/PID/fd/N is the open file itself). -ENODEV when it is something else.
 */
int root_stat_rdev(const char *path, unsigned *maj, unsigned *min);
/*
 * Write value to an attribute, bounded in time. The writes are made by one long-lived
 * writer process: a write still blocked after timeout_ms (some drivers hang in unbind)
 * returns -ETIMEDOUT and is left behind in that writer, and the next write starts a new
 * one. The writer holds none of the caller's files and exits when gpuvm does; root_fini()
 * reaps it.
 */
int root_write(const char *path, const char *value, unsigned timeout_ms);

/* One write of a sequence: the attribute (under the root) and the value written to it. */
struct root_wr {
	const char *path;
	const char *value;
};
/*
 * The writes in order, each bounded by timeout_ms as root_write()'s, stopping at the first
 * that fails: 0 when all were done, else its -errno with its index in *failed (none after
 * it was done; -ETIMEDOUT: it is still blocked). The writer is asked once for as many as fit
 * in one request (some 1 KiB), rather than once a write.
 */
int root_write_seq(const struct root_wr *w, size_t n, unsigned timeout_ms, size_t *failed);

/*
 * The recorder: while fn is set, every path a reader above is asked for (served or not)
 * is given to it with what was asked, before the read: a file read, a link read, a
 * directory listed (or its links counted), a name looked up. dump sets it for its own
 * preparation, the same reads as plan's and status's, to learn what to copy; NULL turns
 * it off. Off, it costs a reader one test of a pointer. Paths as the reader gave them.
 */
enum root_rec {
	ROOT_REC_FILE,
	ROOT_REC_LINK,
	ROOT_REC_DIR,
	ROOT_REC_NAME
};
void root_record(void (*fn)(enum root_rec kind, const char *path, void *data), void *data);

/*
 * From now on every write above (root_write, root_write_file*) fails with -EROFS, for
 * the rest of the process: the read-only commands (dump, plan --in-use) set it first, so
 * that no code they reach can change the host.
 */
void root_deny_writes(void);

/*
 * A directory beneath the root for a writer of its own files (config set: writefile.h),
 * walked and made as wf_open_dir() does; -EROFS after root_deny_writes().
 */
int root_open_dir(const char *dir, bool create, const char **why);
/* Remove dir/name, no symlink followed on the way; 0 when it or dir is not there. */
int root_remove_file(const char *dir, const char *name);

/*
 * Replace dir/name, a file of the running boot's under run/, with data atomically: a
 * temporary file in dir (created with its parents, mode 0755), then a rename. No fsync:
 * /run is a tmpfs, whose files do not outlive the boot; any other dir is -EINVAL. The file
 * is mode 0644. No symlink on the way is followed (-ELOOP) and the temporary is created
 * with O_EXCL: see writefile.h.
 */
int root_write_file(const char *dir, const char *name, const char *data, size_t len);

/*
 * The same, with the contents written by fill() into a stream on the temporary file
 * (64 KiB buffered): a large file, such as the state of 10,000 functions, is never held
 * in memory whole. A write error of the stream fails it, and the file stays as it was.
 */
int root_write_file_with(const char *dir, const char *name, void (*fill)(FILE *f, void *data),
			 void *data);

#endif
