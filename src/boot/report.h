/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_REPORT_H
#define GPUVM_REPORT_H

#include <stdio.h>

#include "execute.h"
#include "inventory.h"
#include "plan.h"
#include "settings.h"
#include "source.h"
#include "json.h"

/* apply: what the metrics file (metrics.c) says beside the state file's document. */
struct report_run {
	const char *call;  /* "apply", "live", "defer", "resume" */
	long long time_ms; /* when the run ended: Unix time (CLOCK_REALTIME), in ms */
	/*
	 * the next boot's judgement of the host config's mode, worded by the tools' side
	 * (hostreport.h): its verdict, NULL where not judged (at boot), and the mode it runs
	 * (NULL when unknown)
	 */
	const char *next_verdict;
	const char *next_mode;
};

struct report;

/*
 * What a command on a running host adds to a document: apply --live's switch and its
 * holders, plan --in-use's look, status's next-boot judgement. The tools' side
 * (hostreport.c) renders it through these hooks, so that the boot's report knows nothing
 * of live switches or boot loaders; at boot there is none. A NULL hook adds nothing.
 */
struct report_more {
	const void *data; /* the tools' own, for the hooks */
	/* the mode the host is in, where it is not the settings' (a refused live switch) */
	const char *(*host_mode)(const struct report *r);
	void (*json_head)(struct json *j, const struct report *r);	       /* after "mode" */
	void (*json_device)(struct json *j, const struct report *r, size_t i); /* a device's end */
	void (*json_tail)(struct json *j, const struct report *r); /* the document's end */
	void (*text_groups)(FILE *f, const struct report *r);	   /* after the groups */
	void (*text_tail)(FILE *f, const struct report *r);	   /* the text's end */
};

struct report {
	const char *command; /* "plan", "apply", "status" */
	const struct settings *settings;
	const struct source *source; /* where the settings came from; may be NULL */
	const struct inventory *inv;
	const struct plan *plan; /* NULL for status */
	const char *last_state;	 /* status: the last state file's text, or NULL */
	const char *state_path;
	/* apply: */
	const struct exec_result *exec;
	const char *result; /* ok, partial, failed, noop */
	const char *kernel; /* the kernel release */
	unsigned long long elapsed_us;
	const struct report_more *more; /* a running host's additions, else NULL */
	const char *boot_id;		/* a boot call (--defer, --resume): this boot's id */
	const struct report_run *run;	/* apply: for the metrics file; the JSON leaves it out */
};

/*
 * Every JSON document gpuvm writes of its own begins so: an object, then "version" (gpuvm's)
 * and "command". The caller goes on with j and ends the object. (kubevirt --json is
 * KubeVirt's document, to merge into its CR: it has no such header.)
 */
void report_json_begin(struct json *j, FILE *f, const char *command);
/* The mode the host is in, as the state file's "mode" says it; NULL when unknown. */
const char *report_host_mode(const struct report *r);
void report_json(FILE *f, const struct report *r);
/*
 * Is device i pinned for VMs by the administrator: selected in a VM mode, not failed, not
 * held, and (after an apply) brought there or found there? The records under
 * /run/gpuvm/pinned (pinned.c) and the JSON's "pinned" say the same.
 */
bool report_pinned(const struct report *r, size_t i);
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
