// SPDX-License-Identifier: MIT
/*
 * The host config on a disk. libblkid, and nothing else touches it: probing what a block
 * device carries (file system type, label, UUID, partition table entries). util-linux's
 * findfs resolves a tag through udev's /dev/disk links and the blkid cache; before udev
 * neither exists, so this file probes the devices /proc/partitions lists, itself.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <blkid/blkid.h>
#include <linux/openat2.h>

#include "blkdev.h"
#include "rootio.h"
#include "util.h"

#define PARTITIONS_MAX ((size_t)64 * 1024)
#define MOUNT_DIR "/run/gpuvm"

/* Open a device node of the root for probing: a block device, or a file under --root. */
static int open_dev(const char *path)
{
	struct stat st;
	int fd;

	fd = root_open(path);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0 || !(S_ISBLK(st.st_mode) || S_ISREG(st.st_mode))) {
		close(fd);
		return -ENOTBLK;
	}
	return fd;
}

static bool removable(const char *name)
{
	char path[BLKDEV_NAME_MAX + 40], v[8];

	snprintf(path, sizeof(path), "sys/class/block/%s/removable", name);
	if (root_read(path, v, sizeof(v)) < 0) {
		/* A partition: the disk says. */
		snprintf(path, sizeof(path), "sys/class/block/%s/../removable", name);
		if (root_read(path, v, sizeof(v)) < 0)
			return false;
	}
	return v[0] == '1';
}

/* What one device carries: its file system's type, and each tag's value ("" unknown). */
struct ids {
	char type[32];
	char v[TAG_PATH][256]; /* by enum tag_type: LABEL, UUID, PARTUUID, PARTLABEL */
};

/*
 * Probe fd's file system: its type, label and UUID into id (a value libblkid does not give
 * stays as it was). 0, -ENOMEDIUM when there is none (or two candidates: libblkid will not
 * choose), -errno.
 */
static int probe_fs(int fd, struct ids *id)
{
	static const enum tag_type keys[] = { TAG_LABEL, TAG_UUID };
	blkid_probe pr = blkid_new_probe();
	const char *data;
	size_t i;
	int r;

	if (!pr)
		return -ENOMEM;
	if (blkid_probe_set_device(pr, fd, 0, 0) < 0) {
		blkid_free_probe(pr);
		return -EIO;
	}
	blkid_probe_enable_superblocks(pr, 1);
	blkid_probe_set_superblocks_flags(pr,
					  BLKID_SUBLKS_LABEL | BLKID_SUBLKS_UUID | BLKID_SUBLKS_TYPE);
	blkid_probe_enable_partitions(pr, 0);
	r = blkid_do_safeprobe(pr);
	if (r < 0 && r != -2) {
		blkid_free_probe(pr);
		return -EIO;
	}
	if (r != 0 || blkid_probe_lookup_value(pr, "TYPE", &data, NULL) < 0) {
		blkid_free_probe(pr);
		return -ENOMEDIUM;
	}
	strscpy(id->type, data, sizeof(id->type));
	for (i = 0; i < ARRAY_SIZE(keys); i++)
		if (blkid_probe_lookup_value(pr, tag_name(keys[i]), &data, NULL) == 0)
			strscpy(id->v[keys[i]], data, sizeof(id->v[0]));
	blkid_free_probe(pr);
	return 0;
}

/* The kernel's name for partition partno of disk: "vdb1", "nvme0n1p1". */
static void part_name(const char *disk, int partno, char *buf, size_t size)
{
	size_t n = strlen(disk);

	snprintf(buf, size, "%s%s%d", disk, n && isdigit((unsigned char)disk[n - 1]) ? "p" : "",
		 partno);
}

/*
 * The entry of the partition table on fd that carries the tag (t), or else the one numbered
 * partno: its number, with its UUID and name in id; 0 for none, -errno.
 */
static int probe_parts(int fd, const struct tag_spec *t, int partno, struct ids *id)
{
	blkid_probe pr = blkid_new_probe();
	blkid_partlist ls;
	int i, n, found = 0;

	if (!pr)
		return -ENOMEM;
	if (blkid_probe_set_device(pr, fd, 0, 0) < 0) {
		blkid_free_probe(pr);
		return -EIO;
	}
	blkid_probe_enable_superblocks(pr, 0);
	blkid_probe_enable_partitions(pr, 1);
	ls = blkid_probe_get_partitions(pr);
	n = ls ? blkid_partlist_numof_partitions(ls) : 0;
	for (i = 0; i < n && !found; i++) {
		blkid_partition p = blkid_partlist_get_partition(ls, i);
		const char *uuid, *name;

		if (!p)
			continue;
		uuid = blkid_partition_get_uuid(p);
		name = blkid_partition_get_name(p);
		if (t) {
			const char *v = t->type == TAG_PARTUUID ? uuid : name;

			if (!v || !tag_value_matches(t, v))
				continue;
		} else if (blkid_partition_get_partno(p) != partno) {
			continue;
		}
		found = blkid_partition_get_partno(p);
		strscpy(id->v[TAG_PARTUUID], uuid ? uuid : "", sizeof(id->v[0]));
		strscpy(id->v[TAG_PARTLABEL], name ? name : "", sizeof(id->v[0]));
	}
	blkid_free_probe(pr);
	return found > 0 ? found : 0;
}

struct part_list {
	char (*name)[BLKDEV_NAME_MAX];
	size_t n;
};

/*
 * One line of /proc/partitions, "major minor #blocks name": the name of a device that has
 * blocks, or -EINVAL (the header, a blank line, an empty device, a name with '/').
 */
static int partitions_line(const char *line, char *name, size_t size)
{
	unsigned long long v[3];
	const char *p = line;
	char *end;
	size_t i, n;

	for (i = 0; i < 3; i++) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p < '0' || *p > '9')
			return -EINVAL;
		errno = 0;
		v[i] = strtoull(p, &end, 10);
		if (errno || (*end != ' ' && *end != '\t'))
			return -EINVAL;
		p = end;
	}
	while (*p == ' ' || *p == '\t')
		p++;
	n = strcspn(p, " \t");
	if (v[2] == 0 || n == 0 || n >= size || p[n] || memchr(p, '/', n) || p[0] == '.')
		return -EINVAL;
	memcpy(name, p, n);
	name[n] = '\0';
	return 0;
}

/* The names /proc/partitions lists ("major minor #blocks name"), but empty devices. */
static int read_partitions(struct part_list *l)
{
	char *buf = malloc(PARTITIONS_MAX), *line, *save = NULL;
	size_t cap = 0;
	ssize_t n;

	l->name = NULL;
	l->n = 0;
	if (!buf)
		return -ENOMEM;
	n = root_read("proc/partitions", buf, PARTITIONS_MAX);
	if (n < 0) {
		free(buf);
		return (int)n;
	}
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[BLKDEV_NAME_MAX];

		if (partitions_line(line, name, sizeof(name)) < 0)
			continue;
		if (l->n == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			void *p = realloc(l->name, ncap * sizeof(*l->name));

			if (!p) {
				free(l->name);
				free(buf);
				l->name = NULL;
				return -ENOMEM;
			}
			l->name = p;
			cap = ncap;
		}
		strscpy(l->name[l->n++], name, BLKDEV_NAME_MAX);
	}
	free(buf);
	return 0;
}

static bool listed(const struct part_list *l, const char *name)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (streq(l->name[i], name))
			return true;
	return false;
}

/* A device that carries the tag. */
struct match {
	char name[BLKDEV_NAME_MAX];
	struct ids id;
};

struct match_list {
	struct match *m;
	size_t n, cap;
};

static struct match *match_add(struct match_list *ml, const char *name, const struct ids *id)
{
	if (ml->n == ml->cap) {
		size_t ncap = ml->cap ? ml->cap * 2 : 4;
		void *p = realloc(ml->m, ncap * sizeof(*ml->m));

		if (!p)
			return NULL;
		ml->m = p;
		ml->cap = ncap;
	}
	strscpy(ml->m[ml->n].name, name, sizeof(ml->m[0].name));
	ml->m[ml->n].id = *id;
	return &ml->m[ml->n++];
}

/* The disk that name is partition *partno of, as listed ("vdb" and 2 for "vdb2"), or NULL. */
static const char *disk_of(const struct part_list *l, const char *name, int *partno)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		const char *d = l->name[i], *p;
		size_t n = strlen(d);
		char *end;
		long k;

		if (strncmp(name, d, n) != 0 || !name[n])
			continue;
		p = name + n;
		if (isdigit((unsigned char)d[n - 1]) && *p++ != 'p')
			continue;
		if (!isdigit((unsigned char)*p))
			continue;
		k = strtol(p, &end, 10);
		if (*end || k <= 0 || k > 65535)
			continue;
		*partno = (int)k;
		return d;
	}
	return NULL;
}

/* A matched partition's entry in its disk's table: its PARTUUID and PARTLABEL, if it has one. */
static void part_entry(const struct part_list *l, struct match *m)
{
	char path[BLKDEV_NAME_MAX + 8];
	const char *disk;
	int partno, fd;

	disk = disk_of(l, m->name, &partno);
	if (!disk)
		return;
	snprintf(path, sizeof(path), "dev/%s", disk);
	fd = open_dev(path);
	if (fd < 0)
		return;
	probe_parts(fd, NULL, partno, &m->id);
	close(fd);
}

/*
 * Is m[k] a multipath map (its dm UUID "mpath-…") whose slaves are every other match? Only
 * then is the tag on its paths the map's own: an LVM volume or a crypt device over the same
 * devices carries something else, and two maps or a device outside the map are two disks.
 */
static bool map_of_all(const struct match_list *ml, size_t k)
{
	char path[2 * BLKDEV_NAME_MAX + 40], uuid[160];
	size_t i;

	snprintf(path, sizeof(path), "sys/class/block/%s/dm/uuid", ml->m[k].name);
	if (root_read(path, uuid, sizeof(uuid)) < 0 || !startswith(uuid, "mpath-"))
		return false;
	for (i = 0; i < ml->n; i++) {
		if (i == k)
			continue;
		snprintf(path, sizeof(path), "sys/class/block/%s/slaves/%s", ml->m[k].name,
			 ml->m[i].name);
		if (!root_exists(path))
			return false;
	}
	return true;
}

/* For the advice: the tags all matches have, with all values different (apart) or one (same). */
static void compare(const struct match_list *ml, struct blkdev_found *f)
{
	enum tag_type t;
	size_t i, j;

	for (t = TAG_LABEL; t < TAG_PATH; t++) {
		bool all = true, apart = true, same = true;

		for (i = 0; i < ml->n && all; i++) {
			all = ml->m[i].id.v[t][0] != '\0';
			for (j = 0; j < i && all; j++) {
				/* UUIDs compare without regard to case, as tags match them */
				bool eq = t == TAG_LABEL || t == TAG_PARTLABEL ?
					streq(ml->m[i].id.v[t], ml->m[j].id.v[t]) :
					strcasecmp(ml->m[i].id.v[t], ml->m[j].id.v[t]) == 0;

				if (eq)
					apart = false;
				else
					same = false;
			}
		}
		if (all && apart)
			f->apart |= 1u << t;
		if (all && same)
			f->same |= 1u << t;
	}
}

/* What the matches come to: one device, the multipath map over the rest, or ambiguity. */
static int decide(const struct part_list *l, struct match_list *ml, const struct tag_spec *t,
		  struct blkdev_found *f)
{
	const struct match *m = ml->n ? &ml->m[0] : NULL;
	size_t i;

	if (!m)
		return -ENOENT;
	for (i = 0; i < ml->n && ml->n > 1; i++) {
		if (map_of_all(ml, i)) {
			m = &ml->m[i];
			f->paths = (unsigned)ml->n - 1;
			break;
		}
	}
	snprintf(f->dev, sizeof(f->dev), "/dev/%s", m->name);
	strscpy(f->fstype, m->id.type, sizeof(f->fstype));
	if (ml->n > 1 && !f->paths) {
		snprintf(f->other, sizeof(f->other), "/dev/%s", ml->m[1].name);
		f->matches = (unsigned)ml->n;
		if (t->type == TAG_LABEL || t->type == TAG_UUID)
			for (i = 0; i < ml->n; i++)
				part_entry(l, &ml->m[i]);
		compare(ml, f);
		return -ENOTUNIQ;
	}
	return f->fstype[0] ? 0 : -ENOMEDIUM;
}

static int find_path(const struct tag_spec *t, struct blkdev_found *f)
{
	struct ids id = { .type = "" };
	int fd = open_dev(t->value), r;

	if (fd < 0)
		return fd == -ENOTBLK ? -ENOTBLK : -ENOENT;
	r = probe_fs(fd, &id);
	close(fd);
	strscpy(f->dev, t->value, sizeof(f->dev));
	strscpy(f->fstype, id.type, sizeof(f->fstype));
	return r;
}

int blkdev_find(const struct tag_spec *t, struct blkdev_found *f)
{
	struct match_list ml = { .m = NULL };
	struct part_list l;
	size_t i;
	int r;

	memset(f, 0, sizeof(*f));
	if (t->type == TAG_PATH)
		return find_path(t, f);
	r = read_partitions(&l);
	if (r < 0)
		return r;
	for (i = 0; i < l.n; i++) {
		char part[BLKDEV_NAME_MAX + 8], path[sizeof(part) + 8];
		const char *name = l.name[i];
		struct ids id = { .type = "" };
		int fd, partno;

		snprintf(path, sizeof(path), "dev/%s", name);
		fd = open_dev(path);
		if (fd < 0)
			continue; /* no node (yet), or not a block device */
		if (t->type == TAG_LABEL || t->type == TAG_UUID) {
			r = probe_fs(fd, &id);
			close(fd);
			if (r < 0 || !tag_value_matches(t, id.v[t->type]))
				continue;
		} else {
			partno = probe_parts(fd, t, 0, &id);
			close(fd);
			if (partno <= 0)
				continue;
			part_name(name, partno, part, sizeof(part));
			if (!listed(&l, part))
				continue; /* the kernel has not made the partition (yet) */
			name = part;
			snprintf(path, sizeof(path), "dev/%s", name);
			fd = open_dev(path);
			if (fd < 0)
				continue;
			if (probe_fs(fd, &id) < 0)
				strscpy(id.type, "", sizeof(id.type));
			close(fd);
		}
		if (removable(name)) {
			f->skipped_removable++;
			continue;
		}
		if (!match_add(&ml, name, &id)) {
			r = -ENOMEM;
			goto out;
		}
	}
	r = decide(&l, &ml, t, f);
out:
	free(ml.m);
	free(l.name);
	return r;
}

static int open_beneath(int dirfd, const char *path)
{
	struct open_how how = {
		.flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS,
	};
	int fd;

	while (*path == '/')
		path++;
	/* door: beneath a disk gpuvm mounted itself (config=), not the root */
	fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
	if (fd >= 0 || errno != ENOSYS)
		return fd < 0 ? -errno : fd;
	/* Before Linux 5.6: refuse every symlink rather than judge where it leads. */
	if (strstr(path, ".."))
		return -EXDEV;
	{
		char part[256], *c, *save = NULL;
		int cur = dup(dirfd), next;

		if (cur < 0)
			return -errno;
		strscpy(part, path, sizeof(part));
		for (c = strtok_r(part, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
			bool last = !save || !*save;

			/* door: the same disk, without openat2 */
			next = openat(cur, c,
				      (last ? how.flags : O_PATH | O_DIRECTORY | O_CLOEXEC) |
					      O_NOFOLLOW);
			close(cur);
			if (next < 0)
				return -errno;
			cur = next;
		}
		return cur;
	}
}

int blkdev_read_beneath(int dirfd, const char *path, size_t max, char **buf, size_t *len)
{
	struct stat st;
	int r, fd = open_beneath(dirfd, path);

	*buf = NULL;
	*len = 0;
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	if ((unsigned long long)st.st_size > max) {
		close(fd);
		return -EFBIG;
	}
	r = read_whole(fd, max, buf, len);
	close(fd);
	return r;
}

int blkdev_read_config(const struct blkdev_found *f, const struct tag_spec *t, size_t max,
		       char **buf, size_t *len, char *msg, size_t msgsize)
{
	char dir[] = MOUNT_DIR "/disk.XXXXXX";
	int r, dirfd;

	*buf = NULL;
	*len = 0;
	if (mkdir(MOUNT_DIR, 0755) < 0 && errno != EEXIST) {
		r = -errno;
		snprintf(msg, msgsize, "cannot create %s: %s", MOUNT_DIR, strerror(-r));
		return r;
	}
	if (!mkdtemp(dir)) {
		r = -errno;
		snprintf(msg, msgsize, "cannot create a directory in %s: %s", MOUNT_DIR, strerror(-r));
		return r;
	}
	if (mount(f->dev, dir, f->fstype, MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) {
		r = -errno;
		snprintf(msg, msgsize, "cannot mount %s (%s) read-only: %s", f->dev, f->fstype,
			 strerror(-r));
		rmdir(dir);
		return r;
	}
	dirfd = openat(AT_FDCWD, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC); /* door: its mount */
	if (dirfd < 0) {
		r = -errno;
		snprintf(msg, msgsize, "cannot open %s: %s", dir, strerror(-r));
	} else {
		r = blkdev_read_beneath(dirfd, t->file, max, buf, len);
		close(dirfd);
		if (r == -EFBIG)
			snprintf(msg, msgsize, "%s on %s: larger than %zu bytes", t->file, f->dev, max);
		else if (r == -EINVAL)
			snprintf(msg, msgsize, "%s on %s: not a regular file", t->file, f->dev);
		else if (r == -EXDEV || r == -ELOOP)
			snprintf(msg, msgsize,
				 "%s on %s: a symlink or '..' leads out of the file system",
				 t->file, f->dev);
		else if (r < 0)
			snprintf(msg, msgsize, "%s on %s: %s", t->file, f->dev, strerror(-r));
	}
	if (umount2(dir, 0) < 0 && umount2(dir, MNT_DETACH) < 0 && r == 0) {
		r = -errno;
		snprintf(msg, msgsize, "cannot unmount %s from %s: %s", f->dev, dir, strerror(-r));
		free(*buf);
		*buf = NULL;
		*len = 0;
	}
	rmdir(dir);
	return r;
}
