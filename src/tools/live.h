/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_LIVE_H
#define GPUVM_LIVE_H

#include <stdbool.h>
#include <stddef.h>

#include "execute.h"
#include "inuse.h"
#include "inventory.h"
#include "plan.h"

/* apply --live: what the state file adds to an apply's; plan --in-use: what it found. */
struct live_report {
	const char *mode_before; /* the last state file's mode; NULL when there was none */
	unsigned wait_s;
	unsigned long long waited_ms;
	const struct inuse *holders; /* one per inventory device */
	/* plan --in-use: why each device would be left as it is ("" when free), and how many looks found one */
	const char (*in_use)[EXEC_ERROR_LEN];
	size_t n_in_use;
};

/*
 * apply --live: the switch of a running host. Before execute() touches an IOMMU group (or
 * a device outside a VM group), live_refuse() looks for whoever uses it (inuse.h) and
 * refuses the whole group when anyone does, after waiting for it up to --wait seconds.
 * NVIDIA's unbindLock is taken for a GPU on nvidia that has one; live_release() gives back
 * a lock whose GPU is still on nvidia after the run.
 */
struct live {
	const struct plan *p;
	const struct inventory *inv;
	unsigned timeout_ms;		/* each write's bound (write_timeout_ms) */
	unsigned long long deadline_ms; /* CLOCK_MONOTONIC: the end of --wait */
	struct inuse *holders;		/* one per inventory device: what its last check found */
	bool *locked;			/* one per inventory device: its unbindLock taken */
	char (*in_use)[EXEC_ERROR_LEN]; /* plan --in-use: why each is left as it is */
	struct live_report rep;
};

/* -ENOMEM. wait_s: how long to wait for a device in use (0: not at all). */
int live_init(struct live *l, const struct plan *p, const struct inventory *inv, unsigned wait_s,
	      unsigned timeout_ms);
/* exec_opts.refuse: data is the struct live. */
bool live_refuse(void *data, const size_t *members, size_t n, char *why, size_t size);
/*
 * plan --in-use: the same look at members as live_refuse's, once, and read-only: NVIDIA's
 * unbindLock (a write) is not asked, so a vGPU client without an open node is not seen.
 */
bool live_look(struct live *l, const size_t *members, size_t n, char *why, size_t size);
/* The unbindLocks taken whose GPU is still on an nvidia driver: written back to 0. */
void live_release(struct live *l, const struct exec_result *x);
void live_fini(struct live *l);

#endif
