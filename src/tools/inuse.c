// SPDX-License-Identifier: MIT
/* Who holds a PCI function: see inuse.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inuse.h"
#include "rootio.h"
#include "util.h"

#define DEV "sys/bus/pci/devices/"
#define NVIDIA_MAJOR 195 /* the nvidia driver's fixed character major */

/* A decimal number up to max, then the character stop; *end past it. */
static bool number(const char *s, char stop, unsigned long max, unsigned *v, const char **end)
{
	char *e;
	unsigned long n;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	n = strtoul(s, &e, 10);
	if (errno || n > max || *e != stop)
		return false;
	*v = (unsigned)n;
	*end = e;
	return true;
}

/* "MAJOR:MINOR\n" of a sysfs dev attribute. */
static bool read_devt(const char *path, unsigned *major, unsigned *minor)
{
	const char *p;
	char buf[32];

	if (root_read(path, buf, sizeof(buf)) <= 0)
		return false;
	return number(buf, ':', 0xfff, major, &p) && number(p + 1, '\n', 0xfffff, minor, &p);
}

static void add_node(struct inuse_node *nodes, size_t *n, size_t max, const char *path,
		     const char *devpath)
{
	struct inuse_node *nd;

	if (*n >= max)
		return;
	nd = &nodes[(*n)++];
	strscpy(nd->path, path, sizeof(nd->path));
	nd->has_dev = devpath && read_devt(devpath, &nd->major, &nd->minor);
}

bool inuse_drm_node(const char *name)
{
	/* controlD*: the legacy control node (gone in 6.8) opens nothing of the device's. */
	return strncmp(name, "card", 4) == 0 || strncmp(name, "renderD", 7) == 0;
}

bool inuse_vfio_node(const char *name)
{
	return strncmp(name, "vfio", 4) == 0 && name[4] >= '0' && name[4] <= '9';
}

bool inuse_fb_node(const char *name)
{
	return strncmp(name, "fb", 2) == 0 && name[2] >= '0' && name[2] <= '9' &&
		strspn(name + 2, "0123456789") == strlen(name + 2);
}

struct drm_walk {
	const char *addr;
	struct inuse_node *nodes;
	size_t *n, max;
};

static int drm_entry(const char *name, void *data)
{
	struct drm_walk *w = data;
	char path[48], dev[128];

	if (!inuse_drm_node(name))
		return 0;
	snprintf(path, sizeof(path), "/dev/dri/%s", name);
	snprintf(dev, sizeof(dev), DEV "%s/drm/%s/dev", w->addr, name);
	add_node(w->nodes, w->n, w->max, path, dev);
	return 0;
}

static int vfio_dev_entry(const char *name, void *data)
{
	struct drm_walk *w = data;
	char path[48], dev[128];

	if (!inuse_vfio_node(name))
		return 0;
	snprintf(path, sizeof(path), "/dev/vfio/devices/%s", name);
	snprintf(dev, sizeof(dev), DEV "%s/vfio-dev/%s/dev", w->addr, name);
	add_node(w->nodes, w->n, w->max, path, dev);
	return 0;
}

/*
 * graphics/fbN: the framebuffer a driver of the function registered (fbdev emulation of a
 * DRM driver, nvidia-drm's fbdev=1, a native fbdev driver), /dev/fbN.
 */
static int fb_entry(const char *name, void *data)
{
	struct drm_walk *w = data;
	char path[48], dev[128];

	if (!inuse_fb_node(name))
		return 0;
	snprintf(path, sizeof(path), "/dev/%s", name);
	snprintf(dev, sizeof(dev), DEV "%s/graphics/%s/dev", w->addr, name);
	add_node(w->nodes, w->n, w->max, path, dev);
	return 0;
}

/* "Device Minor: \t 0" in the nvidia driver's information file of the GPU. */
static int nvidia_minor(const char *addr)
{
	char path[96], buf[1024], *at;
	const char *end;
	unsigned minor;

	snprintf(path, sizeof(path), "proc/driver/nvidia/gpus/%s/information", addr);
	if (root_read(path, buf, sizeof(buf)) <= 0)
		return -1;
	at = strstr(buf, "Device Minor:");
	if (!at)
		return -1;
	at += strlen("Device Minor:");
	at += strspn(at, " \t");
	if (!number(at, '\n', 254, &minor, &end))
		return -1;
	return (int)minor;
}

size_t inuse_nodes(const char *addr, int group, bool vfio, struct inuse_node *nodes, size_t max)
{
	char path[96], dev[64];
	size_t n = 0;
	struct drm_walk w = { addr, nodes, &n, max };
	int minor;

	snprintf(path, sizeof(path), DEV "%s/drm", addr);
	root_list(path, drm_entry, &w);
	snprintf(path, sizeof(path), DEV "%s/graphics", addr);
	root_list(path, fb_entry, &w);
	minor = nvidia_minor(addr);
	if (minor >= 0 && n < max) {
		snprintf(path, sizeof(path), "/dev/nvidia%d", minor);
		add_node(nodes, &n, max, path, NULL);
		nodes[n - 1].major = NVIDIA_MAJOR;
		nodes[n - 1].minor = (unsigned)minor;
		nodes[n - 1].has_dev = true;
	}
	if (vfio && group >= 0) {
		snprintf(path, sizeof(path), "/dev/vfio/%d", group);
		snprintf(dev, sizeof(dev), "sys/class/vfio/%d/dev", group);
		add_node(nodes, &n, max, path, dev);
	}
	snprintf(path, sizeof(path), DEV "%s/vfio-dev", addr);
	root_list(path, vfio_dev_entry, &w);
	return n;
}

struct proc_walk {
	const struct inuse_node *nodes;
	size_t n;
	struct inuse *u;
	const char *pid; /* the process being read */
	bool found;	 /* this process holds one (counted once a process) */
};

static void add_holder(struct proc_walk *w, const struct inuse_node *nd)
{
	struct inuse *u = w->u;
	struct inuse_holder *h;
	char path[64];

	if (w->found)
		return;
	w->found = true;
	if (u->n++ >= INUSE_HOLDERS_MAX)
		return;
	h = &u->h[u->n - 1];
	h->pid = (int)strtol(w->pid, NULL, 10); /* all digits: proc_entry checked */
	strscpy(h->node, nd->path, sizeof(h->node));
	snprintf(path, sizeof(path), "proc/%s/comm", w->pid);
	if (root_read(path, h->comm, sizeof(h->comm)) > 0)
		rstrip(h->comm);
	else
		strscpy(h->comm, "?", sizeof(h->comm));
}

static int fd_entry(const char *name, void *data)
{
	struct proc_walk *w = data;
	char path[64], target[160];
	unsigned major, minor;
	size_t i;
	int r;

	snprintf(path, sizeof(path), "proc/%s/fd/%s", w->pid, name);
	r = root_stat_rdev(path, &major, &minor);
	if (r == 0) {
		/* A character device: its number is the truth, whatever path it was opened by. */
		for (i = 0; i < w->n; i++)
			if (w->nodes[i].has_dev && w->nodes[i].major == major &&
			    w->nodes[i].minor == minor) {
				add_holder(w, &w->nodes[i]);
				return 1;
			}
		return 0;
	}
	if (r == -ENODEV)
		return 0; /* a socket, a pipe, a file that is no device */
	/* Not followed (gone meanwhile, refused, or a tree under --root): the link's text. */
	r = root_link_target(path, target, sizeof(target));
	if (r == -ENOENT || r == -ENAMETOOLONG)
		return 0; /* closed meanwhile; or longer than any node's path */
	if (r < 0) {
		/*
		 * Listed but neither followed nor read (a security module refusing ptrace
		 * access says EACCES to both): what it holds is not known, so neither is
		 * whether the device is free.
		 */
		if (!w->u->why[0])
			snprintf(w->u->why, sizeof(w->u->why),
				 "cannot follow /proc/%s/fd/%s (%s): who holds the device cannot be told",
				 w->pid, name, strerror(-r));
		return 0;
	}
	for (i = 0; i < w->n; i++)
		if (streq(target, w->nodes[i].path)) {
			add_holder(w, &w->nodes[i]);
			return 1;
		}
	return 0;
}

static int proc_entry(const char *name, void *data)
{
	struct proc_walk *w = data;
	char path[48];
	int r;

	if (name[0] < '1' || name[0] > '9' || strspn(name, "0123456789") != strlen(name))
		return 0;
	snprintf(path, sizeof(path), "proc/%s/fd", name);
	w->pid = name;
	w->found = false;
	r = root_list(path, fd_entry, w);
	if ((r == -EACCES || r == -EPERM) && !w->u->why[0])
		snprintf(w->u->why, sizeof(w->u->why),
			 "cannot read /proc/%s/fd (%s): who holds the device cannot be told", name,
			 strerror(-r));
	return 0; /* a process gone meanwhile (-ENOENT) holds nothing */
}

int inuse_holders(const struct inuse_node *nodes, size_t n, struct inuse *u)
{
	struct proc_walk w = { nodes, n, u, "", false };

	if (n == 0)
		return 0;
	return root_list("proc", proc_entry, &w);
}

/* A mediated device's directory under its parent: a UUID (8-4-4-4-12). */
static int mdev_entry(const char *name, void *data)
{
	static const int dash[] = { 8, 13, 18, 23 };
	size_t i;

	if (strlen(name) != 36)
		return 0;
	for (i = 0; i < ARRAY_SIZE(dash); i++)
		if (name[dash[i]] != '-')
			return 0;
	strscpy(data, name, 37);
	return 1;
}

bool inuse_children(const char *addr, char *why, size_t size)
{
	char path[96], buf[32], uuid[37] = "";
	long vfs;

	snprintf(path, sizeof(path), DEV "%s/sriov_numvfs", addr);
	if (root_read(path, buf, sizeof(buf)) > 0 && (vfs = strtol(buf, NULL, 10)) > 0) {
		snprintf(why, size,
			 "%ld virtual function%s enabled (sriov_numvfs): unbinding it would take them from their users",
			 vfs, vfs == 1 ? "" : "s");
		return true;
	}
	snprintf(path, sizeof(path), DEV "%s", addr);
	if (root_list(path, mdev_entry, uuid) == 1) {
		snprintf(why, size, "mediated device %s exists (vGPU): remove it first", uuid);
		return true;
	}
	return false;
}

static int lock_path(const char *addr, char *path, size_t size)
{
	snprintf(path, size, "proc/driver/nvidia/gpus/%s/unbindLock", addr);
	return root_exists(path) ? 0 : -ENOENT;
}

int inuse_unbind_lock(const char *addr, unsigned timeout_ms)
{
	char path[96], buf[16];
	ssize_t n;
	int r;

	if (lock_path(addr, path, sizeof(path)) < 0)
		return -ENOENT;
	/* The driver acts when the file is closed: a write of its own, then a read. */
	r = root_write(path, "1\n", timeout_ms);
	if (r < 0)
		return r;
	n = root_read(path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	return buf[0] == '1' ? 1 : 0;
}

int inuse_unbind_unlock(const char *addr, unsigned timeout_ms)
{
	char path[96];

	if (lock_path(addr, path, sizeof(path)) < 0)
		return -ENOENT;
	return root_write(path, "0\n", timeout_ms);
}
