// SPDX-License-Identifier: MIT
/*
 * gpuvm status: the devices, IOMMU groups and IOMMU state as they are, and the last apply;
 * status --nfd: the same, as a Node Feature Discovery local feature file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cmd.h"
#include "hostreport.h"
#include "log.h"
#include "prepare.h"
#include "report.h"
#include "state.h"
#include "util.h"

/*
 * NFD's local source takes feature names with a namespace; feature.node.kubernetes.io/ is
 * the one it allows by default (an unprefixed name gets it added today, a behaviour NFD is
 * retiring: its DisableAutoPrefix feature gate drops such names).
 */
#define NFD_NS "feature.node.kubernetes.io/"
/*
 * NFD (v0.14 and later) ignores what follows "# +expiry-time=" once that time has passed:
 * the file in /etc outlives the boot it describes, so a file that gpuvm-nfd.timer (hourly)
 * stopped rewriting, gpuvm removed or its unit failing, drops its labels within 3 hours.
 */
#define NFD_EXPIRY_S (3L * 3600)

/*
 * One feature line of a string of the last state file, dflt when it has none (or null).
 * NFD takes KEY=VALUE lines whose value is a label value: a value that is not one (a
 * newline would forge a line, ESC reach a terminal, NFD refuse the rest) is not written;
 * a warning says so and the label is left out, so that NFD drops it rather than carry a
 * value gpuvm made up.
 */
static void nfd_state_line(const char *key, const char *dflt)
{
	char v[128], shown[96];
	int r = state_top_get(key, v, sizeof(v));

	if (r == -E2BIG || (r == 0 && !valid_label_value(v))) {
		term_safe(v, shown, sizeof(shown));
		log_warn("status --nfd: /%s: %s '%s' is not a label value (at most 63 of [-_.A-Za-z0-9], alphanumeric at both ends); %sgpuvm-%s left out",
			 STATE_PATH, key, shown, NFD_NS, key);
		return;
	}
	printf(NFD_NS "gpuvm-%s=%s\n", key, r == 0 ? v : dflt);
}

/* The mode and result of the last state file, and the GPUs on a vfio driver now. */
static void nfd(struct prep *pp, struct outcome *out)
{
	time_t until = time(NULL) + NFD_EXPIRY_S;
	struct tm tm;
	size_t i, vfio = 0;

	if (prep_plan(pp) < 0) {
		out->error = true;
		return;
	}
	for (i = 0; i < pp->inv.n; i++)
		if (pp->p.dev[i].selected && driver_is_vfio(pp->inv.dev[i].driver))
			vfio++;
	/* RFC 3339 in UTC, printed from the fields: strftime would bring musl's locale and time
	 * zone code (8 KiB) into the binary for this one line */
	if (!gmtime_r(&until, &tm) || tm.tm_year + 1900 > 9999) {
		log_err("status --nfd: the clock is past any date NFD reads (%lld)", (long long)until);
		out->error = true;
		return;
	}
	printf("# +expiry-time=%04d-%02d-%02dT%02d:%02d:%02dZ\n", tm.tm_year + 1900, tm.tm_mon + 1,
	       tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
	nfd_state_line("mode", "none");
	nfd_state_line("result", "not-run");
	printf(NFD_NS "gpuvm-vfio-gpus=%zu\n", vfio);
}

static void show_status(const struct options *o, struct outcome *out)
{
	struct prep pp = { 0 };
	struct report rep = { .command = "status",
			      .settings = &pp.s,
			      .inv = &pp.inv,
			      .source = &pp.src,
			      .state_path = "/" STATE_PATH };
	struct nextboot *nb;
	struct nb_judgement v, vg;
	struct host_report more;
	char *state;

	if (prep_settings(&pp, o->root, o->cmdline, o->config, SRC_LOOK, NULL) < 0 ||
	    prep_scan(&pp) < 0) {
		out->error = true;
		goto out;
	}
	if (o->nfd) {
		nfd(&pp, out);
		goto out;
	}
	nb = malloc(sizeof(*nb));
	if (!nb || nextboot_judge(nb, NULL, o->cmdline) < 0) {
		log_err("status: out of memory judging the next boot");
		out->error = true;
		if (nb)
			nextboot_fini(nb);
		free(nb);
		goto out;
	}
	/* the mode the host config gives: does the next boot read it? */
	nextboot_verdict(nb, "mode", nb->file_mode, &v);
	host_report_init(&more, NULL, nb, &v);
	/* and its selection, where the file or a boot line sets one */
	if (nb->file_gpus[0] || nextboot_line_word(nb, "gpus")) {
		nextboot_verdict(nb, "gpus", nb->file_gpus, &vg);
		more.vg = &vg;
	}
	rep.more = &more.more;
	state = state_read();
	rep.last_state = state;
	if (o->json)
		report_json(stdout, &rep);
	else
		report_text(stdout, &rep);
	free(state);
	nextboot_fini(nb);
	free(nb);
out:
	prep_fini(&pp);
}

static const char *check_options(const struct options *o)
{
	if (o->nfd && o->json)
		return "--nfd writes NFD's own format, not JSON: give one of --nfd and --json";
	return NULL;
}

const struct command cmd_status = {
	.name = "status",
	.opts = CMD_OPT_NFD | CMD_OPT_JSON,
	.help = "  status              devices, IOMMU groups, IOMMU state and the last apply\n"
		"  status --nfd        a Node Feature Discovery feature file\n",
	.check = check_options,
	.run = show_status,
};
