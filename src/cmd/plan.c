// SPDX-License-Identifier: MIT
/* gpuvm plan (and apply --dry-run): what apply would do, changing nothing. */
#include <stdio.h>

#include "cmd.h"
#include "prepare.h"
#include "report.h"

void outcome_of_plan(struct outcome *out, const struct plan *p)
{
	out->iommu_unusable = p->iommu_unusable;
	out->selected = p->n_selected;
	out->failed = p->n_failed + p->n_unidentified;
	out->ok = p->n_selected - p->n_failed;
}

void cmd_plan(const struct options *o, struct outcome *out)
{
	struct prep pp = { 0 };
	struct report rep = {
		.command = "plan", .settings = &pp.s, .inv = &pp.inv, .source = &pp.src, .plan = &pp.p
	};

	if (prep_settings(&pp, o->root, o->cmdline, o->config, SRC_LOOK, NULL) < 0 ||
	    prep_scan(&pp) < 0 || prep_plan(&pp) < 0) {
		out->error = true;
		goto out;
	}
	report_log_plan(&pp.inv, &pp.p, &pp.s, true);
	outcome_of_plan(out, &pp.p);
	if (o->json)
		report_json(stdout, &rep);
	else
		report_text(stdout, &rep);
out:
	prep_fini(&pp);
}
