/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_RUN_H
#define GPUVM_RUN_H

#include <stdbool.h>
#include <stddef.h>

/* What the command line asked for. */
struct options {
	const char *root;
	const char *cmdline;
	const char *config;
	bool json, quiet, verbose, dry_run;
	bool defer;			/* apply: hold and wait when config='s disk is not there */
	bool resume;			/* apply: go on with what a deferred apply left pending */
	bool nfd;			/* status: a Node Feature Discovery feature file */
	bool external;			/* kubevirt: externalResourceProvider: true */
	const char *mode;
	const char *cpu;
	const char *const *args;	/* the command's own arguments */
	size_t nargs;
};

enum command { CMD_PLAN, CMD_APPLY, CMD_STATUS, CMD_CMDLINE, CMD_CHECK, CMD_CONFIG, CMD_KUBEVIRT };

/* What happened, for main() to turn into an exit status. */
struct outcome {
	bool error;		/* the host could not be read, or memory ran out */
	bool usage;		/* an option's value was bad */
	bool not_ready;		/* check: the host is not ready for the mode */
	bool iommu_unusable;	/* a VM mode, devices selected, no active IOMMU */
	bool pending;		/* apply --defer/--resume: GPUs held, config='s disk awaited */
	size_t selected, ok, failed;
};

/* Run one command: settings, inventory, plan, and for apply execute and report. */
void run(const struct options *o, enum command c, struct outcome *out);

#endif
