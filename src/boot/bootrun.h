/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_BOOTRUN_H
#define GPUVM_BOOTRUN_H

#include "cmd/cmd.h"
#include "execute.h"
#include "prepare.h"
#include "report.h"

/*
 * What a running host's apply adds to the boot's flow (cmd/applyhost.c: apply --live's
 * refusals, the next boot's judgement for the metrics file). The boot's calls have none:
 * apply_run(o, NULL, out).
 */
struct apply_hooks {
	void *data;
	/* Before execute(): eo's refusal and rep's additions. 0, or -ENOMEM. */
	int (*before)(void *data, const struct prep *pp, struct exec_opts *eo, struct report *rep);
	/* After execute(), before the outcome is told. */
	void (*after)(void *data, const struct exec_result *x);
	/* The state file is about to be written: the metrics' words of the next boot. */
	void (*judge)(void *data, struct report_run *run);
};

/* apply, and the boot's calls (--defer, --resume): plan, execute, log, the state file. */
void apply_run(const struct options *o, const struct apply_hooks *h, struct outcome *out);

#endif
