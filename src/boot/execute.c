// SPDX-License-Identifier: MIT
/*
 * The executor. It follows the kernel's protocol for each device: write driver_override,
 * unbind from the current driver if any, write the address to drivers_probe, then read
 * the driver link back: a probe write reports success even when nothing bound, so only
 * the link is the truth.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "execute.h"
#include "kmod.h"
#include "rootio.h"
#include "util.h"

#define DEV "sys/bus/pci/devices/"

const char *dev_result_name(enum dev_result r)
{
	static const char *const n[] = {
		[RES_NOOP] = "noop",
		[RES_OK] = "ok",
		[RES_UNVERIFIED] = "unverified",
		[RES_HELD] = "held",
		[RES_RELEASED] = "released",
		[RES_FAILED] = "failed",
		[RES_REFUSED] = "refused",
	};
	return n[r];
}

struct step_ctx {
	const struct exec_opts *o;
	const struct pci_dev *d;
	struct exec_dev *ed;
	struct strpool *names;
	/* Both point to the inventory's names, the plan's targets, or names: */
	const char *drv; /* the driver as far as we know, "" none */
	const char *ovr; /* driver_override as far as we know */
	bool ovr_known;
};

static void step_init(struct step_ctx *c, const struct exec_opts *o, const struct pci_dev *d,
		      struct exec_dev *ed, struct strpool *names)
{
	c->o = o;
	c->d = d;
	c->ed = ed;
	c->names = names;
	c->drv = d->driver;
	c->ovr = d->override;
	c->ovr_known = true;
}

static void clear_error(struct exec_dev *ed)
{
	if (ed->error_owned)
		free((void *)ed->error);
	ed->error_owned = false;
	ed->error = "";
}

static void set_error(struct exec_dev *ed, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * The error in an allocation of its length; without memory, a fixed one (the result says).
 * gcc 12's -fanalyzer loses an allocation kept in an element of a calloc'd array and calls
 * it a leak: clear_error() and exec_result_free() free it (valgrind and ASan agree).
 */
#ifndef __clang__
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wanalyzer-malloc-leak"
#endif
static void set_error(struct exec_dev *ed, const char *fmt, ...)
{
	char buf[EXEC_ERROR_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	clear_error(ed);
	ed->error = strdup(buf);
	ed->error_owned = ed->error != NULL;
	if (!ed->error)
		ed->error = "a step failed (no memory to say more)";
}
#ifndef __clang__
#pragma GCC diagnostic pop
#endif

static int fail_step(struct step_ctx *c, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail_step(struct step_ctx *c, int err, const char *fmt, ...)
{
	char what[120];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	set_error(c->ed, "%s: %s", what,
		  err == -ETIMEDOUT ? "no answer in time (write still blocked)" : strerror(-err));
	c->ed->result = RES_FAILED;
	return err;
}

/* The driver bound now, in *drv: the inventory's name when unchanged, else one of names. */
static int current_driver(const struct pci_dev *d, struct strpool *names, const char **drv)
{
	char path[96], buf[DRIVER_LEN];
	int r;

	snprintf(path, sizeof(path), DEV "%s/driver", d->name);
	r = root_link_name(path, buf, sizeof(buf));
	if (r == -ENOENT) {
		*drv = "";
		return 0;
	}
	if (r < 0)
		return r;
	if (streq(buf, d->driver)) {
		*drv = d->driver;
		return 0;
	}
	*drv = strpool_add(names, buf);
	return *drv ? 0 : -ENOMEM;
}

/*
 * A device's writes in one step (driver_override, the old driver's unbind, drivers_probe),
 * handed to the writer as one sequence: it stops at the first that fails, and what the
 * kernel answers to each is judged here as it was write by write.
 */
enum wr_kind {
	WR_REMOVE_ID,
	WR_OVERRIDE,
	WR_UNBIND,
	WR_PROBE
};
#define SEQ_MAX 4

struct wr_seq {
	struct step_ctx *c;
	size_t n;
	struct root_wr w[SEQ_MAX];
	enum wr_kind kind[SEQ_MAX];
	const char *arg[SEQ_MAX]; /* the target, the driver: for the effect and the error */
	char path[SEQ_MAX][128];
	char id[16]; /* remove_id's "vvvv dddd" */
};

static void seq_add(struct wr_seq *q, enum wr_kind kind, const char *arg, const char *value)
{
	q->kind[q->n] = kind;
	q->arg[q->n] = arg;
	q->w[q->n].path = q->path[q->n];
	q->w[q->n].value = value;
	q->n++;
}

static void seq_override(struct wr_seq *q, const char *target)
{
	struct step_ctx *c = q->c;

	if (c->ovr_known && streq(c->ovr, target))
		return;
	snprintf(q->path[q->n], sizeof(q->path[0]), DEV "%s/driver_override", c->d->name);
	/* An empty line clears the override. */
	seq_add(q, WR_OVERRIDE, target, target[0] ? target : "\n");
}

static void seq_unbind(struct wr_seq *q, const char *driver)
{
	snprintf(q->path[q->n], sizeof(q->path[0]), "sys/bus/pci/drivers/%s/unbind", driver);
	seq_add(q, WR_UNBIND, driver, q->c->d->name);
}

static void seq_probe(struct wr_seq *q)
{
	strscpy(q->path[q->n], "sys/bus/pci/drivers_probe", sizeof(q->path[0]));
	seq_add(q, WR_PROBE, "", q->c->d->name);
}

/*
 * A vfio driver given the device's ID (vfio-pci.ids=, new_id) would take it back on the
 * reprobe: drop that dynamic ID first, where the driver has remove_id.
 */
static void seq_remove_id(struct wr_seq *q, const char *driver)
{
	snprintf(q->path[q->n], sizeof(q->path[0]), "sys/bus/pci/drivers/%s/remove_id", driver);
	if (!root_exists(q->path[q->n]))
		return;
	snprintf(q->id, sizeof(q->id), "%04x %04x", q->c->d->vendor, q->c->d->device);
	seq_add(q, WR_REMOVE_ID, driver, q->id);
}

/* What an error of a write means: true when the step goes on as if it had been done. */
static bool tolerated(enum wr_kind kind, int err)
{
	switch (kind) {
	case WR_REMOVE_ID: /* -ENODEV: it had no such ID, as usual */
		return err == -ENODEV || err == -EINVAL;
	case WR_UNBIND: /* -ENODEV: unbound meanwhile, as we wanted */
		return err == -ENODEV;
	case WR_PROBE: /* the kernel answers a probe that found no driver either way */
		return err == -ENODEV || err == -EINVAL || err == -ENXIO;
	case WR_OVERRIDE:
		break;
	}
	return false;
}

/* Write i was done (or its error tolerated): what we now know of the device. */
static void seq_done(struct wr_seq *q, size_t i)
{
	if (q->kind[i] == WR_OVERRIDE) {
		q->c->ovr = q->arg[i];
		q->c->ovr_known = true;
	} else if (q->kind[i] == WR_UNBIND) {
		q->c->drv = "";
	}
}

static int seq_fail(struct wr_seq *q, size_t i, int err)
{
	switch (q->kind[i]) {
	case WR_REMOVE_ID:
		return fail_step(q->c, err, "remove the ID %s from %s", q->id, q->arg[i]);
	case WR_OVERRIDE:
		return fail_step(q->c, err, "write '%s' to driver_override", q->arg[i]);
	case WR_UNBIND:
		return fail_step(q->c, err, "unbind from %s", q->arg[i]);
	case WR_PROBE:
		break;
	}
	return fail_step(q->c, err, "write to drivers_probe");
}

/* The sequence's writes, in order: 0, or the error of the first not tolerated. */
static int seq_run(struct wr_seq *q)
{
	size_t i = 0, at, k;
	int r;

	while (i < q->n) {
		r = root_write_seq(q->w + i, q->n - i, q->c->o->timeout_ms, &at);
		for (k = i; k < (r < 0 ? i + at : q->n); k++)
			seq_done(q, k);
		if (r == 0)
			return 0;
		i += at;
		if (!tolerated(q->kind[i], r))
			return seq_fail(q, i, r);
		seq_done(q, i++);
	}
	return 0;
}

static void seq_init(struct wr_seq *q, struct step_ctx *c)
{
	q->c = c;
	q->n = 0;
}

/* The group a bound device is in: given at probe by some IOMMUs (an ARM SMMU). */
static void read_group(struct step_ctx *c)
{
	char path[96], name[32], *end;
	long g;

	snprintf(path, sizeof(path), DEV "%s/iommu_group", c->d->name);
	if (root_link_name(path, name, sizeof(name)) < 0)
		return;
	g = strtol(name, &end, 10);
	if (end != name && *end == '\0' && g >= 0 && g <= 0x7fffffff)
		c->ed->group = (int)g;
}

/* Read the driver link back: the only truth about what bound. */
static void verify(struct step_ctx *c, bool (*ok)(const char *drv, const char *target),
		   const char *target, enum dev_result good)
{
	int r;

	if (!c->o->verify) {
		c->ed->after = "";
		c->ed->result = good == RES_HELD ? RES_HELD : RES_UNVERIFIED;
		return;
	}
	r = current_driver(c->d, c->names, &c->ed->after);
	if (r < 0) {
		fail_step(c, r, "read the driver link");
		return;
	}
	c->ed->verified = true;
	if (ok(c->ed->after, target)) {
		c->ed->result = good;
		if (target[0] && streq(c->ed->after, target))
			read_group(c);
	} else if (!target[0]) {
		c->ed->result = RES_FAILED;
		set_error(c->ed, "still on %s after the reprobe", c->ed->after);
	} else {
		c->ed->result = RES_FAILED;
		set_error(c->ed,
			  "probe did not bind %s: the driver is %s (the kernel log has the probe's error)",
			  target, c->ed->after[0] ? c->ed->after : "none");
	}
}

static bool is_target(const char *drv, const char *target)
{
	return streq(drv, target);
}

static bool is_none(const char *drv, const char *target)
{
	(void)target;
	return drv[0] == '\0';
}

static bool not_vfio(const char *drv, const char *target)
{
	(void)target;
	return !driver_is_vfio(drv);
}

static bool target_or_none(const char *drv, const char *target)
{
	return drv[0] == '\0' || streq(drv, target);
}

/*
 * Move the device to target: override, off its current driver, probe, and check the link
 * with ok(). Binding wants exactly the target; a reservation for a host driver that is not
 * loaded yet in the initramfs is also fine with no driver.
 */
static void move_to(struct step_ctx *c, const char *target,
		    bool (*ok)(const char *drv, const char *target))
{
	const char *drv = c->drv;
	struct wr_seq q;

	seq_init(&q, c);
	seq_override(&q, target);
	if (!streq(drv, target)) {
		if (drv[0])
			seq_unbind(&q, drv);
		seq_probe(&q);
	}
	if (seq_run(&q) < 0)
		return;
	verify(c, ok, target, RES_OK);
}

static void do_hold(struct step_ctx *c, const char *target)
{
	struct wr_seq q;

	seq_init(&q, c);
	seq_override(&q, target);
	/* Held means claimed by no driver, not even the target: a failed group stays whole. */
	if (c->drv[0])
		seq_unbind(&q, c->drv);
	if (seq_run(&q) < 0)
		return;
	verify(c, is_none, target, RES_HELD);
}

static void do_release(struct step_ctx *c)
{
	const char *drv = c->drv;
	struct wr_seq q;

	seq_init(&q, c);
	if (drv[0] && driver_is_vfio(drv))
		seq_remove_id(&q, drv);
	seq_override(&q, "");
	if (drv[0] && driver_is_vfio(drv))
		seq_unbind(&q, drv);
	seq_probe(&q);
	if (seq_run(&q) < 0)
		return;
	verify(c, not_vfio, "", RES_OK);
}

static void run_one(const struct plan *p, const struct inventory *inv, const struct exec_opts *o,
		    struct exec_result *res, size_t i, bool modules_ok)
{
	const struct plan_dev *pd = &p->dev[i];
	struct step_ctx c;

	step_init(&c, o, &inv->dev[i], &res->dev[i], &res->names);
	switch (pd->action) {
	case ACT_SKIP:
		return;
	case ACT_KEEP:
		if (pd->failed)
			c.ed->result = RES_RELEASED; /* on_error=release: it stays on the host */
		return;
	case ACT_BIND:
		if (!modules_ok) {
			set_error(c.ed, "%s could not be loaded", pd->target);
			c.ed->result = RES_FAILED;
			return;
		}
		move_to(&c, pd->target, is_target);
		break;
	case ACT_HOLD:
		do_hold(&c, pd->target);
		break;
	case ACT_UNBIND:
		do_release(&c);
		if (pd->failed && c.ed->result != RES_FAILED)
			c.ed->result = RES_RELEASED;
		break;
	case ACT_RESERVE:
		move_to(&c, pd->target, target_or_none);
		break;
	}
	res->n_changed++;
}

/* A group that did not bind whole: on_error decides what its members become. */
static void group_failed(const struct plan_group *g, const struct plan *p, const struct settings *s,
			 const struct inventory *inv, const struct exec_opts *o,
			 struct exec_result *res)
{
	size_t k;

	for (k = 0; k < g->n_members; k++) {
		size_t m = g->members[k];
		const struct plan_dev *pd = &p->dev[m];
		struct exec_dev *ed = &res->dev[m];
		struct step_ctx c;
		char err[EXEC_ERROR_LEN];

		if (pd->action != ACT_BIND)
			continue;
		if (ed->result == RES_NOOP && s->on_error == ON_ERROR_RELEASE) {
			ed->result = RES_RELEASED; /* never touched: it stays on the host */
			continue;
		}
		strscpy(err, ed->error[0] ? ed->error : "another function of its IOMMU group failed",
			sizeof(err));
		step_init(&c, o, &inv->dev[m], ed, &res->names);
		c.ovr_known = false; /* we may have written it: write again */
		/* No kernel under --root: take it that the bind unbound it. */
		if (!o->verify || current_driver(c.d, &res->names, &c.drv) < 0)
			c.drv = "";
		ed->result = RES_NOOP;
		clear_error(ed);
		if (s->on_error == ON_ERROR_HOLD)
			do_hold(&c, pd->target);
		else
			do_release(&c);
		if (ed->result != RES_FAILED)
			ed->result = s->on_error == ON_ERROR_HOLD ? RES_HELD : RES_RELEASED;
		set_error(ed, "group %d failed: %s; %s", g->id, err,
			  s->on_error == ON_ERROR_HOLD ? "held (on_error=hold)" :
							 "released (on_error=release)");
	}
}

int exec_group(const struct pci_dev *d, const struct exec_dev *ed)
{
	return d->group >= 0 ? d->group : ed->group;
}

/* An entry "vfioN" of a device's vfio-dev directory: N, when it has a char device. */
static int vfio_dev_entry(const char *name, void *data)
{
	struct exec_dev *ed = ((void **)data)[0];
	const struct pci_dev *d = ((void **)data)[1];
	char path[128], *end;
	long n;

	if (strncmp(name, "vfio", 4) != 0 || name[4] < '0' || name[4] > '9')
		return 0;
	n = strtol(name + 4, &end, 10);
	if (*end || n < 0 || n >= 1L << 20)
		return 0;
	/* The kernel gives the vfio device a devt only with CONFIG_VFIO_DEVICE_CDEV. */
	snprintf(path, sizeof(path), DEV "%s/vfio-dev/%s/dev", d->name, name);
	if (!root_exists(path))
		return 0;
	ed->vfio_cdev = (int)n;
	return 1;
}

/*
 * The vfio nodes of a device on a vfio driver, as sysfs shows them: its group's char device
 * (class vfio's device GROUP, /dev/vfio/GROUP; none in a kernel without CONFIG_VFIO_GROUP)
 * and its own cdev (vfio-dev/vfioN with a dev attribute, /dev/vfio/devices/vfioN: 6.6 and
 * later with CONFIG_VFIO_DEVICE_CDEV; from 6.1 vfio-dev/vfioN is there without one).
 */
static void read_vfio_nodes(const struct pci_dev *d, struct exec_dev *ed)
{
	char path[96];
	int g = exec_group(d, ed);
	void *data[] = { ed, (void *)d };

	if (g >= 0) {
		snprintf(path, sizeof(path), "sys/class/vfio/%d", g);
		ed->vfio_group = root_exists(path);
	}
	snprintf(path, sizeof(path), DEV "%s/vfio-dev", d->name);
	root_list(path, vfio_dev_entry, data);
}

/* The kernel has the PCI driver a module gives (vfio-pci: drivers/vfio-pci). */
static bool driver_registered(const char *module)
{
	char path[96];

	if (!valid_driver_name(module))
		return false;
	snprintf(path, sizeof(path), "sys/bus/pci/drivers/%s", module);
	return root_exists(path);
}

static int load_modules(const struct plan *p, const struct exec_opts *o, struct exec_result *res)
{
	size_t i;
	int ret = 0;

	for (i = 0; i < p->n_modules; i++) {
		struct exec_module *m = &res->modules[res->n_modules++];
		int loaded = 0;

		strscpy(m->name, p->modules[i], sizeof(m->name));
		if (!o->load_modules)
			continue;
		m->err = mod_load(m->name, &loaded, m->msg, sizeof(m->msg));
		m->loaded = loaded;
		if (m->err < 0 && driver_registered(m->name)) {
			/* No module directory (or a broken one), but the driver is in the kernel. */
			m->err = 0;
		}
		if (m->err < 0)
			ret = m->err;
	}
	return ret;
}

/* Whether a device's action writes anything. */
static bool acts(const struct plan_dev *pd)
{
	return pd->action != ACT_SKIP && pd->action != ACT_KEEP;
}

/*
 * apply --live: ask o->refuse before members are touched; refused, those the plan would
 * change are marked and left as they are. Returns true when refused.
 */
static bool refused(const struct plan *p, const struct exec_opts *o, struct exec_result *res,
		    const size_t *members, size_t n)
{
	char why[EXEC_ERROR_LEN];
	size_t k;
	bool any = false;

	for (k = 0; k < n; k++)
		any |= acts(&p->dev[members[k]]);
	if (!o->refuse || !any)
		return false;
	why[0] = '\0';
	if (!o->refuse(o->refuse_data, members, n, why, sizeof(why)))
		return false;
	for (k = 0; k < n; k++) {
		struct exec_dev *ed = &res->dev[members[k]];

		if (!acts(&p->dev[members[k]]))
			continue;
		ed->result = RES_REFUSED;
		set_error(ed, "%s", why[0] ? why : "in use");
	}
	return true;
}

int execute(const struct plan *p, const struct settings *s, const struct inventory *inv,
	    const struct exec_opts *o, struct exec_result *res)
{
	bool modules_ok, *done;
	size_t i, g, k;

	memset(res, 0, sizeof(*res));
	res->dev = calloc(inv->n ? inv->n : 1, sizeof(*res->dev));
	done = calloc(inv->n ? inv->n : 1, sizeof(*done));
	if (!res->dev || !done) {
		free(done);
		exec_result_free(res);
		return -ENOMEM;
	}
	res->n_dev = inv->n;
	for (i = 0; i < inv->n; i++) {
		res->dev[i].error = "";
		res->dev[i].after = inv->dev[i].driver;
		res->dev[i].group = -1;
		res->dev[i].vfio_cdev = -1;
	}
	modules_ok = load_modules(p, o, res) == 0;
	res->failed_modules = !modules_ok;

	/* VM groups first, whole: all or nothing. */
	for (g = 0; g < p->n_groups; g++) {
		const struct plan_group *pg = &p->group[g];
		bool failed = false;

		if (!pg->viable)
			continue;
		if (refused(p, o, res, pg->members, pg->n_members)) {
			for (k = 0; k < pg->n_members; k++)
				done[pg->members[k]] = true;
			continue;
		}
		for (k = 0; k < pg->n_members; k++) {
			size_t m = pg->members[k];

			done[m] = true;
			if (failed)
				continue; /* all or nothing: stop at the first failure */
			run_one(p, inv, o, res, m, modules_ok);
			failed = res->dev[m].result == RES_FAILED;
		}
		if (failed)
			group_failed(pg, p, s, inv, o, res);
	}
	for (i = 0; i < inv->n; i++)
		if (!done[i] && !refused(p, o, res, &i, 1))
			run_one(p, inv, o, res, i, modules_ok);
	free(done);

	for (i = 0; i < inv->n; i++) {
		enum dev_result r = res->dev[i].result;

		if (o->verify && driver_is_vfio(res->dev[i].after))
			read_vfio_nodes(&inv->dev[i], &res->dev[i]);

		if (!p->dev[i].selected)
			continue;
		if (r == RES_REFUSED)
			res->n_refused++;
		else if (p->dev[i].failed || r == RES_FAILED || r == RES_HELD || r == RES_RELEASED)
			res->n_failed++;
		else
			res->n_ok++;
	}
	res->n_failed += p->n_unidentified; /* the mode cannot be called reached */
	return 0;
}

void exec_result_free(struct exec_result *res)
{
	size_t i;

	for (i = 0; res->dev && i < res->n_dev; i++)
		clear_error(&res->dev[i]);
	free(res->dev);
	res->dev = NULL;
	strpool_free(&res->names);
}
