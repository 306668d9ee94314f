/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_METRICS_H
#define GPUVM_METRICS_H

#include <stdio.h>

#include "report.h"

/*
 * The metrics file, under the root: a directory of gpuvm's own, so that node-exporter's
 * --collector.textfile.directory (or a container's hostPath) can name it and read nothing
 * else; /run survives switch_root, so the boot's file is there on the running host.
 */
#define METRICS_DIR "run/gpuvm/metrics"
#define METRICS_FILE "gpuvm.prom"

/*
 * The report in Prometheus' text format (version 0.0.4): every family with its HELP and
 * TYPE lines, in a fixed order; the devices in inventory order, the groups in the plan's.
 * Label values are escaped as the format asks (\\, \", \n) and hold no control character
 * and no byte that is not valid UTF-8 ('?' in its place).
 */
void metrics_render(FILE *f, const struct report *r);
/* Write it as the metrics file, atomically (temporary, rename); a failure is logged. */
void metrics_write(const struct report *r);

#endif
