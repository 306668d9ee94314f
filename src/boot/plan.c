// SPDX-License-Identifier: MIT
/*
 * The plan: a pure function of the settings and the inventory. It decides, for every
 * PCI function, one action, the driver it is meant for and why. No I/O happens here.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "plan.h"
#include "util.h"

const char *action_name(enum action a)
{
	static const char *const n[] = {
		[ACT_SKIP] = "skip",	 [ACT_KEEP] = "keep",	    [ACT_BIND] = "bind",
		[ACT_UNBIND] = "unbind", [ACT_RESERVE] = "reserve", [ACT_HOLD] = "hold",
	};
	return n[a];
}

const char *role_name(enum role r)
{
	static const char *const n[] = {
		[ROLE_NONE] = "other",	      [ROLE_GPU] = "gpu",
		[ROLE_NVSWITCH] = "nvswitch", [ROLE_COMPANION] = "companion",
		[ROLE_BRIDGE] = "bridge",     [ROLE_BLOCKER] = "blocker",
		[ROLE_EXCLUDED] = "excluded", [ROLE_VF] = "vf",
		[ROLE_HOST] = "host",	      [ROLE_UNIDENTIFIED] = "unidentified",
	};
	return n[r];
}

bool driver_is_vfio(const char *name)
{
	return streq(name, "vfio-pci") || strstr(name, "vfio_pci") || strstr(name, "vfio-pci");
}

bool override_is_ours(const char *override)
{
	return driver_is_vfio(override) || streq(override, HOLD_OVERRIDE);
}

static inline __attribute__((always_inline)) bool id_matches(const struct settings *s,
							     const struct pci_dev *d)
{
	size_t i;

	if (s->n_ids == 0)
		return d->vendor == PCI_VENDOR_NVIDIA &&
			(pci_class_is_gpu(d->class) || pci_class_is_nvswitch(d->class) ||
			 d->class == 0xffffff); /* an unidentified one's class file failed too */
	for (i = 0; i < s->n_ids; i++)
		if (pci_id_match(&s->ids[i], d->vendor, d->device))
			return true;
	return false;
}

/* The key that selects what the mode takes, as the reasons name it. */
static const char *selected_by(const struct settings *s)
{
	if (s->n_gpus && s->mode != MODE_CONTAINER)
		return "gpus=";
	return s->n_ids ? "ids=" : "the default match";
}

bool plan_group_shared(const struct plan_group *g)
{
	return g->viable && !g->pending && g->n_gpus > 1;
}

bool plan_interesting(const struct pci_dev *d, const void *settings)
{
	return d->vendor == PCI_VENDOR_NVIDIA || d->unidentified || id_matches(settings, d);
}

/* Why the host needs d whatever ids= says, or NULL. */
static const char *host_needs(const struct pci_dev *d)
{
	if (d->host_use == HOST_USE_ROOT)
		return "the root file system's disk is behind it";
	if (d->host_use == HOST_USE_CONSOLE)
		return "a console= serial port is behind it";
	return pci_class_host_needs(d->vendor, d->class);
}

static bool excluded(const struct settings *s, const struct pci_dev *d)
{
	size_t i;

	for (i = 0; i < s->n_exclude; i++)
		if (pci_addr_cmp(&s->exclude[i], &d->addr) == 0)
			return true;
	return false;
}

static bool is_nvswitch(const struct pci_dev *d)
{
	return d->vendor == PCI_VENDOR_NVIDIA && pci_class_is_nvswitch(d->class);
}

static void drop_reason(struct plan_dev *pd)
{
	if (pd->reason_owned)
		free((void *)pd->reason);
	pd->reason = NULL;
	pd->reason_owned = false;
}

static void decide(struct plan_dev *pd, enum action a, const char *target, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * A reason without conversions is its format, a literal: most devices share one ("not
 * selected", "bridge: never bound"), and 10,000 of them cost no copy. Others are formatted
 * into an allocation of their length; NULL when that fails, which plan_build() reports.
 * gcc 12's -fanalyzer loses an allocation kept in an element of a calloc'd array and calls
 * it a leak: the next decide() and plan_free() free it (valgrind and ASan agree).
 */
#ifndef __clang__
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wanalyzer-malloc-leak"
#endif
static void decide(struct plan_dev *pd, enum action a, const char *target, const char *fmt, ...)
{
	char buf[PLAN_REASON_LEN];
	va_list ap;

	pd->action = a;
	pd->target = target ? target : "";
	drop_reason(pd);
	pd->listed = true;
	if (!strchr(fmt, '%')) {
		pd->reason = fmt;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	pd->reason = strdup(buf);
	pd->reason_owned = pd->reason != NULL;
}
#ifndef __clang__
#pragma GCC diagnostic pop
#endif

static const char *drv(const struct pci_dev *d)
{
	return d->driver[0] ? d->driver : "no driver";
}

/* The first pass: what each device is, before groups are looked at. */
static void classify(struct plan *p, const struct settings *s, const struct inventory *inv)
{
	size_t i;

	for (i = 0; i < inv->n; i++) {
		const struct pci_dev *d = &inv->dev[i];
		struct plan_dev *pd = &p->dev[i];

		pd->role = ROLE_NONE;
		if (d->partial) {
			/*
			 * Known by its IDs only: the scan found it cannot matter (no selection
			 * takes it, it is in no slot or group of one that does). Not selected,
			 * and that is all (p->dev is zeroed: no reason to drop).
			 */
			pd->action = ACT_SKIP;
			pd->target = "";
			pd->reason = "not selected";
			pd->listed = d->vendor == PCI_VENDOR_NVIDIA;
			continue;
		}
		decide(pd, ACT_SKIP, NULL, "not selected");
		pd->listed = d->vendor == PCI_VENDOR_NVIDIA;
		if (d->unidentified) {
			/* Judged again once the selection is known (judge_unidentified). */
			pd->role = ROLE_UNIDENTIFIED;
			decide(pd, ACT_SKIP, NULL,
			       "not identified: its uevent could not be used (%s); never taken",
			       strerror(d->unread_errno));
			continue;
		}
		if (pci_class_is_bridge(d->class)) {
			pd->role = ROLE_BRIDGE;
			decide(pd, ACT_SKIP, NULL, "bridge: never bound");
			pd->listed = false;
			continue;
		}
		if (host_needs(d)) {
			/* Listed, and so named, where the selection would have taken it. */
			pd->role = ROLE_HOST;
			if (id_matches(s, d) && !excluded(s, d)) {
				decide(pd, ACT_SKIP, NULL,
				       "%s matches it, but the host needs it (%s): never bound",
				       s->n_ids ? "ids=" : "the default match", host_needs(d));
			} else {
				decide(pd, ACT_SKIP, NULL, "the host needs it (%s): never bound",
				       host_needs(d));
				pd->listed = false;
			}
			continue;
		}
		if (excluded(s, d)) {
			/* Any device, not only a matching one: an excluded companion blocks its group. */
			pd->role = ROLE_EXCLUDED;
			decide(pd, ACT_SKIP, NULL, "excluded by exclude= (%s)",
			       settings_source(s, KEY_EXCLUDE));
			continue;
		}
		if (!id_matches(s, d))
			continue;
		if (d->is_vf) {
			pd->role = ROLE_VF;
			decide(pd, ACT_SKIP, NULL,
			       "SR-IOV virtual function: left to its physical function's driver");
			continue;
		}
		if (is_nvswitch(d) && (!s->nvswitch_vm || s->mode != MODE_VM_PASSTHROUGH)) {
			pd->role = ROLE_NVSWITCH;
			if (driver_is_vfio(d->driver) || driver_is_vfio(d->override))
				decide(pd, ACT_UNBIND, NULL,
				       "NVSwitch stays on the host for Fabric Manager: off %s",
				       d->driver[0] ? d->driver : "its vfio driver_override");
			else
				decide(pd, ACT_SKIP, NULL,
				       "NVSwitch stays on the host for Fabric Manager (nvswitch=host)");
			continue;
		}
		pd->role = is_nvswitch(d) ? ROLE_NVSWITCH : ROLE_GPU;
		if (pd->role == ROLE_GPU && s->mode != MODE_CONTAINER &&
		    !settings_gpus_pick(s, &d->addr, d->numa)) {
			pd->pick = PICK_OUT; /* decided with the host's side (picked_out) */
			continue;
		}
		pd->selected = true;
		p->n_selected++;
	}
}

static bool selected(const struct plan_dev *pd)
{
	return pd->selected;
}

/* The functions of a selected device's slot: companions that go where the GPU goes. */
static bool companion_of_selected(const struct plan *p, const struct inventory *inv, size_t i,
				  size_t *gpu)
{
	size_t j;

	for (j = i; j > 0 && pci_same_slot(&inv->dev[j - 1].addr, &inv->dev[i].addr); j--)
		;
	for (; j < inv->n && pci_same_slot(&inv->dev[j].addr, &inv->dev[i].addr); j++)
		if (j != i && selected(&p->dev[j]) && inv->dev[j].group == inv->dev[i].group) {
			*gpu = j;
			return true;
		}
	return false;
}

static bool can_be_companion(const struct pci_dev *d, const struct plan_dev *pd)
{
	/* An unidentified function, or one the host needs, is never taken along (its role). */
	return !d->is_vf && !pd->selected && !d->unidentified &&
		(pd->role == ROLE_NONE || pd->role == ROLE_COMPANION);
}

/* A VM mode that cannot finish for this device: on_error decides. */
static void fail(struct plan_dev *pd, const struct pci_dev *d, const struct settings *s,
		 const char *target, const char *why)
{
	pd->failed = true;
	if (s->on_error == ON_ERROR_HOLD) {
		decide(pd, ACT_HOLD, target, "%s: held, claimed by no driver (on_error=hold)", why);
	} else if (driver_is_vfio(d->driver) || override_is_ours(d->override)) {
		decide(pd, ACT_UNBIND, NULL, "%s: released to the host driver (on_error=release)", why);
	} else {
		decide(pd, ACT_KEEP, NULL, "%s: left on %s (on_error=release)", why, drv(d));
	}
}

static const char *vfio_target(const struct pci_dev *d)
{
	return d->variant[0] ? d->variant : "vfio-pci";
}

static void want(struct plan_dev *pd, const struct pci_dev *d, enum action a, const char *target,
		 const char *why)
{
	if (streq(d->driver, target) && streq(d->override, target))
		decide(pd, ACT_KEEP, target, "%s; already on %s with driver_override set", why, target);
	else
		decide(pd, a, target, "%s", why);
}

static int add_module(struct plan *p, const char *name)
{
	size_t i;

	for (i = 0; i < p->n_modules; i++)
		if (streq(p->modules[i], name))
			return 0;
	if (p->n_modules == PLAN_MODULES_MAX)
		return -E2BIG;
	strscpy(p->modules[p->n_modules++], name, DRIVER_LEN);
	return 0;
}

static int group_new(struct plan *p, int id)
{
	struct plan_group *g = realloc(p->group, (p->n_groups + 1) * sizeof(*g));

	if (!g)
		return -ENOMEM;
	p->group = g;
	g = &p->group[p->n_groups++];
	memset(g, 0, sizeof(*g));
	g->id = id;
	g->viable = true;
	return 0;
}

static void describe_group_why(char *why, size_t size, const struct plan_group *g,
			       const struct plan *p, const struct inventory *inv)
{
	const char *more = g->n_blocked + g->n_foreign > 1 ? ", among others" : "";
	const struct pci_dev *b;

	if (!g->n_blocked) {
		snprintf(why, size,
			 "IOMMU group %d is not viable: its member %s is not a PCI function this host lists (vfio takes a group whole)%s",
			 g->id, g->foreign[0].name, more);
		return;
	}
	b = &inv->dev[g->blocked_by[0]];
	if (b->unidentified)
		snprintf(why, size, "IOMMU group %d is not viable: %s could not be identified (%s)%s",
			 g->id, b->name, strerror(b->unread_errno), more);
	else if (p->dev[g->blocked_by[0]].role == ROLE_HOST)
		snprintf(why, size,
			 "IOMMU group %d is not viable: %s (%04x:%04x, %s) is needed by the host (%s)%s",
			 g->id, b->name, b->vendor, b->device, drv(b), host_needs(b), more);
	else
		snprintf(why, size,
			 "IOMMU group %d is not viable: %s (%04x:%04x, %s) is neither selected nor a function of a selected GPU's slot%s",
			 g->id, b->name, b->vendor, b->device, drv(b), more);
}

/* The members of group id that are no PCI function of the listing: one run (read in order). */
static void group_foreign(struct plan_group *g, const struct inventory *inv)
{
	size_t f;

	for (f = 0; f < inv->n_foreign && inv->foreign[f].group != g->id; f++)
		;
	g->foreign = f < inv->n_foreign ? &inv->foreign[f] : NULL;
	for (; f < inv->n_foreign && inv->foreign[f].group == g->id; f++)
		g->n_foreign++;
	if (g->n_foreign)
		g->viable = false;
}

/*
 * The group of a pending device's slot-mate goes along with it when all of its members are
 * functions of that slot that may be companions: the probe will likely put the device in it
 * (a multi-function device without ACS), and a group is never half-bound.
 */
static bool group_goes_along(const struct plan *p, const struct inventory *inv, int grp,
			     const struct pci_addr *slot)
{
	size_t k;

	if (!inventory_group_in_slot(inv, grp, slot))
		return false;
	for (k = 0; k < inv->n; k++)
		if (inv->dev[k].group == grp && !can_be_companion(&inv->dev[k], &p->dev[k]))
			return false;
	return true;
}

/*
 * A selected device whose IOMMU gives it a group only when a driver first probes it (an ARM
 * SMMU): the group cannot be known before the bind, so the device and the functions of its
 * slot that have no group yet (or a group of their own slot) are bound together, all or
 * nothing, as one pending group; the driver link read back after the bind is the check.
 */
static int plan_pending(struct plan *p, const struct settings *s, const struct inventory *inv, size_t i)
{
	const struct pci_dev *d = &inv->dev[i];
	struct plan_group *g;
	char why[PLAN_REASON_LEN];
	size_t first, j, k;
	int r;

	for (first = i; first > 0 && pci_same_slot(&inv->dev[first - 1].addr, &d->addr); first--)
		;
	for (j = first; j < inv->n && pci_same_slot(&inv->dev[j].addr, &d->addr); j++)
		;
	r = group_new(p, -1);
	if (r < 0)
		return r;
	g = &p->group[p->n_groups - 1];
	g->pending = true;
	/* The slot holds i: j > first (+ 1 says so to the analyzers). */
	g->members = calloc(j - first + 1, sizeof(size_t));
	if (!g->members)
		return -ENOMEM;
	g->members[g->n_members++] = i;
	g->n_gpus = p->dev[i].role == ROLE_GPU;
	for (j = first; j < inv->n && pci_same_slot(&inv->dev[j].addr, &d->addr); j++)
		if (j != i && p->dev[j].role == ROLE_NONE &&
		    can_be_companion(&inv->dev[j], &p->dev[j]) &&
		    (inventory_group_pending(inv, &inv->dev[j]) ||
		     group_goes_along(p, inv, inv->dev[j].group, &d->addr))) {
			p->dev[j].role = ROLE_COMPANION;
			g->members[g->n_members++] = j;
		}
	for (k = 0; k < g->n_members; k++) {
		const struct pci_dev *m = &inv->dev[g->members[k]];

		if (k == 0)
			snprintf(why, sizeof(why),
				 "%s %04x:%04x selected by %s; IOMMU group assigned when %s probes it (%s)",
				 p->dev[i].role == ROLE_NVSWITCH ? "NVSwitch" : "GPU", d->vendor,
				 d->device, selected_by(s), vfio_target(m), inv->iommu.unit);
		else
			snprintf(why, sizeof(why),
				 "companion of %s, bound with it (IOMMU group assigned at probe)",
				 d->name);
		want(&p->dev[g->members[k]], m, ACT_BIND, vfio_target(m), why);
		if (p->dev[g->members[k]].action == ACT_BIND) {
			r = add_module(p, vfio_target(m));
			if (r < 0)
				return r;
		}
	}
	return 0;
}

/* vm-passthrough with an active IOMMU: whole groups, or nothing. */
/*
 * A group's members (order[from..end), one group's functions), each a companion of a
 * selected GPU, a bridge, selected, or a blocker that makes the group not viable.
 */
static int group_members(struct plan *p, const struct inventory *inv, const struct sort_key *order,
			 size_t from, size_t end, struct plan_group *g)
{
	size_t j, gpu;

	g->members = calloc(end - from, sizeof(size_t));
	g->blocked_by = calloc(end - from, sizeof(size_t));
	if (!g->members || !g->blocked_by)
		return -ENOMEM;
	for (j = from; j < end; j++) {
		size_t m = order[j].idx;
		struct plan_dev *pd = &p->dev[m];

		g->members[g->n_members++] = m;
		g->n_gpus += selected(pd) && pd->role == ROLE_GPU;
		if (selected(pd) || pd->role == ROLE_BRIDGE)
			continue;
		if (can_be_companion(&inv->dev[m], pd) && companion_of_selected(p, inv, m, &gpu)) {
			pd->role = ROLE_COMPANION;
			continue;
		}
		pd->role = pd->role == ROLE_NONE ? ROLE_BLOCKER : pd->role;
		g->blocked_by[g->n_blocked++] = m;
		g->viable = false;
	}
	group_foreign(g, inv);
	return 0;
}

/* What becomes of member m of a group that is not viable: nothing of it is taken. */
static void member_not_viable(struct plan *p, const struct settings *s, const struct inventory *inv,
			      const struct plan_group *g, size_t m)
{
	const struct pci_dev *d = &inv->dev[m];
	struct plan_dev *pd = &p->dev[m];
	char why[PLAN_REASON_LEN];

	if (pd->selected || pd->role == ROLE_COMPANION) {
		describe_group_why(why, sizeof(why), g, p, inv);
		fail(pd, d, s, vfio_target(d), why);
		if (pd->role != ROLE_COMPANION)
			p->n_failed++;
	} else if (pd->role == ROLE_UNIDENTIFIED || pd->role == ROLE_HOST) {
		pd->listed = true; /* its reason stands: never taken */
	} else {
		decide(pd, ACT_SKIP, NULL, "%s: not taken; it blocks IOMMU group %d",
		       pd->role == ROLE_EXCLUDED ? "excluded" : "not selected", g->id);
	}
}

/* Member m of a viable group, selected or a companion: bound to its vfio driver. */
static int member_bind(struct plan *p, const struct settings *s, const struct inventory *inv,
		       const struct plan_group *g, size_t m)
{
	const struct pci_dev *d = &inv->dev[m];
	struct plan_dev *pd = &p->dev[m];
	char why[PLAN_REASON_LEN];
	size_t gpu = m;

	if (pd->role == ROLE_COMPANION) {
		companion_of_selected(p, inv, m, &gpu);
		snprintf(why, sizeof(why), "companion of %s in IOMMU group %d", inv->dev[gpu].name,
			 g->id);
	} else {
		snprintf(why, sizeof(why), "%s %04x:%04x selected by %s in IOMMU group %d",
			 pd->role == ROLE_NVSWITCH ? "NVSwitch" : "GPU", d->vendor, d->device,
			 selected_by(s), g->id);
	}
	want(pd, d, ACT_BIND, vfio_target(d), why);
	return pd->action == ACT_BIND ? add_module(p, vfio_target(d)) : 0;
}

/* Each member's action: bridges listed, the rest bound or, when not viable, left. */
static int group_decide(struct plan *p, const struct settings *s, const struct inventory *inv,
			const struct plan_group *g)
{
	size_t k;
	int r;

	for (k = 0; k < g->n_members; k++) {
		size_t m = g->members[k];

		if (p->dev[m].role == ROLE_BRIDGE) {
			p->dev[m].listed = true;
		} else if (!g->viable) {
			member_not_viable(p, s, inv, g, m);
		} else {
			r = member_bind(p, s, inv, g, m);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

/* Selected devices without a group cannot be bound to vfio-pci, unless it comes at probe. */
static int plan_ungrouped(struct plan *p, const struct settings *s, const struct inventory *inv)
{
	size_t i;
	int r;

	for (i = 0; i < inv->n; i++) {
		if (inv->dev[i].group >= 0 || !selected(&p->dev[i]))
			continue;
		if (inventory_group_pending(inv, &inv->dev[i])) {
			r = plan_pending(p, s, inv, i);
			if (r < 0)
				return r;
		} else {
			fail(&p->dev[i], &inv->dev[i], s, vfio_target(&inv->dev[i]),
			     "no IOMMU group although the IOMMU is active");
			p->n_failed++;
		}
	}
	return 0;
}

/* The IOMMU groups that hold a selected device, in group order; then the ungrouped. */
static int plan_groups(struct plan *p, const struct settings *s, const struct inventory *inv)
{
	struct sort_key *order; /* key: the group */
	size_t i, end, n = 0;
	int r = 0;

	order = malloc((inv->n ? inv->n : 1) * sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (i = 0; i < inv->n; i++)
		if (inv->dev[i].group >= 0)
			order[n++] = (struct sort_key){ (uint64_t)inv->dev[i].group, i };
	sort_keys(order, n);

	for (i = 0; i < n && r == 0; i = end) {
		bool any = false;

		for (end = i; end < n && order[end].key == order[i].key; end++)
			any |= selected(&p->dev[order[end].idx]);
		if (!any)
			continue;
		r = group_new(p, (int)order[i].key);
		if (r == 0)
			r = group_members(p, inv, order, i, end, &p->group[p->n_groups - 1]);
		if (r == 0)
			r = group_decide(p, s, inv, &p->group[p->n_groups - 1]);
	}
	if (r == 0)
		r = plan_ungrouped(p, s, inv);
	free(order);
	return r;
}

/* Selected devices and the functions of their slots, whatever their groups. */
static void for_slot(struct plan *p, const struct inventory *inv,
		     void (*fn)(struct plan *p, const struct inventory *inv, size_t i, size_t gpu,
				const struct settings *s),
		     const struct settings *s)
{
	size_t i, j;

	for (i = 0; i < inv->n; i++) {
		if (!p->dev[i].selected)
			continue;
		fn(p, inv, i, i, s);
		for (j = i; j > 0 && pci_same_slot(&inv->dev[j - 1].addr, &inv->dev[i].addr); j--)
			;
		for (; j < inv->n && pci_same_slot(&inv->dev[j].addr, &inv->dev[i].addr); j++)
			if (j != i && p->dev[j].role == ROLE_NONE &&
			    can_be_companion(&inv->dev[j], &p->dev[j])) {
				p->dev[j].role = ROLE_COMPANION;
				fn(p, inv, j, i, s);
			}
	}
}

/* Device i's host side: what is the device (a GPU or a companion), why the host keeps it. */
static void host_side_as(struct plan *p, const struct inventory *inv, size_t i, bool gpu,
			 const char *what, const struct settings *s, const char *reserve_for,
			 const char *why)
{
	const struct pci_dev *d = &inv->dev[i];
	struct plan_dev *pd = &p->dev[i];

	if (reserve_for && gpu) {
		char r[PLAN_REASON_LEN];

		fmt_cut(r, sizeof(r), "%s: reserved for %s (%s)", what, reserve_for, why);
		want(pd, d, ACT_RESERVE, reserve_for, r);
	} else if (s->from[KEY_MODE] == FROM_DEFAULT &&
		   (driver_is_vfio(d->driver) || driver_is_vfio(d->override))) {
		/*
		 * Nothing set the mode (gpuvm installed, not configured): a vfio bind someone
		 * else made, such as vfio-pci.ids= with a built-in vfio-pci, is theirs to keep.
		 */
		decide(pd, ACT_KEEP, NULL,
		       "%s: left on %s: no mode is set (no host config, no gpuvm.mode=)", what,
		       driver_is_vfio(d->driver) ? d->driver : d->override);
	} else if (driver_is_vfio(d->driver)) {
		decide(pd, ACT_UNBIND, NULL, "%s: off %s, back to the host driver (%s)", what,
		       d->driver, why);
	} else if (driver_is_vfio(d->override)) {
		decide(pd, ACT_UNBIND, NULL,
		       "%s: its vfio driver_override cleared for the host driver (%s)", what, why);
	} else if (streq(d->override, HOLD_OVERRIDE)) {
		decide(pd, ACT_UNBIND, NULL,
		       "%s: held while gpuvm waited for its config; released to the host driver (%s)",
		       what, why);
	} else {
		decide(pd, ACT_KEEP, NULL, "%s: left on %s (%s)", what, drv(d), why);
	}
}

static void host_side(struct plan *p, const struct inventory *inv, size_t i, size_t gpu,
		      const struct settings *s, const char *reserve_for, const char *why)
{
	const struct pci_dev *d = &inv->dev[i];
	char what[PLAN_REASON_LEN];

	if (i == gpu)
		snprintf(what, sizeof(what), "GPU %04x:%04x selected by %s", d->vendor, d->device,
			 selected_by(s));
	else
		snprintf(what, sizeof(what), "companion of %s", inv->dev[gpu].name);
	host_side_as(p, inv, i, i == gpu, what, s, reserve_for, why);
}

/* The GPU of i's IOMMU group that gpus= does not select, or SIZE_MAX. */
static size_t picked_out_in_group(const struct plan *p, const struct inventory *inv, size_t i)
{
	size_t j;

	for (j = 0; inv->dev[i].group >= 0 && j < inv->n; j++)
		if (p->dev[j].pick == PICK_OUT && inv->dev[j].group == inv->dev[i].group)
			return j;
	return SIZE_MAX;
}

/*
 * A group is never split: a device selected in a group that holds a GPU gpus= does not
 * select is selected no more (PICK_SPLIT), and the group stays with the host whole.
 */
static void refuse_split_groups(struct plan *p, const struct inventory *inv)
{
	size_t i;

	for (i = 0; i < inv->n; i++)
		if (p->dev[i].selected && picked_out_in_group(p, inv, i) != SIZE_MAX) {
			p->dev[i].selected = false;
			p->dev[i].pick = PICK_SPLIT;
			p->n_selected--;
		}
}

/* The GPUs gpus= leaves out (or that share a group with one), and their slots: the host's. */
static void picked_out(struct plan *p, const struct settings *s, const struct inventory *inv)
{
	const char *reserve = s->host_driver[0] ? s->host_driver : NULL;
	char what[PLAN_REASON_LEN], why[64];
	size_t i, j, o;

	snprintf(why, sizeof(why), "mode %s: only what gpus= selects goes to VMs", mode_name(s->mode));
	for (i = 0; i < inv->n; i++) {
		const struct pci_dev *d = &inv->dev[i];

		if (p->dev[i].pick == PICK_IN)
			continue;
		o = picked_out_in_group(p, inv, i);
		if (p->dev[i].pick == PICK_OUT)
			snprintf(what, sizeof(what), "GPU %04x:%04x not selected by gpus= (%s)",
				 d->vendor, d->device, settings_source(s, KEY_GPUS));
		else
			snprintf(what, sizeof(what),
				 "%s %04x:%04x selected by gpus= (%s), but IOMMU group %d also holds %s, which gpus= does not select: a group is not split, it stays with the host",
				 p->dev[i].role == ROLE_NVSWITCH ? "NVSwitch" : "GPU", d->vendor,
				 d->device, settings_source(s, KEY_GPUS), d->group,
				 o < inv->n ? inv->dev[o].name : "another GPU");
		host_side_as(p, inv, i, true, what, s, reserve, why);
		for (j = i; j > 0 && pci_same_slot(&inv->dev[j - 1].addr, &d->addr); j--)
			;
		for (; j < inv->n && pci_same_slot(&inv->dev[j].addr, &d->addr); j++)
			if (j != i && p->dev[j].role == ROLE_NONE &&
			    can_be_companion(&inv->dev[j], &p->dev[j])) {
				/* its role stays: it goes to no VM, as its GPU */
				snprintf(what, sizeof(what), "companion of %s", d->name);
				host_side_as(p, inv, j, false, what, s, NULL, why);
			}
	}
}

static void container_one(struct plan *p, const struct inventory *inv, size_t i, size_t gpu,
			  const struct settings *s)
{
	host_side(p, inv, i, gpu, s, s->host_driver[0] ? s->host_driver : NULL, "mode container");
}

/*
 * The vGPU method of a GPU follows its architecture (pci.ids' name, in inv->models): mediated
 * devices before Ampere, SR-IOV VFs from Ampere on. Without a name, sriov_totalvfs decides.
 */
static void vgpu_why(const struct inventory *inv, const struct pci_dev *d, enum vgpu_method *m,
		     char *why, size_t size)
{
	const struct gpu_model *g = gpu_model_find(inv->models, d->vendor, d->device);
	const char *arch;

	if (!g || g->arch == ARCH_UNKNOWN) {
		*m = d->sriov_totalvfs > 0 ? VGPU_SRIOV : VGPU_MDEV;
		if (*m == VGPU_SRIOV)
			snprintf(why, size, "mode vm-vgpu: SR-IOV, %d VFs; architecture unknown",
				 d->sriov_totalvfs);
		else
			snprintf(why, size, "mode vm-vgpu: mediated devices; architecture unknown");
		return;
	}
	arch = gpu_arch_name(g->arch);
	*m = g->support == VGPU_SUP_NO ? VGPU_NONE : g->method;
	if (g->support == VGPU_SUP_NO)
		snprintf(why, size, "mode vm-vgpu: no vGPU release supports it (%s, %s)", arch, g->why);
	else if (*m == VGPU_SRIOV && d->sriov_totalvfs <= 0)
		snprintf(why, size,
			 "mode vm-vgpu: %s, SR-IOV expected but the device shows no SR-IOV capability: no sriov_totalvfs",
			 arch);
	else if (*m == VGPU_SRIOV)
		snprintf(why, size, "mode vm-vgpu: %s, SR-IOV, %d VFs", arch, d->sriov_totalvfs);
	else
		snprintf(why, size, "mode vm-vgpu: %s, mediated devices", arch);
}

static void vgpu_one(struct plan *p, const struct inventory *inv, size_t i, size_t gpu,
		     const struct settings *s)
{
	enum vgpu_method m;
	char why[160];

	if (i == gpu) {
		vgpu_why(inv, &inv->dev[i], &m, why, sizeof(why));
		p->dev[i].vgpu = m;
	} else {
		snprintf(why, sizeof(why), "mode vm-vgpu");
	}
	host_side(p, inv, i, gpu, s, s->host_driver[0] ? s->host_driver : "nvidia", why);
}

static void noiommu_one(struct plan *p, const struct inventory *inv, size_t i, size_t gpu,
			const struct settings *s)
{
	(void)gpu;
	fail(&p->dev[i], &inv->dev[i], s, vfio_target(&inv->dev[i]),
	     "the IOMMU is not active (no unit in /sys/class/iommu, no IOMMU group)");
	if (i == gpu)
		p->n_failed++;
}

/* A device held while gpuvm waited for its config that the plan now leaves alone: release it. */
static void release_holds(struct plan *p, const struct inventory *inv)
{
	size_t i;

	for (i = 0; i < inv->n; i++)
		if (p->dev[i].action == ACT_SKIP && streq(inv->dev[i].override, HOLD_OVERRIDE)) {
			char why[PLAN_REASON_LEN];

			strscpy(why, p->dev[i].reason, sizeof(why));
			decide(&p->dev[i], ACT_UNBIND, NULL,
			       "%s; held while gpuvm waited for its config: released", why);
		}
}

/* -ENOMEM when decide() could not keep a reason. */
static int reasons_kept(const struct plan *p)
{
	size_t i;

	for (i = 0; i < p->n_dev; i++)
		if (!p->dev[i].reason)
			return -ENOMEM;
	return 0;
}

/* A group could not be read (a link, a listing): no group can be judged whole, none is bound. */
static void unreadable_one(struct plan *p, const struct inventory *inv, size_t i, size_t gpu,
			   const struct settings *s)
{
	fail(&p->dev[i], &inv->dev[i], s, vfio_target(&inv->dev[i]),
	     "an IOMMU group could not be read (an iommu_group link or /sys/kernel/iommu_groups/N/devices): no group can be judged whole");
	if (i == gpu)
		p->n_failed++;
}

/* Could an unidentified function belong to the selection? why says how, when it could. */
static bool may_belong(const struct plan *p, const struct settings *s, const struct inventory *inv,
		       size_t i, char *why, size_t size)
{
	const struct pci_dev *d = &inv->dev[i];
	size_t j;

	if (excluded(s, d))
		return false; /* named by exclude=: not wanted, whatever it is */
	if (d->vendor == 0xffff) {
		snprintf(why, size, "its vendor is unknown: it may be a device this mode selects");
		return true;
	}
	if (id_matches(s, d)) {
		snprintf(why, size, "its vendor and device files say %04x:%04x, which %s selects",
			 d->vendor, d->device, s->n_ids ? "ids=" : "the default match");
		return true;
	}
	for (j = 0; j < inv->n; j++) {
		const struct pci_dev *o = &inv->dev[j];

		if (!p->dev[j].selected)
			continue;
		if (pci_same_slot(&o->addr, &d->addr)) {
			snprintf(why, size, "it is a function of the slot of %s", o->name);
			return true;
		}
		if (d->group >= 0 && o->group == d->group) {
			snprintf(why, size, "it is in IOMMU group %d with %s", d->group, o->name);
			return true;
		}
	}
	return false;
}

/*
 * An unidentified function is never taken. Under a VM mode, one that may belong to the
 * selection keeps the mode from being called reached: it is a failure of the outcome.
 */
static void judge_unidentified(struct plan *p, const struct settings *s, const struct inventory *inv)
{
	char why[PLAN_REASON_LEN];
	size_t i;

	for (i = 0; i < inv->n; i++) {
		const struct pci_dev *d = &inv->dev[i];
		struct plan_dev *pd = &p->dev[i];

		if (pd->role != ROLE_UNIDENTIFIED || !may_belong(p, s, inv, i, why, sizeof(why)))
			continue;
		if (s->mode == MODE_CONTAINER) {
			decide(pd, ACT_SKIP, NULL,
			       "not identified: its uevent could not be used (%s); %s: left as it is",
			       strerror(d->unread_errno), why);
			continue;
		}
		pd->failed = true;
		p->n_unidentified++;
		decide(pd, ACT_SKIP, NULL,
		       "not identified: its uevent could not be used (%s); %s, so %s cannot be called reached; never taken",
		       strerror(d->unread_errno), why, mode_name(s->mode));
	}
}

int plan_build(struct plan *p, const struct settings *s, const struct inventory *inv)
{
	int r = 0;

	memset(p, 0, sizeof(*p));
	p->mode = s->mode;
	p->dev = calloc(inv->n ? inv->n : 1, sizeof(*p->dev));
	if (!p->dev)
		return -ENOMEM;
	p->n_dev = inv->n;
	classify(p, s, inv);
	if (s->mode != MODE_CONTAINER && s->n_gpus)
		refuse_split_groups(p, inv);

	switch (s->mode) {
	case MODE_CONTAINER:
		for_slot(p, inv, container_one, s);
		break;
	case MODE_VM_VGPU:
		for_slot(p, inv, vgpu_one, s);
		break;
	case MODE_VM_PASSTHROUGH:
		if (!inv->iommu.active) {
			p->iommu_unusable = p->n_selected > 0;
			for_slot(p, inv, noiommu_one, s);
		} else if (inv->groups_unreadable) {
			for_slot(p, inv, unreadable_one, s);
		} else {
			r = plan_groups(p, s, inv);
		}
		break;
	}
	if (r == 0 && s->mode != MODE_CONTAINER && s->n_gpus)
		picked_out(p, s, inv);
	if (r == 0) {
		judge_unidentified(p, s, inv);
		release_holds(p, inv);
		r = reasons_kept(p);
	}
	if (r < 0) {
		plan_free(p);
		return r;
	}
	return 0;
}

int plan_build_hold(struct plan *p, const struct settings *s, const struct inventory *inv,
		    const char *until, bool failed)
{
	struct settings vm = *s;
	size_t i;
	int r;

	memset(p, 0, sizeof(*p));
	p->mode = s->mode;
	p->dev = calloc(inv->n ? inv->n : 1, sizeof(*p->dev));
	if (!p->dev)
		return -ENOMEM;
	p->n_dev = inv->n;
	vm.mode = MODE_VM_PASSTHROUGH; /* what a VM mode would select (nvswitch=vm counts) */
	vm.n_gpus = 0;		       /* every GPU: the config may select any of them */
	classify(p, &vm, inv);
	for (i = 0; i < inv->n; i++) {
		const struct pci_dev *d = &inv->dev[i];
		struct plan_dev *pd = &p->dev[i];

		if (!pd->selected)
			continue;
		pd->failed = failed;
		if (failed)
			p->n_failed++;
		if (d->driver[0])
			decide(pd, ACT_KEEP, NULL,
			       "left on %s while gpuvm waits for %s: the hold takes nothing from a driver",
			       d->driver, until);
		else if (streq(d->override, HOLD_OVERRIDE))
			decide(pd, ACT_KEEP, HOLD_OVERRIDE, "held while gpuvm waits for %s", until);
		else
			decide(pd, ACT_HOLD, HOLD_OVERRIDE,
			       "held, claimed by no driver, while gpuvm waits for %s", until);
	}
	release_holds(p, inv);
	r = reasons_kept(p);
	if (r < 0)
		plan_free(p);
	return r;
}

void plan_free(struct plan *p)
{
	size_t i;

	for (i = 0; i < p->n_groups; i++) {
		free(p->group[i].members);
		free(p->group[i].blocked_by);
	}
	free(p->group);
	for (i = 0; p->dev && i < p->n_dev; i++)
		drop_reason(&p->dev[i]);
	free(p->dev);
	memset(p, 0, sizeof(*p));
}
