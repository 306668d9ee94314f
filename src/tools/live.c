// SPDX-License-Identifier: MIT
/* apply --live: in use means refuse. See live.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "live.h"
#include "util.h"

#define POLL_MS 200 /* --wait: how often a device in use is looked at again */

int live_init(struct live *l, const struct plan *p, const struct inventory *inv, unsigned wait_s,
	      unsigned timeout_ms)
{
	memset(l, 0, sizeof(*l));
	l->p = p;
	l->inv = inv;
	l->timeout_ms = timeout_ms;
	l->deadline_ms = clock_ms(CLOCK_MONOTONIC) + (unsigned long long)wait_s * 1000ULL;
	l->holders = calloc(inv->n ? inv->n : 1, sizeof(*l->holders));
	l->locked = calloc(inv->n ? inv->n : 1, sizeof(*l->locked));
	l->in_use = calloc(inv->n ? inv->n : 1, sizeof(*l->in_use));
	if (!l->holders || !l->locked || !l->in_use) {
		live_fini(l);
		return -ENOMEM;
	}
	l->rep.wait_s = wait_s;
	l->rep.holders = l->holders;
	l->rep.in_use = (const char(*)[EXEC_ERROR_LEN])l->in_use;
	return 0;
}

void live_fini(struct live *l)
{
	free(l->holders);
	free(l->locked);
	free(l->in_use);
	l->holders = NULL;
	l->locked = NULL;
	l->in_use = NULL;
}

static bool is_nvidia(const char *drv)
{
	return strncmp(drv, "nvidia", 6) == 0;
}

static bool acts(const struct plan_dev *pd)
{
	return pd->action != ACT_SKIP && pd->action != ACT_KEEP;
}

static void unlock_all(struct live *l, const size_t *members, size_t n)
{
	size_t k;

	for (k = 0; k < n; k++)
		if (l->locked[members[k]]) {
			inuse_unbind_unlock(l->inv->dev[members[k]].name, l->timeout_ms);
			l->locked[members[k]] = false;
		}
}

/* "in use: NODE held by pid P (COMM)[ and N more]" */
static void say_holders(const struct pci_dev *d, const struct inuse *u, const char *whole,
			char *why, size_t size)
{
	char comm[sizeof(u->h[0].comm)];

	term_safe(u->h[0].comm, comm, sizeof(comm));
	if (u->n > 1)
		snprintf(why, size, "in use: %s (%s) held by pid %d (%s) and %zu other process%s; %s",
			 u->h[0].node, d->name, u->h[0].pid, comm, u->n - 1, u->n == 2 ? "" : "es",
			 whole);
	else
		snprintf(why, size, "in use: %s (%s) held by pid %d (%s); %s", u->h[0].node,
			 d->name, u->h[0].pid, comm, whole);
}

/* Whether device i shares an IOMMU group with one of members (or is one). */
static bool in_groups(const struct inventory *inv, size_t i, const size_t *members, size_t n)
{
	size_t k;

	for (k = 0; k < n; k++)
		if (members[k] == i ||
		    (inv->dev[i].group >= 0 && inv->dev[i].group == inv->dev[members[k]].group))
			return true;
	return false;
}

/* Whether anyone holds device m's nodes; why says who. */
static bool held(struct live *l, size_t m, const char *whole, char *why, size_t size)
{
	const struct pci_dev *d = &l->inv->dev[m];
	struct inuse_node nodes[INUSE_NODES_MAX];
	struct inuse *u = &l->holders[m];
	size_t nn;
	int r;

	memset(u, 0, sizeof(*u));
	nn = inuse_nodes(d->name, d->group, driver_is_vfio(d->driver), nodes, INUSE_NODES_MAX);
	r = inuse_holders(nodes, nn, u);
	if (r < 0) {
		snprintf(why, size,
			 "not known to be free: %s: cannot list /proc (%s): who holds it cannot be told; %s",
			 d->name, strerror(-r), whole);
		return true;
	}
	if (u->n) {
		say_holders(d, u, whole, why, size);
		return true;
	}
	if (u->why[0]) {
		snprintf(why, size, "not known to be free: %s: %s; %s", d->name, u->why, whole);
		return true;
	}
	return false;
}

/*
 * One look at members and every function of their IOMMU groups (a VM holds a group
 * whole, by the group's node or any member's cdev): true and why when one is in use.
 * lock: ask NVIDIA's unbindLock too (a write), as apply --live does.
 */
static bool check(struct live *l, const size_t *members, size_t n, char *why, size_t size, bool lock)
{
	const char *whole = "its IOMMU group left as it is";
	size_t i, k, peers = 0;
	int r;

	for (i = 0; i < l->inv->n; i++)
		peers += in_groups(l->inv, i, members, n);
	if (peers <= 1)
		whole = "left as it is";
	for (k = 0; k < n; k++) {
		size_t m = members[k];
		const struct pci_dev *d = &l->inv->dev[m];
		char child[160];

		if (d->driver[0] && acts(&l->p->dev[m]) &&
		    inuse_children(d->name, child, sizeof(child))) {
			snprintf(why, size, "in use: %s: %s; %s", d->name, child, whole);
			return true;
		}
	}
	for (i = 0; i < l->inv->n; i++)
		if (in_groups(l->inv, i, members, n) && held(l, i, whole, why, size))
			return true;
	if (!lock)
		return false;
	/* No descriptor open: NVIDIA's vGPU host driver may still have clients. */
	for (k = 0; k < n; k++) {
		size_t m = members[k];
		const struct pci_dev *d = &l->inv->dev[m];

		if (!is_nvidia(d->driver) || !acts(&l->p->dev[m]) || l->locked[m])
			continue;
		r = inuse_unbind_lock(d->name, l->timeout_ms);
		if (r == 1) {
			l->locked[m] = true;
			continue;
		}
		if (r == -ENOENT)
			continue;
		if (r == 0)
			snprintf(why, size,
				 "in use: %s: the nvidia driver has clients (its unbindLock was not granted); %s",
				 d->name, whole);
		else
			snprintf(why, size,
				 "not known to be free: %s: cannot take the nvidia driver's unbindLock: %s; %s",
				 d->name, r == -ETIMEDOUT ? "no answer in time" : strerror(-r), whole);
		unlock_all(l, members, n);
		return true;
	}
	return false;
}

bool live_refuse(void *data, const size_t *members, size_t n, char *why, size_t size)
{
	struct live *l = data;
	unsigned long long start = clock_ms(CLOCK_MONOTONIC), now;
	struct timespec ts = { 0, POLL_MS * 1000000L };

	for (;;) {
		if (!check(l, members, n, why, size, true))
			break;
		now = clock_ms(CLOCK_MONOTONIC);
		if (now >= l->deadline_ms) {
			l->rep.waited_ms += now - start;
			return true;
		}
		nanosleep(&ts, NULL);
	}
	l->rep.waited_ms += clock_ms(CLOCK_MONOTONIC) - start;
	return false;
}

bool live_look(struct live *l, const size_t *members, size_t n, char *why, size_t size)
{
	return check(l, members, n, why, size, false);
}

void live_release(struct live *l, const struct exec_result *x)
{
	size_t i;

	for (i = 0; i < l->inv->n; i++)
		if (l->locked[i] && is_nvidia(x->dev[i].after))
			inuse_unbind_unlock(l->inv->dev[i].name, l->timeout_ms);
}
