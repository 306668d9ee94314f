/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_PINNED_H
#define GPUVM_PINNED_H

#include "report.h"

/* Where the records live, beneath the root: one file a pinned device, named by its address. */
#define PINNED_DIR "run/gpuvm/pinned"

/*
 * The pinned set, published: a record for each device an apply pinned for VMs
 * (report_pinned), written again each run, and the record of each device pinned no more
 * removed. A device a live switch refused keeps its record as it is: it was left as it
 * was. Each failure is logged; the run goes on. -errno of the first, 0.
 */
int pinned_sync(const struct report *r);

#endif
