// SPDX-License-Identifier: MIT
/*
 * The plugin's metrics, a Prometheus text file for node-exporter's textfile collector (as
 * gpuvm's own /run/gpuvm/metrics/gpuvm.prom): which GPUs the slices publish and, for each
 * NVIDIA GPU left out, why. A device left out is visible here and in the log, never as a
 * device of the slices (doc/dra.md, "What is published").
 */
#include <stdio.h>
#include <stdlib.h>

#include "promfile.h"
#include "vfiodev.h"

char *prom_text(const struct vfio_gpu *g, size_t n)
{
	char *text = NULL;
	size_t len = 0, i, ready = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	for (i = 0; i < n; i++)
		ready += g[i].ready;
	fputs("# HELP gpuvm_dra_devices NVIDIA GPUs of the node, published or not.\n"
	      "# TYPE gpuvm_dra_devices gauge\n",
	      f);
	fprintf(f, "gpuvm_dra_devices{state=\"published\"} %zu\n", ready);
	fprintf(f, "gpuvm_dra_devices{state=\"unpublished\"} %zu\n", n - ready);
	fputs("# HELP gpuvm_dra_device_published A GPU the node's ResourceSlices offer, and which setting pinned it.\n"
	      "# TYPE gpuvm_dra_device_published gauge\n",
	      f);
	for (i = 0; i < n; i++)
		if (g[i].ready)
			fprintf(f, "gpuvm_dra_device_published{address=\"%s\",device=\"%s\",pinned_by=\"%s\"} 1\n",
				g[i].bdf, g[i].name, g[i].pin_sel);
	fputs("# HELP gpuvm_dra_device_unpublished An NVIDIA GPU left out of the ResourceSlices, and why (the log says more).\n"
	      "# TYPE gpuvm_dra_device_unpublished gauge\n",
	      f);
	for (i = 0; i < n; i++)
		if (!g[i].ready)
			fprintf(f, "gpuvm_dra_device_unpublished{address=\"%s\",device=\"%s\",reason=\"%s\"} 1\n",
				g[i].bdf, g[i].name, g[i].reason ? g[i].reason : "unknown");
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}
