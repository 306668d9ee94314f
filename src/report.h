/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_REPORT_H
#define GPUVM_REPORT_H

#include <stdio.h>

#include "execute.h"
#include "inventory.h"
#include "live.h"
#include "plan.h"
#include "settings.h"
#include "confsource.h"
#include "json.h"
#include "nextboot.h"

/* apply: what the metrics file (metrics.c) says beside the state file's document. */
struct report_run {
	const char *call;  /* "apply", "live", "defer", "resume" */
	long long time_ms; /* when the run ended: Unix time (CLOCK_REALTIME), in ms */
	/* the next boot's judgement of the host config's mode; NULL where not judged (at boot) */
	const struct nextboot *next_boot;
	const struct nb_judgement *next_boot_verdict;
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
	const struct report_run *run;	/* apply: for the metrics file; the JSON leaves it out */
};

/*
 * Every JSON document gpuvm writes of its own begins so: an object, then "version" (gpuvm's)
 * and "command". The caller goes on with j and ends the object. (kubevirt --json is
 * KubeVirt's document, to merge into its CR: it has no such header.)
 */
void report_json_begin(struct json *j, FILE *f, const char *command);
/* "next boot: SAY" (nextboot_say's words, masked): the one line status, check and config set print. */
void report_next_boot_line(FILE *f, const char *say);
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
