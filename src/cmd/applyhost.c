// SPDX-License-Identifier: MIT
/*
 * apply on a running host, plain or --live: the boot's flow (bootrun.c) with what only a
 * running host has, given as its hooks: --live's refusals of what is in use (live.c) and
 * the next boot's judgement of the host config's mode for the metrics file (nextboot.c).
 * The boot's own calls (--defer, --resume) never come here.
 */
#include <errno.h>
#include <stdlib.h>

#include "bootrun.h"
#include "cmd.h"
#include "hostreport.h"
#include "live.h"
#include "nextboot.h"
#include "state.h"

struct host_apply {
	const struct options *o;
	char before[32]; /* --live: the mode the host is in, before this run replaces the state file */
	struct live live;
	bool live_on;
	struct host_report more;
	struct nextboot *nb;
	struct nb_judgement verdict;
};

static int before(void *data, const struct prep *pp, struct exec_opts *eo, struct report *rep)
{
	struct host_apply *ha = data;

	if (!ha->o->live)
		return 0;
	if (live_init(&ha->live, &pp->p, &pp->inv, ha->o->wait_s, eo->timeout_ms) < 0)
		return -ENOMEM;
	ha->live_on = true;
	ha->live.rep.mode_before = ha->before[0] ? ha->before : NULL;
	eo->refuse = live_refuse;
	eo->refuse_data = &ha->live;
	host_report_init(&ha->more, &ha->live.rep, NULL, NULL);
	rep->more = &ha->more.more;
	return 0;
}

static void after(void *data, const struct exec_result *x)
{
	struct host_apply *ha = data;

	if (ha->live_on)
		live_release(&ha->live, x);
}

/*
 * What the next boot makes of the host config's mode, for the metrics file, as status
 * judges it (not at boot, where the boot loader's files are not there to read). Left out
 * when there is no memory for it.
 */
static void judge(void *data, struct report_run *run)
{
	struct host_apply *ha = data;
	struct nextboot *nb = malloc(sizeof(*nb));

	if (!nb)
		return;
	if (nextboot_judge(nb, NULL, ha->o->cmdline) < 0) {
		nextboot_fini(nb);
		free(nb);
		return;
	}
	nextboot_verdict(nb, "mode", nb->file_mode, &ha->verdict);
	ha->nb = nb;
	host_report_run(run, nb, &ha->verdict);
}

void apply_host_run(const struct options *o, struct outcome *out)
{
	struct host_apply ha = { .o = o };
	const struct apply_hooks h = { .data = &ha, .before = before, .after = after, .judge = judge };

	if (o->live && !state_top("mode", ha.before, sizeof(ha.before)))
		ha.before[0] = '\0';
	apply_run(o, &h, out);
	if (ha.live_on)
		live_fini(&ha.live);
	if (ha.nb)
		nextboot_fini(ha.nb);
	free(ha.nb);
}
