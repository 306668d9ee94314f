/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_BLKDEV_H
#define GPUVM_BLKDEV_H

#include <stddef.h>

#include "tagspec.h"

/*
 * The host config on a disk: find the file system that config= names, mount it read-only
 * and read one file. The only user of libblkid. Paths are relative to the root (/ or
 * --root DIR) through the sysfs seam; mounting happens only on the real root.
 */

#define BLKDEV_NAME_MAX 96

struct blkdev_found {
	char dev[BLKDEV_NAME_MAX + 8];	 /* "/dev/vdb1", as in the root */
	char fstype[32];		 /* as libblkid names it: "ext4", "vfat" */
	char other[BLKDEV_NAME_MAX + 8]; /* -ENOTUNIQ: a second device with the tag */
	unsigned skipped_removable;	 /* devices with the tag left out: removable */
	/* -ENOTUNIQ, for the advice (apart and same: sets of 1 << enum tag_type) */
	unsigned matches; /* how many devices carry the tag */
	unsigned apart;	  /* tags every one of them has, no two with one value */
	unsigned same;	  /* tags every one of them has, all with one value */
	unsigned paths;	  /* > 0: dev is a multipath map; its paths with the tag */
};

/*
 * One look for the file system t names: for a tag, every block device in /proc/partitions
 * probed through /dev/NAME (PARTUUID= and PARTLABEL= through the partition tables of the
 * disks); for a path, that device. Devices the kernel marks removable are passed over for
 * tags. A multipath map (dm UUID "mpath-…") that carries the tag, with every other device
 * that does among its slaves, is the one found (f->paths counts them). 0: found, with its
 * file system type. -ENOENT: not there (yet). -ENOTUNIQ: more than one device carries the
 * tag (f->dev and f->other name two; matches, apart and same). -ENOMEDIUM: the device
 * is there but libblkid finds no file system on it. Other -errno: the look failed.
 */
int blkdev_find(const struct tag_spec *t, struct blkdev_found *f);

/*
 * Mount f read-only, nosuid, nodev, noexec on a private directory under /run/gpuvm, read
 * t->file from it with blkdev_read_beneath(), unmount, remove the directory. The buffer
 * is NUL-terminated and the caller frees it. -errno with what failed in msg.
 */
int blkdev_read_config(const struct blkdev_found *f, const struct tag_spec *t, size_t max,
		       char **buf, size_t *len, char *msg, size_t msgsize);

/*
 * Read path (absolute or relative) beneath dirfd: no symlink or ".." that leaves dirfd, no
 * other mount crossed, a regular file of at most max bytes. -ELOOP/-EXDEV for an escape,
 * -EINVAL for what is not a regular file, -EFBIG for more than max bytes.
 */
int blkdev_read_beneath(int dirfd, const char *path, size_t max, char **buf, size_t *len);

#endif
