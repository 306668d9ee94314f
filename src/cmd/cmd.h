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
	bool unset;	     /* config get: the file does not set the key (its default said) */
	size_t selected, ok, failed;
};

typedef void cmd_fn(const struct options *o, struct outcome *out);

/*
 * The options a command may take beyond the global ones (--root, --cmdline, --config, -q,
 * -v): main.c's option table gives each its bit, and a command lists those it takes.
 */
enum cmd_opt {
	CMD_OPT_JSON = 1u << 0,
	CMD_OPT_DRY_RUN = 1u << 1,
	CMD_OPT_BOOT = 1u << 2, /* --defer, --resume, --sysroot */
	CMD_OPT_LIVE = 1u << 3, /* --live, --wait */
	CMD_OPT_MODE = 1u << 4,
	CMD_OPT_CPU = 1u << 5,
	CMD_OPT_NFD = 1u << 6,
	CMD_OPT_EXTERNAL = 1u << 7,
	CMD_OPT_PLUGIN = 1u << 8,
	CMD_OPT_PCI_IDS = 1u << 9,
	CMD_OPT_VGPU_RELEASE = 1u << 10,
	CMD_OPT_KV_VERSION = 1u << 11,
	CMD_OPT_OUT = 1u << 12,
	CMD_OPT_IN_USE = 1u << 13,
};

/*
 * A command, all in its own file: its name and operands, the options it takes, its lines
 * of --help, the rules between its options, and what runs it. main() parses, looks the
 * command up, checks, runs it and turns its outcome into the exit status.
 */
struct command {
	const char *name;
	const char *args; /* its operands, as usage errors name them ("get KEY | set KEY=VALUE") */
	size_t min_args, max_args;
	unsigned opts;	  /* enum cmd_opt: the options it takes */
	bool kmsg;	  /* it writes the kernel log (apply, but for --dry-run) */
	const char *help; /* its lines of --help's "Commands:" */
	/* The rules between its options: NULL, or what is wrong (a usage error). */
	const char *(*check)(const struct options *o);
	cmd_fn *run;
};

extern const struct command cmd_apply;	  /* bind as the mode asks; the boot's calls; --live */
extern const struct command cmd_plan;	  /* what apply would do; --in-use */
extern const struct command cmd_dump;	  /* what gpuvm reads, as a --root tree in a tar */
extern const struct command cmd_status;	  /* the devices, groups and last apply; --nfd */
extern const struct command cmd_check;	  /* is the host ready for a mode */
extern const struct command cmd_cmdline;  /* the kernel parameters a mode needs */
extern const struct command cmd_config;	  /* config get | set */
extern const struct command cmd_kubevirt; /* KubeVirt's permittedHostDevices */

/* plan's run, which apply --dry-run is too. */
void plan_run(const struct options *o, struct outcome *out);
/* apply on a running host, plain or --live (cmd/applyhost.c): the boot's flow and its hooks. */
void apply_host_run(const struct options *o, struct outcome *out);

struct plan;
/* A plan's counts as an outcome (plan, apply before it executes; bootrun.c). */
void outcome_of_plan(struct outcome *out, const struct plan *p);

#endif
