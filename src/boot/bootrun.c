// SPDX-License-Identifier: MIT
/*
 * The boot's apply: the plan, carried out (execute.c), its outcome logged and left in the
 * state file. At boot, --defer is the first call (the command line alone: its mode acts at
 * once, else the GPUs are held) and --resume the next ones: for config='s disk, and with
 * --sysroot once the real root is mounted, whose host config then decides. A running
 * host's apply (plain, --live) is the same flow with its hooks (cmd/applyhost.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bootrun.h"
#include "log.h"
#include "pending.h"
#include "state.h"
#include "rootio.h"
#include "util.h"
#include "writefile.h"

/* Here, not in cmd/plan.c, which the boot does not reach: plan and apply both ask it. */
void outcome_of_plan(struct outcome *out, const struct plan *p)
{
	out->iommu_unusable = p->iommu_unusable;
	out->selected = p->n_selected;
	out->failed = p->n_failed + p->n_unidentified;
	out->ok = p->n_selected - p->n_failed;
}

static const char *call_name(const struct options *o)
{
	if (o->defer)
		return "defer";
	if (o->resume)
		return "resume";
	return o->live ? "live" : "apply";
}

static const char *apply_result(const struct exec_result *x)
{
	if (x->n_refused && x->n_failed == 0)
		return "refused";
	if (x->n_failed == 0)
		return x->n_changed ? "ok" : "noop";
	return x->n_ok ? "partial" : "failed";
}

/* Where a device ended: its driver now, or where the plan sent it when that is unverified. */
static const char *driver_after(const struct exec_dev *ed, const struct plan_dev *pd)
{
	if (ed->result == RES_OK)
		return ed->after[0] ? ed->after : "no driver";
	return pd->target[0] ? pd->target : "the host driver";
}

/* The boot call a command line asks for: the first, the last, or none (a command's look). */
static enum source_policy boot_policy(const struct options *o)
{
	if (o->defer)
		return SRC_DEFER;
	return o->resume ? SRC_RESUME : SRC_LOOK;
}

/* The outcome: log_result() lines, which no flood of messages before them holds back. */
static void log_outcome(const struct inventory *inv, const struct plan *p,
			const struct exec_result *x, double ms)
{
	size_t i, gpus = 0, comp = 0;
	const char *target = "vfio-pci";

	for (i = 0; i < x->n_modules; i++)
		if (x->modules[i].err)
			log_result(LOG_ERR, "cannot load %s", x->modules[i].msg);
		else if (x->modules[i].loaded)
			log_result(LOG_INFO, "loaded %s", x->modules[i].name);
	for (i = 0; i < inv->n; i++) {
		const struct plan_dev *pd = &p->dev[i];
		const struct exec_dev *ed = &x->dev[i];
		bool bad = pd->failed || ed->result == RES_FAILED || ed->result == RES_HELD ||
			ed->result == RES_REFUSED || ed->result == RES_RELEASED;

		if (bad) {
			log_result(LOG_ERR, "%s: %s", inv->dev[i].name,
				   ed->error[0] ? ed->error : pd->reason);
			continue;
		}
		if (ed->result == RES_OK || ed->result == RES_UNVERIFIED)
			log_result(LOG_INFO, "%s: %s -> %s (%s%s)", inv->dev[i].name,
				   inv->dev[i].driver[0] ? inv->dev[i].driver : "no driver",
				   driver_after(ed, pd), action_name(pd->action),
				   ed->result == RES_UNVERIFIED ?
					   ", not verified: no kernel under --root" :
					   "");
		if (pd->action == ACT_SKIP)
			continue;
		if (pd->selected)
			gpus++;
		else if (pd->role == ROLE_COMPANION)
			comp++;
		if (pd->target[0])
			target = pd->target;
	}
	if (p->mode == MODE_VM_PASSTHROUGH)
		log_result(LOG_INFO,
			   "%s: %zu GPU%s and %zu companion function%s on %s, %zu failed, in %.1f ms",
			   mode_name(p->mode), gpus, gpus == 1 ? "" : "s", comp,
			   comp == 1 ? "" : "s", target, x->n_failed, ms);
	else
		log_result(LOG_INFO,
			   "%s: %zu GPU%s in place for the host driver, %zu failed, in %.1f ms",
			   mode_name(p->mode), gpus, gpus == 1 ? "" : "s", x->n_failed, ms);
}

/* The devices a hold plan holds, into held (SOURCE_HELD_MAX at most); their number. */
static size_t held_by(const struct inventory *inv, const struct plan *p, struct pci_addr *held)
{
	size_t i, n = 0;

	for (i = 0; i < inv->n && n < SOURCE_HELD_MAX; i++)
		if (p->dev[i].selected && streq(p->dev[i].target, HOLD_OVERRIDE))
			held[n++] = inv->dev[i].addr;
	return n;
}

/* A hold plan's failures: the devices it could not hold. */
static size_t holds_failed(const struct plan *p, const struct exec_result *x)
{
	size_t i, n = 0;

	for (i = 0; i < p->n_dev; i++)
		if (p->dev[i].selected && x->dev[i].result == RES_FAILED)
			n++;
	return n;
}

/*
 * The boot's first call, about to hold: the record the next calls act on (config='s wait,
 * or the root's), written before anything is held. A hold no record names would outlast
 * the boot: no later call would know to decide or release it. 0, or the write's -errno.
 */
static int record_hold(const struct source *src, const struct inventory *inv, const struct plan *p)
{
	struct pci_addr held[SOURCE_HELD_MAX];
	size_t n = held_by(inv, p, held);

	if (src->status == SRC_WAITING)
		return pending_write(src, held, n);
	return root_pending_write(held, n, NULL);
}

/*
 * The record could not be written: hold nothing, and decide now from the kernel command
 * line and the defaults, as with config_timeout=0 (a hold an earlier call made is released).
 */
static int unhold(struct prep *pp, int err)
{
	log_err("cannot write /run/gpuvm/%s: %s; nothing is held: the kernel command line and the defaults decide now",
		pp->src.status == SRC_WAITING ? "pending" : "root-pending", wf_strerror(err));
	pp->src.status = SRC_FALLBACK;
	plan_free(&pp->p);
	pp->planned = false;
	return prep_plan(pp);
}

/* What the first call held, and for what. */
static void say_held(const struct source *src, const struct inventory *inv, const struct plan *p)
{
	struct pci_addr held[SOURCE_HELD_MAX];
	size_t n = held_by(inv, p, held);

	if (src->status == SRC_WAITING)
		log_result(LOG_WARNING,
			   "config=%s: not there yet; %zu GPU%s held, waiting up to %u s for it",
			   src->spec, n, n == 1 ? "" : "s", src->timeout_s);
	else if (n)
		log_result(LOG_INFO,
			   "%zu GPU%s held until the host config is read from the root at the end of the initramfs",
			   n, n == 1 ? "" : "s");
	else
		log_result(LOG_INFO,
			   "nothing to hold (%zu selected, each on a driver already): the host config is read from the root at the end of the initramfs",
			   p->n_selected);
}

/*
 * The boot's first call applied the command line's mode: the last call (--resume
 * --sysroot) applies the root's config over it.
 */
static void record_root(const char *result)
{
	int r = root_pending_write(NULL, 0, result);

	if (r < 0)
		log_err("cannot write /%s: %s; the root's config is not read at this boot",
			ROOT_PENDING_PATH, wf_strerror(r));
}

/* The kernel's boot_id, which tells this boot's records from an earlier one's. */
static void read_boot_id(char *buf, size_t size)
{
	if (root_read("proc/sys/kernel/random/boot_id", buf, size) <= 0)
		buf[0] = '\0';
	rstrip(buf);
}

/* One apply call: what it was asked, and what each step leaves for the next. */
struct call {
	const struct options *o;
	const struct apply_hooks *h;
	unsigned long long t0; /* CLOCK_MONOTONIC, at the call's start */
	struct prep pp;
	struct exec_result x;
	struct exec_opts eo;
	struct report rep;
	struct report_run run;
	char boot_id[64];
	bool waiting;	 /* the plan holds: config='s disk or the root's config awaited */
	bool unrecorded; /* the first call could not write its record: nothing held */
};

/* apply --resume with nothing pending, or with the root's record before --sysroot names it. */
static bool nothing_to_resume(const struct options *o)
{
	if (!o->resume || root_exists("run/gpuvm/pending"))
		return false;
	if (!root_exists(ROOT_PENDING_PATH)) {
		log_debug("apply --resume: nothing is pending");
		return true;
	}
	if (!o->sysroot) {
		log_debug("apply --resume: the root's config decides, once --sysroot names it");
		return true;
	}
	return false;
}

/*
 * Settings, scan and plan; the first call's hold recorded before anything is held. 0, 1
 * when --resume is still waiting (nothing changes), -1 on an error (logged).
 */
static int plan_call(struct call *c, struct outcome *out)
{
	const struct options *o = c->o;
	struct prep *pp = &c->pp;
	int r;

	if (prep_settings(pp, o->root, o->cmdline, o->config, boot_policy(o), o->sysroot) < 0)
		return -1;
	if (pp->src.status == SRC_WAITING && o->resume) {
		out->pending = true; /* still waiting: nothing changes */
		return 1;
	}
	if (prep_scan(pp) < 0 || prep_plan(pp) < 0)
		return -1;
	if (o->defer && (pp->src.status == SRC_WAITING || pp->src.status == SRC_HOLD)) {
		r = record_hold(&pp->src, &pp->inv, &pp->p);
		c->unrecorded = r < 0;
		if (c->unrecorded && unhold(pp, r) < 0)
			return -1;
	}
	report_log_plan(&pp->inv, &pp->p, &pp->s, false);
	outcome_of_plan(out, &pp->p);
	out->pending = pp->src.status == SRC_WAITING;
	c->waiting = out->pending || pp->src.status == SRC_HOLD;
	return 0;
}

/* The plan executed, with a running host's hooks around it. 0, or -1 (logged). */
static int carry_out(struct call *c)
{
	const struct apply_hooks *h = c->h;
	int r;

	c->eo.timeout_ms = c->pp.s.write_timeout_ms;
	if (h && h->before && h->before(h->data, &c->pp, &c->eo, &c->rep) < 0) {
		log_err("out of memory");
		return -1;
	}
	r = execute(&c->pp.p, &c->pp.s, &c->pp.inv, &c->eo, &c->x);
	if (r < 0) {
		log_err("cannot apply the plan: %s", strerror(-r));
		return -1;
	}
	if (h && h->after)
		h->after(h->data, &c->x);
	c->rep.result = c->waiting ? "waiting" : apply_result(&c->x);
	c->rep.elapsed_us = clock_us(CLOCK_MONOTONIC) - c->t0;
	return 0;
}

/* A pending record this call is done with, removed. */
static void remove_records(const struct call *c)
{
	const struct options *o = c->o;
	int r;

	if (c->pp.src.pending || o->defer || o->resume) {
		r = pending_remove();
		if (r < 0)
			log_err("cannot remove /run/gpuvm/pending: %s", wf_strerror(r));
	}
	if (c->pp.src.status == SRC_ROOT) {
		r = root_pending_remove();
		if (r < 0)
			log_err("cannot remove /%s: %s", ROOT_PENDING_PATH, wf_strerror(r));
	}
}

/* The outcome told (what is held, or where each device went), and the records it leaves. */
static void tell_outcome(const struct call *c, const struct outcome *out)
{
	const struct options *o = c->o;
	const struct prep *pp = &c->pp;
	const struct exec_result *x = &c->x;
	double ms = (double)c->rep.elapsed_us / 1000.0;

	if (out->pending || (o->defer && pp->src.status == SRC_HOLD)) {
		say_held(&pp->src, &pp->inv, &pp->p);
		return;
	}
	log_outcome(&pp->inv, &pp->p, x, ms);
	if (o->defer && pp->src.status == SRC_CMDLINE) {
		record_root(c->rep.result);
		return;
	}
	if (x->n_refused)
		log_result(LOG_WARNING,
			   "live switch to %s: %zu selected device%s in use, left as %s (the next boot applies the mode, or apply --live again once free)",
			   mode_name(pp->s.mode), x->n_refused, x->n_refused == 1 ? "" : "s",
			   x->n_refused == 1 ? "it was" : "they were");
	remove_records(c);
}

/*
 * The state file, and the metrics with it. The first call applied the command line's mode
 * and changed the host, and the root's config changes nothing over it: the records stay
 * the first call's, which say what this boot did (a last call that found all in place
 * would say "noop").
 */
static void keep_state(struct call *c)
{
	const struct apply_hooks *h = c->h;

	if (c->pp.src.status == SRC_ROOT && streq(c->pp.src.first_result, "ok") && c->x.n_changed == 0) {
		log_info("config: the root's config changes nothing over the kernel command line: the state file stays the first call's");
		return;
	}
	if (h && h->judge)
		h->judge(h->data, &c->run);
	c->run.time_ms = (long long)clock_ms(CLOCK_REALTIME); /* the metrics: when the run ended */
	c->rep.run = &c->run;
	state_write(&c->rep);
}

/* What the execution did, for the exit status. */
static void count_outcome(const struct call *c, struct outcome *out)
{
	out->ok = c->x.n_ok;
	out->failed = c->x.n_failed;
	if (c->pp.src.status == SRC_HOLD)
		out->failed = holds_failed(&c->pp.p, &c->x); /* held is what this call is for */
	out->in_use = c->x.n_refused > 0;
	out->error = c->unrecorded; /* the boot's hooks say so: this call could not hold */
}

void apply_run(const struct options *o, const struct apply_hooks *h, struct outcome *out)
{
	struct call call = { .o = o,
			     .h = h,
			     .t0 = clock_us(CLOCK_MONOTONIC),
			     .eo = { .load_modules = !o->root, .verify = !o->root },
			     .run = { .call = call_name(o) } };
	struct call *c = &call;
	int r;

	c->rep = (struct report){ .command = "apply",
				  .settings = &c->pp.s,
				  .inv = &c->pp.inv,
				  .source = &c->pp.src,
				  .plan = &c->pp.p,
				  .exec = &c->x,
				  .kernel = c->pp.kver };
	if (nothing_to_resume(o))
		return;
	if (o->defer || o->resume) {
		read_boot_id(c->boot_id, sizeof(c->boot_id));
		c->rep.boot_id = c->boot_id;
	}
	r = plan_call(c, out);
	if (r == 0)
		r = carry_out(c);
	if (r == 0) {
		tell_outcome(c, out);
		keep_state(c);
		count_outcome(c, out);
		if (o->json)
			report_json(stdout, &c->rep);
	}
	out->error |= r < 0;
	exec_result_free(&c->x);
	prep_fini(&c->pp);
}
