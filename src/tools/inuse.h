/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_INUSE_H
#define GPUVM_INUSE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Who holds a PCI function: the processes with a descriptor open on one of its device
 * nodes (/proc/PID/fd), and what else makes unbinding it take something from a running
 * workload (virtual functions, mediated devices, NVIDIA's unbindLock). A leaf: it reads
 * through rootio and logs nothing; apply --live (live.c) decides and says.
 */

/* A character device node of a function, as /dev names it and sysfs numbers it. */
struct inuse_node {
	char path[48]; /* "/dev/dri/card0", "/dev/fb0", "/dev/vfio/12", "/dev/nvidia0" */
	unsigned major, minor;
	bool has_dev; /* major:minor known (sysfs dev, or NVIDIA's fixed major) */
};

#define INUSE_NODES_MAX 8
#define INUSE_HOLDERS_MAX 4

struct inuse_holder {
	int pid;
	char comm[20]; /* /proc/PID/comm: 15 characters and the NUL, in the kernel */
	char node[48]; /* the node it holds */
};

/* What one check found; n counts every holder, h keeps the first INUSE_HOLDERS_MAX. */
struct inuse {
	struct inuse_holder h[INUSE_HOLDERS_MAX];
	size_t n;
	char why[160]; /* set when the scan could not tell (an unreadable process), else "" */
};

/*
 * The nodes of the function at sysfs address addr in IOMMU group group (-1: none): its DRM
 * nodes (drm/card*, renderD*), its framebuffers (graphics/fbN: /dev/fbN), its NVIDIA minor
 * (/proc/driver/nvidia/gpus/ADDR/information), its vfio group (/dev/vfio/GROUP, when vfio
 * is set: it is on a vfio driver) and its vfio cdev (vfio-dev/vfioN). Returns how many were
 * put in nodes (at most max).
 */
/*
 * The names of a function's device nodes in sysfs, one list for inuse_nodes and dump:
 * drm/card* and renderD* (not the legacy controlD*), graphics/fbN, vfio-dev/vfioN.
 */
bool inuse_drm_node(const char *name);
bool inuse_fb_node(const char *name);
bool inuse_vfio_node(const char *name);

size_t inuse_nodes(const char *addr, int group, bool vfio, struct inuse_node *nodes, size_t max);

/*
 * Every process's open descriptors (/proc/PID/fd/N) against nodes: a character device by
 * its number where the descriptor can be followed, else by the link's text. Adds what it
 * finds to u (u->n, u->h); u->why when a process's descriptors cannot be read (EACCES),
 * or one of them can be neither followed nor read (any error but ENOENT, a descriptor
 * closed meanwhile): then nobody can say it is free. 0 or -errno (proc cannot be listed).
 */
int inuse_holders(const struct inuse_node *nodes, size_t n, struct inuse *u);

/*
 * What unbinding addr would take from others besides open nodes: enabled SR-IOV virtual
 * functions (sriov_numvfs), mediated devices (a UUID directory under the function). A
 * sentence in why and true when there is one.
 */
bool inuse_children(const char *addr, char *why, size_t size);

/*
 * NVIDIA's unbindLock (/proc/driver/nvidia/gpus/ADDR/unbindLock, the vGPU host driver's):
 * write 1 and read it back, 1 when the driver granted it (no client: none can open the GPU
 * until it is unbound or the lock released), 0 when clients remain. -ENOENT: the driver
 * has none; another -errno when the write or read failed.
 */
int inuse_unbind_lock(const char *addr, unsigned timeout_ms);
/* Write 0: give the lock back (the GPU stays on nvidia). 0 or -errno. */
int inuse_unbind_unlock(const char *addr, unsigned timeout_ms);

#endif
