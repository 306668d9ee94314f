/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_DRA_SLICES_H
#define GPUVM_DRA_SLICES_H

#include <stdbool.h>
#include <stddef.h>

struct dra_cfg;

/* The most devices a ResourceSlice holds (resource.k8s.io/v1). */
#define SLICE_DEVICES_MAX 128

/*
 * The node's ResourceSlices: one pool named after the node, its GPUs that are on vfio with
 * their group viable. At rest they cost the API nothing: the GPUs are read from sysfs every
 * interval, and the API is asked only when they change, at the start, when the kubelet
 * (re)registers the plugin (it deletes a node's slices when it starts), and after a failure.
 */
struct slices {
	struct dra_cfg *cfg;
	bool enabled;
	long interval_s;
	size_t per_slice;	 /* devices a slice, 1 to SLICE_DEVICES_MAX */
	long long next_ms;	 /* the next look at the GPUs */
	bool sync;		 /* the API is to be asked at the next look */
	bool recheck;		 /* and once more an interval later (after a registration) */
	char *published;	 /* the devices last published (JSON), NULL before */
	long long generation;	 /* the pool's, as last written */
	const char *metrics_dir; /* PROM_FILE's folder, at every look; NULL: none */
	bool metrics_failed;	 /* its last write failed (said once) */
	bool events;		 /* a Warning Event on the Node for a GPU of gpuvm's left out */
};

/* A tick of h2srv_run: look at the GPUs, publish where needed. */
void slices_tick(void *data);
/* What the slices hold in memory, freed (the slices on the API stay). */
void slices_fini(struct slices *s);

#endif
