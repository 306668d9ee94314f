/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_DRA_SLICES_H
#define GPUVM_DRA_SLICES_H

#include <stdbool.h>
#include <stddef.h>

struct dra_cfg;

/* The node's ResourceSlices: one pool, named after the node. */
struct slices {
	struct dra_cfg *cfg;
	bool enabled;
	long interval_s;
	long next;     /* monotonic seconds of the next check */
	char last[64]; /* a digest of the devices last published, "" before */
	long long generation;
};

/* Check the slices, and publish them where they are missing or differ (a tick of h2srv_run). */
void slices_tick(void *data);

#endif
