/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_REPORT_H
#define GPUVM_REPORT_H

#include <stdio.h>

#include "execute.h"
#include "inventory.h"
#include "plan.h"
#include "settings.h"
#include "confsource.h"
#include "nextboot.h"

struct inuse;

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

struct report {
	const char *command; /* "plan", "apply", "status" */
	const struct settings *settings;
	const struct source *source; /* where the settings came from; may be NULL */
	const struct inventory *inv;
	const struct plan *plan;	  /* NULL for status */
	const char *last_state;		  /* status: the last state file's text, or NULL */
	const struct nextboot *next_boot; /* status: what the next boot reads, or NULL */
	const struct nb_judgement *next_boot_verdict; /* status: its judgement of the mode */
	const char *state_path;
	/* apply: */
	const struct exec_result *exec;
	const char *result; /* ok, partial, failed, noop */
	const char *kernel; /* the kernel release */
	unsigned long long elapsed_us;
	const struct live_report *live; /* apply --live, else NULL */
	const char *boot_id;		/* a boot call (--defer, --resume): this boot's id */
};

void report_json(FILE *f, const struct report *r);
void report_text(FILE *f, const struct report *r);
/*
 * The cause of every outcome of a plan that is not a success, logged as errors (and what is
 * only a warning as warnings), so the report's "errors" says it; devices: each failing
 * device too (plan; apply tells them after execution).
 */
/* A warning for each viable IOMMU group of several GPUs (PLAN_SHARED_GROUP_FMT). */
void report_warn_shared_groups(const struct plan *p);
void report_log_plan(const struct inventory *inv, const struct plan *p, const struct settings *s,
		     bool devices);

#endif
