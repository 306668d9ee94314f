// SPDX-License-Identifier: MIT
/*
 * The PCI functions the running host needs whatever their class says: the controller of the
 * root file system's disk, and the serial ports console= names. They are found where they
 * can be known: on a booted host (plan, status, check, the label mirror). In the initramfs,
 * before switch_root, "/" is the initramfs's own file system, which has no disk; there the
 * class rule of pci_class_host_needs() (mass storage is never bound) stands for the disk.
 * Read only when ids= is set: the default match selects only NVIDIA GPUs and NVSwitches.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cmdline.h"
#include "hostdev.h"
#include "rootio.h"
#include "util.h"

#define LINK_MAX_LEN 512
#define STACK_DEPTH 4 /* dm on md on a partition, and one more */

/* The last component of a sysfs device path that is a PCI address: the device it is behind. */
static int pci_ancestor(const char *target, struct pci_addr *a)
{
	char comp[64];
	const char *p = target;
	int found = -ENOENT;

	while (*p) {
		const char *end = strchrnul(p, '/');
		size_t n = (size_t)(end - p);

		if (n > 0 && n < sizeof(comp)) {
			memcpy(comp, p, n);
			comp[n] = '\0';
			if (pci_addr_parse(comp, a) == 0)
				found = 0; /* keep going: the deepest one is the device */
		}
		p = *end ? end + 1 : end;
	}
	return found;
}

static int mark(struct inventory *inv, const char *link, enum host_use use)
{
	char target[LINK_MAX_LEN];
	struct pci_addr a;
	struct pci_dev *d;

	if (root_link_target(link, target, sizeof(target)) < 0 || pci_ancestor(target, &a) < 0)
		return -ENOENT;
	d = inventory_find(inv, &a);
	if (!d)
		return -ENOENT;
	d->host_use = use;
	return 0;
}

struct slaves_ctx {
	struct inventory *inv;
	int depth;
	int found;
};

static int mark_block(struct inventory *inv, const char *dir, int depth);

static int on_slave(const char *name, void *data)
{
	struct slaves_ctx *c = data;
	char path[96];

	if (!valid_driver_name(name)) /* a plain name: no '/', not "." or ".." */
		return 0;
	snprintf(path, sizeof(path), "sys/class/block/%s", name);
	if (mark_block(c->inv, path, c->depth + 1) == 0)
		c->found = 1;
	return 0;
}

/*
 * A block device (its sys/dev/block or sys/class/block link): the PCI device behind it, or,
 * for a device of the device mapper or md, the ones behind each of its slaves.
 */
static int mark_block(struct inventory *inv, const char *dir, int depth)
{
	struct slaves_ctx c = { .inv = inv, .depth = depth };
	char path[128];

	if (depth > STACK_DEPTH)
		return -ELOOP;
	if (mark(inv, dir, HOST_USE_ROOT) == 0)
		return 0;
	snprintf(path, sizeof(path), "%s/slaves", dir);
	root_list(path, on_slave, &c);
	return c.found ? 0 : -ENOENT;
}

/* A field of a mountinfo line: the nth, space-separated; false when the line is shorter. */
static bool field(const char *line, int nth, char *buf, size_t size)
{
	const char *p = line, *end;

	for (; nth > 0; nth--) {
		p = strchr(p, ' ');
		if (!p)
			return false;
		p++;
	}
	end = strchrnul(p, ' ');
	if ((size_t)(end - p) >= size || end == p)
		return false;
	memcpy(buf, p, (size_t)(end - p));
	buf[end - p] = '\0';
	return true;
}

/* The source of a mountinfo line: the second field after the " - " separator. */
static bool mount_source(const char *line, char *buf, size_t size)
{
	const char *sep = strstr(line, " - ");

	return sep && field(sep + 3, 1, buf, size);
}

/*
 * The root file system's disk: the last mount of "/" in mountinfo (the one on top), by its
 * device number, else by its source's name (btrfs reports an anonymous device number).
 */
static void mark_root(struct inventory *inv)
{
	char buf[16384], root[512] = "", majmin[24], mnt[8], src[256], path[320];
	char *line, *next;
	ssize_t n = root_read("proc/self/mountinfo", buf, sizeof(buf));

	if (n <= 0)
		return;
	for (line = buf; *line; line = next) {
		char *nl = strchr(line, '\n');

		if (!nl)
			break; /* cut by the buffer: not a whole line */
		*nl = '\0';
		next = nl + 1;
		if (field(line, 4, mnt, sizeof(mnt)) && streq(mnt, "/"))
			strscpy(root, line, sizeof(root));
	}
	if (!root[0] || !field(root, 2, majmin, sizeof(majmin)))
		return;
	snprintf(path, sizeof(path), "sys/dev/block/%s", majmin);
	if (mark_block(inv, path, 0) == 0)
		return;
	if (mount_source(root, src, sizeof(src)) && startswith(src, "/dev/") &&
	    valid_driver_name(strrchr(src, '/') + 1)) {
		snprintf(path, sizeof(path), "sys/class/block/%s", strrchr(src, '/') + 1);
		mark_block(inv, path, 0);
	}
}

static int on_word(const char *key, const char *value, void *data)
{
	struct inventory *inv = data;
	char name[64], path[96];
	size_t n;

	if (!streq(key, "console") || !value)
		return 0;
	n = strcspn(value, ",");
	if (n == 0 || n >= sizeof(name))
		return 0;
	memcpy(name, value, n);
	name[n] = '\0';
	if (!valid_driver_name(name))
		return 0;
	snprintf(path, sizeof(path), "sys/class/tty/%s", name);
	mark(inv, path, HOST_USE_CONSOLE);
	return 0;
}

void hostdev_mark(struct inventory *inv, const char *cmdline)
{
	if (!inv->n)
		return;
	mark_root(inv);
	if (cmdline)
		cmdline_parse(cmdline, on_word, inv);
}
