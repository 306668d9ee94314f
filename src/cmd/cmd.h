/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_CMD_H
#define GPUVM_CMD_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The commands, one file each under src/cmd/: each is a short script over the shared
 * preparation (prepare.h: settings -> inventory -> plan) and says what happened in an
 * outcome, which main() alone turns into an exit status.
 */

/* What the command line asked for. */
struct options {
	const char *root;
	const char *cmdline;
	const char *config;
	bool json, quiet, verbose, dry_run;
	bool defer;	     /* apply: hold and wait when config='s disk is not there */
	bool resume;	     /* apply: go on with what a deferred apply left pending */
	const char *sysroot; /* apply --resume: where the real root is mounted (its config) */
	bool live;	     /* apply: switch a running host, refusing what is in use */
	unsigned wait_s;     /* apply --live --wait: how long to wait for a device in use */
	bool wait_given;
	bool nfd;		      /* status: a Node Feature Discovery feature file */
	bool external;		      /* kubevirt: the default, said (older scripts) */
	bool kubevirt_plugin;	      /* kubevirt: for KubeVirt's own device plugin */
	const char *pci_ids;	      /* kubevirt: the pci.ids to name devices from (a host path) */
	const char *vgpu_release;     /* check, kubevirt: the vGPU release (vm-vgpu's matrix) */
	const char *kubevirt_version; /* kubevirt: the KubeVirt the snippet is for ("1.9") */
	const char *mode;
	const char *cpu;
	const char *out;	 /* dump: the archive's path (a new file), NULL: stdout */
	bool in_use;		 /* plan: who holds what the plan would change (read-only) */
	const char *const *args; /* the command's own arguments */
	size_t nargs;
};

/* What happened, for main() to turn into an exit status. */
struct outcome {
	bool error;	     /* the host could not be read, or memory ran out */
	bool usage;	     /* an option's value was bad */
	bool not_ready;	     /* check: the host is not ready for the mode */
	bool iommu_unusable; /* a VM mode, devices selected, no active IOMMU */
	bool pending;	     /* apply --defer/--resume: GPUs held, config='s disk awaited */
	bool not_applied;    /* config set: written, but the next boot will not apply it */
	bool in_use;	     /* apply --live: a device in use was left as it was */
	size_t selected, ok, failed;
};

typedef void cmd_fn(const struct options *o, struct outcome *out);

cmd_fn cmd_apply;    /* bind as the mode asks; --defer, --resume (apply.c) */
cmd_fn cmd_plan;     /* what apply would do (plan.c) */
cmd_fn cmd_status;   /* the devices, groups and last apply; --nfd (status.c) */
cmd_fn cmd_check;    /* is the host ready for a mode (check.c) */
cmd_fn cmd_cmdline;  /* the kernel parameters a mode needs (cmdline.c) */
cmd_fn cmd_config;   /* config get | set (config.c) */
cmd_fn cmd_kubevirt; /* KubeVirt's permittedHostDevices (kubevirt.c) */
cmd_fn cmd_dump;     /* what gpuvm reads, as a --root tree in a tar (dump.c) */

struct plan;
/* A plan's counts as an outcome (plan, apply before it executes). */
void outcome_of_plan(struct outcome *out, const struct plan *p);

#endif
