// SPDX-License-Identifier: MIT
/*
 * gpuvm plan (and apply --dry-run): what apply would do, changing nothing; --mode, for
 * another mode; --in-use, and who holds what it would change, as apply --live looks before
 * each group (live.c), without a write: no unbindLock is asked.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cmd.h"
#include "hostreport.h"
#include "live.h"
#include "log.h"
#include "prepare.h"
#include "report.h"
#include "rootio.h"
#include "state.h"
#include "util.h"

/* Whether the plan changes one of members. */
static bool changes(const struct plan *p, const size_t *members, size_t n)
{
	size_t k;

	for (k = 0; k < n; k++)
		if (p->dev[members[k]].action != ACT_SKIP && p->dev[members[k]].action != ACT_KEEP)
			return true;
	return false;
}

/* One look, as apply --live's before it touches members: why, for each that would change. */
static void look(struct live *l, const struct plan *p, const size_t *members, size_t n)
{
	char why[EXEC_ERROR_LEN];
	size_t k;

	if (!changes(p, members, n) || !live_look(l, members, n, why, sizeof(why)))
		return;
	l->rep.n_in_use++;
	for (k = 0; k < n; k++)
		if (p->dev[members[k]].action != ACT_SKIP && p->dev[members[k]].action != ACT_KEEP)
			strscpy(l->in_use[members[k]], why, EXEC_ERROR_LEN);
}

/* The groups apply would touch, in its order (execute.c), then the functions outside them. */
static void look_all(struct live *l, const struct plan *p, const struct inventory *inv)
{
	bool *done = calloc(inv->n + 1, sizeof(*done));
	size_t g, k, i;

	if (!done)
		return;
	for (g = 0; g < p->n_groups; g++) {
		const struct plan_group *pg = &p->group[g];

		if (!pg->viable)
			continue;
		for (k = 0; k < pg->n_members; k++)
			done[pg->members[k]] = true;
		look(l, p, pg->members, pg->n_members);
	}
	for (i = 0; i < inv->n; i++)
		if (!done[i])
			look(l, p, &i, 1);
	free(done);
}

void plan_run(const struct options *o, struct outcome *out)
{
	struct prep pp = { 0 };
	struct report rep = {
		.command = "plan", .settings = &pp.s, .inv = &pp.inv, .source = &pp.src, .plan = &pp.p
	};
	struct live live = { 0 };
	struct host_report more;
	char before[32];
	bool live_on = false;

	root_deny_writes(); /* plan changes nothing, whatever it reaches */
	if (prep_settings(&pp, o->root, o->cmdline, o->config, SRC_LOOK, NULL) < 0) {
		out->error = true;
		goto out;
	}
	if (prep_mode(&pp, o->mode) < 0) {
		out->usage = true;
		goto out;
	}
	if (prep_scan(&pp) < 0 || prep_plan(&pp) < 0) {
		out->error = true;
		goto out;
	}
	report_log_plan(&pp.inv, &pp.p, &pp.s, true);
	outcome_of_plan(out, &pp.p);
	if (o->in_use) {
		if (live_init(&live, &pp.p, &pp.inv, 0, pp.s.write_timeout_ms) < 0) {
			log_err("out of memory");
			out->error = true;
			goto out;
		}
		live_on = true;
		live.rep.mode_before = state_top("mode", before, sizeof(before)) ? before : NULL;
		look_all(&live, &pp.p, &pp.inv);
		host_report_init(&more, &live.rep, NULL, NULL);
		rep.more = &more.more;
		out->in_use = live.rep.n_in_use > 0;
	}
	if (o->json)
		report_json(stdout, &rep);
	else
		report_text(stdout, &rep);
out:
	if (live_on)
		live_fini(&live);
	prep_fini(&pp);
}

const struct command cmd_plan = {
	.name = "plan",
	.opts = CMD_OPT_JSON | CMD_OPT_MODE | CMD_OPT_IN_USE,
	.help = "  plan [--mode M] [--in-use]\n"
		"                      what apply would do, changing nothing; --mode M: for mode\n"
		"                      M; --in-use: and who holds what it would change now, as\n"
		"                      apply --live would find it (read-only: nothing is written)\n",
	.run = plan_run,
};
