// SPDX-License-Identifier: MIT
/*
 * The planner on random inventories and settings built from the input: up to 32 PCI
 * functions in a few slots of a few buses, vendors 10de/8086/15b3, classes GPU, 3D,
 * audio, bridges, NIC, NVSwitch, USB, NVMe, IOMMU groups 0-5 or none, drivers,
 * driver_override, VFs, SR-IOV, vfio variants; settings with any mode, ids=, exclude=,
 * nvswitch=, host_driver=, on_error=, and the IOMMU on or off.
 *
 * Invariants (abort on violation):
 *  - every device gets one action of the enum, a role of the enum and a reason; a
 *    target exactly for the actions that need one (bind, reserve, hold; keep only when
 *    the device already sits on that target);
 *  - a bridge is never touched;
 *  - only a selected device or a function of a selected device's slot is bound, held or
 *    reserved, or unbound (an NVSwitch kept for the host may also be unbound off vfio);
 *  - an address in exclude= is never bound, held or reserved;
 *  - selection is the documented one (ids= or the default match, no VFs, no exclude=,
 *    NVSwitches only with nvswitch=vm in vm-passthrough), and the counts agree;
 *  - each mode uses only its actions (container and vm-vgpu never bind or hold;
 *    vm-passthrough never reserves and binds only with an active IOMMU, to the vfio
 *    target, with the module listed);
 *  - groups: the planned groups are exactly the groups with a selected member, with all
 *    their members; viable iff nothing blocks; a viable group is bound whole (every
 *    member that is not a bridge); a non-viable group has no member bound; a blocker
 *    is never touched; no IOMMU group is ever half-bound;
 *  - an IOMMU that gives groups at probe (an ARM SMMU): a selected device with neither
 *    driver nor group is bound, in a pending group with functions of its slot only, each
 *    of them without a group or in a group that goes along whole; under an IOMMU that
 *    groups at boot such a device fails;
 *  - what the host needs (mass storage, a bridge that is no port, base system peripherals,
 *    SMBus, the root disk's or a console's device) is never selected nor taken, whatever
 *    ids= says, and a group that holds it is not viable;
 *  - an unidentified function is never taken and always listed; under a VM mode it fails
 *    the outcome (n_unidentified) exactly when it may belong to the selection (vendor
 *    unknown or matching, a selected device's slot or group) and is not excluded;
 *  - a group with a member that is no PCI function of the listing is not viable;
 *  - the planner is pure and deterministic: the inventory is left as it was and a
 *    second plan is the same.
 */
#include <errno.h>

#include "fuzz.h"
#include "plan.h"
#include "settings.h"
#include "util.h"

#define DEVS_MAX 32
#define DEV_BYTES 10 /* input bytes per device: mutations stay aligned */

static const uint16_t vendors[] = { 0x10de, 0x10de, 0x8086, 0x15b3 };
static const uint32_t classes[] = {
	0x030000, 0x030200, 0x040300, 0x060400, 0x060000, 0x060900, 0x020000, 0x068000,
	0x0c0330, 0x010802, 0x030000, 0x040300, 0x060100, 0x0c0500, 0x080600, 0x068000,
};
static const uint8_t buses[] = { 0x00, 0x01, 0x02, 0x41 };
static const char *const drivers[] = {
	"",
	"nvidia",
	"nouveau",
	"nova_core",
	"vfio-pci",
	"nvgrace_gpu_vfio_pci",
	"snd_hda_intel",
	"pcieport",
	"mlx5_core",
	"xhci_hcd",
	"nvme",
	"e1000e",
};
static const char *const overrides[] = { "", "", "vfio-pci", "nvidia", "nvgrace_gpu_vfio_pci" };
/* More distinct variants than PLAN_MODULES_MAX holds, so that limit is reached too. */
static const char *const variants[] = {
	"",
	"",
	"",
	"",
	"",
	"",
	"nvgrace_gpu_vfio_pci",
	"mlx5_vfio_pci",
	"hisi_acc_vfio_pci",
	"pds_vfio_pci",
	"virtio_vfio_pci",
	"qat_vfio_pci",
	"xe_vfio_pci",
	"a_vfio_pci",
	"b_vfio_pci",
	"c_vfio_pci",
};
static const char *const host_drivers[] = { "", "", "nvidia", "nouveau", "vfio-pci" };

#define PICK(in, arr) ((arr)[fuzz_pick(in, ARRAY_SIZE(arr))])

/* b[9] / 24 % 6: one in six on the root disk, one in six the console. */
static const enum host_use host_use[] = {
	HOST_USE_NONE, HOST_USE_ROOT, HOST_USE_CONSOLE, HOST_USE_NONE, HOST_USE_NONE, HOST_USE_NONE,
};

static int dev_cmp(const void *a, const void *b)
{
	return pci_addr_cmp(&((const struct pci_dev *)a)->addr, &((const struct pci_dev *)b)->addr);
}

struct world {
	struct settings s;
	struct inventory inv;
	struct pci_dev dev[DEVS_MAX];
	struct foreign_member foreign[1];
};

static void build_world(struct world *w, struct fuzz_in *in)
{
	uint8_t ids[3][2], ex[3][2];
	unsigned flags, n_ids, n_ex, n, i;
	size_t k;

	memset(w, 0, sizeof(*w));
	settings_default(&w->s);
	w->s.mode = (enum mode)fuzz_pick(in, 3);
	flags = fuzz_byte(in);
	w->s.nvswitch_vm = flags & 1;
	w->s.on_error = flags & 2 ? ON_ERROR_RELEASE : ON_ERROR_HOLD;
	w->inv.iommu.active = (flags & 0x0c) != 0; /* on three times in four */
	w->inv.iommu.units = w->inv.iommu.active;
	/* An ARM SMMU half the time the IOMMU is on: groups come at a driver's first probe. */
	w->inv.iommu.groups_at_probe = w->inv.iommu.active && (flags & 0x10);
	strscpy(w->s.host_driver, PICK(in, host_drivers), sizeof(w->s.host_driver));
	n_ids = fuzz_pick(in, 4);
	for (i = 0; i < 3; i++) {
		ids[i][0] = (uint8_t)fuzz_byte(in);
		ids[i][1] = (uint8_t)fuzz_byte(in);
	}
	n_ex = fuzz_pick(in, 4);
	for (i = 0; i < 3; i++) {
		ex[i][0] = (uint8_t)fuzz_byte(in);
		ex[i][1] = (uint8_t)fuzz_byte(in);
	}

	n = fuzz_pick(in, DEVS_MAX + 1);
	for (i = 0; i < n; i++) {
		struct pci_dev *d = &w->dev[i];
		unsigned b[DEV_BYTES];

		for (k = 0; k < DEV_BYTES; k++)
			b[k] = fuzz_byte(in);
		d->addr.domain = b[0] & 0x80 ? 0x10000 : 0;
		d->addr.bus = buses[b[0] % ARRAY_SIZE(buses)];
		d->addr.dev = (uint8_t)(b[1] % 4);
		d->addr.fn = (uint8_t)(b[1] / 4 % 8);
		d->vendor = vendors[b[2] % ARRAY_SIZE(vendors)];
		d->device = (uint16_t)(0x2200 + b[2] / 16 % 4);
		d->class = classes[b[3] % ARRAY_SIZE(classes)];
		d->group = (int)(b[4] % 7) - 1;
		d->driver = drivers[b[5] % ARRAY_SIZE(drivers)];
		d->override = overrides[b[6] % ARRAY_SIZE(overrides)];
		d->is_vf = b[7] % 8 == 0;
		d->sriov_totalvfs = b[7] / 8 % 3 == 0 ? -1 : b[7] / 8 % 3 == 1 ? 0 : 16;
		d->variant = variants[b[8] % ARRAY_SIZE(variants)];
		d->boot_vga = (int)(b[9] % 3) - 1;
		/* One in eight unidentified (nothing readable, half of those); a few the host's. */
		d->unidentified = b[9] / 3 % 8 == 0;
		if (d->unidentified && b[2] & 0x40) {
			d->vendor = d->device = 0xffff;
			d->class = 0xffffff;
		}
		d->unread_errno = EIO;
		d->host_use = host_use[b[9] / 24 % 6];
		d->subvendor = d->vendor;
		d->details = true;
		if (!w->inv.iommu.active)
			d->group = -1; /* groups exist only with an IOMMU */
	}
	/* As inventory_scan leaves it: sorted by address, each address once. */
	qsort(w->dev, n, sizeof(w->dev[0]), dev_cmp);
	for (i = 0, k = 0; i < n; i++)
		if (k == 0 || pci_addr_cmp(&w->dev[k - 1].addr, &w->dev[i].addr) != 0)
			w->dev[k++] = w->dev[i];
	w->inv.dev = w->dev;
	w->inv.n = k;
	for (i = 0; i < w->inv.n; i++)
		pci_addr_format(&w->dev[i].addr, w->dev[i].name, sizeof(w->dev[i].name));
	if (w->inv.n)
		w->inv.iommu.groups = w->inv.iommu.active;
	/* A group listing with a member that is no PCI function of the listing. */
	if (w->inv.iommu.active && flags & 0x20) {
		w->foreign[0].group = (int)(flags >> 6);
		strscpy(w->foreign[0].name, "0000:77:00.0", sizeof(w->foreign[0].name));
		w->inv.foreign = w->foreign;
		w->inv.n_foreign = 1;
	}

	if (n_ids)
		settings_set_from(&w->s, KEY_IDS, FROM_CMDLINE, NULL);
	for (i = 0; i < n_ids; i++) {
		struct pci_id *id = &w->s.ids[w->s.n_ids++];

		id->vendor = vendors[ids[i][0] % ARRAY_SIZE(vendors)];
		id->any_device = ids[i][1] & 1;
		id->device = id->any_device ? 0 : (uint16_t)(0x2200 + ids[i][1] / 2 % 4);
	}
	if (n_ex)
		settings_set_from(&w->s, KEY_EXCLUDE, FROM_CONFIG, "/etc/gpuvm/gpuvm.conf:3");
	for (i = 0; i < n_ex; i++) {
		struct pci_addr *a = &w->s.exclude[w->s.n_exclude++];

		if (w->inv.n && ex[i][0] & 1) {
			*a = w->dev[ex[i][1] % w->inv.n].addr;
		} else {
			a->bus = buses[ex[i][0] / 2 % ARRAY_SIZE(buses)];
			a->dev = (uint8_t)(ex[i][1] % 4);
			a->fn = (uint8_t)(ex[i][1] / 4 % 8);
		}
	}
}

/* ---- references, written from the design, not from plan.c ---- */

static bool is_nvswitch(const struct pci_dev *d)
{
	return d->vendor == PCI_VENDOR_NVIDIA && (d->class >> 8) == 0x0680;
}

static bool is_bridge(const struct pci_dev *d)
{
	return (d->class >> 8) == 0x0600 || (d->class >> 8) == 0x0604 || (d->class >> 8) == 0x0609;
}

static bool ref_match(const struct settings *s, const struct pci_dev *d)
{
	size_t i;

	if (!s->n_ids)
		return d->vendor == PCI_VENDOR_NVIDIA &&
			((d->class >> 8) == 0x0300 || (d->class >> 8) == 0x0302 || is_nvswitch(d));
	for (i = 0; i < s->n_ids; i++)
		if (s->ids[i].vendor == d->vendor &&
		    (s->ids[i].any_device || s->ids[i].device == d->device))
			return true;
	return false;
}

static bool ref_excluded(const struct settings *s, const struct pci_dev *d)
{
	size_t i;

	for (i = 0; i < s->n_exclude; i++)
		if (pci_addr_cmp(&s->exclude[i], &d->addr) == 0)
			return true;
	return false;
}

/* What the host needs, from the design (DESIGN.md, gpuvm(8) "Selection"). */
static bool ref_host(const struct pci_dev *d)
{
	uint32_t base = d->class >> 16, sub = d->class >> 8 & 0xff;

	if (d->host_use != HOST_USE_NONE)
		return true;
	return base == 0x01 || (base == 0x06 && !is_bridge(d) && !is_nvswitch(d)) ||
		(base == 0x08 && sub <= 0x06) || (base == 0x0c && sub == 0x05);
}

static bool ref_selected(const struct settings *s, const struct pci_dev *d)
{
	if (d->unidentified || is_bridge(d) || ref_host(d) || !ref_match(s, d) || d->is_vf ||
	    ref_excluded(s, d))
		return false;
	if (is_nvswitch(d))
		return s->nvswitch_vm && s->mode == MODE_VM_PASSTHROUGH;
	return true;
}

static bool slot_or_group_mate_selected(const struct world *w, const struct plan *p, size_t i)
{
	size_t j;

	for (j = 0; j < w->inv.n; j++)
		if (j != i && p->dev[j].selected &&
		    (pci_same_slot(&w->dev[j].addr, &w->dev[i].addr) ||
		     (w->dev[i].group >= 0 && w->dev[j].group == w->dev[i].group)))
			return true;
	return false;
}

static bool slot_mate_selected(const struct world *w, const struct plan *p, size_t i)
{
	size_t j;

	for (j = 0; j < w->inv.n; j++)
		if (j != i && p->dev[j].selected && pci_same_slot(&w->dev[j].addr, &w->dev[i].addr))
			return true;
	return false;
}

static const char *vfio_target(const struct pci_dev *d)
{
	return d->variant[0] ? d->variant : "vfio-pci";
}

/* The driver a VM mode reserves a selected device for. */
static const char *reserve_for(const struct settings *s)
{
	if (s->host_driver[0])
		return s->host_driver;
	return s->mode == MODE_VM_VGPU ? "nvidia" : "";
}

static bool takes(enum action a)
{
	return a == ACT_BIND || a == ACT_HOLD || a == ACT_RESERVE;
}

/* On its vfio target in vm-passthrough: to be bound, or already bound and kept. */
static bool bound(const struct plan_dev *pd)
{
	return pd->action == ACT_BIND || (pd->action == ACT_KEEP && pd->target[0]);
}

static bool has_module(const struct plan *p, const char *name)
{
	size_t i;

	for (i = 0; i < p->n_modules; i++)
		if (streq(p->modules[i], name))
			return true;
	return false;
}

static void check_device(const struct world *w, const struct plan *p, size_t i)
{
	const struct settings *s = &w->s;
	const struct pci_dev *d = &w->dev[i];
	const struct plan_dev *pd = &p->dev[i];
	const char *n = d->name;

	fuzz_assert(pd->action >= ACT_SKIP && pd->action <= ACT_HOLD, "%s: action %d", n,
		    (int)pd->action);
	fuzz_assert(pd->role >= ROLE_NONE && pd->role <= ROLE_UNIDENTIFIED, "%s: role %d", n,
		    (int)pd->role);
	fuzz_assert(pd->reason && strlen(pd->reason) < PLAN_REASON_LEN && pd->reason[0],
		    "%s: no reason", n);
	fuzz_assert(pd->target, "%s: no target (NULL)", n);
	fuzz_assert(!pd->reason_owned || pd->reason != pd->target, "%s: reason owned twice", n);

	switch (pd->action) {
	case ACT_BIND:
	case ACT_RESERVE:
	case ACT_HOLD:
		fuzz_assert(valid_driver_name(pd->target), "%s: %s without a target", n,
			    action_name(pd->action));
		break;
	case ACT_KEEP:
		fuzz_assert(!pd->target[0] ||
				    (streq(d->driver, pd->target) && streq(d->override, pd->target)),
			    "%s: keep for %s while on '%s' (override '%s')", n, pd->target,
			    d->driver, d->override);
		break;
	case ACT_SKIP:
	case ACT_UNBIND:
		fuzz_assert(!pd->target[0], "%s: %s with target %s", n, action_name(pd->action),
			    pd->target);
		break;
	}

	if (d->unidentified)
		fuzz_assert(pd->action == ACT_SKIP && pd->role == ROLE_UNIDENTIFIED && pd->listed,
			    "%s: unidentified, planned %s as %s (%s)", n, action_name(pd->action),
			    role_name(pd->role), pd->reason);
	else if (is_bridge(d))
		fuzz_assert(pd->action == ACT_SKIP && pd->role == ROLE_BRIDGE && !pd->selected,
			    "%s: bridge planned %s (%s)", n, action_name(pd->action), pd->reason);
	else if (ref_host(d))
		fuzz_assert(pd->action == ACT_SKIP && pd->role == ROLE_HOST && !pd->selected &&
				    (pd->listed || !ref_match(s, d) || ref_excluded(s, d)),
			    "%s (class %06x): the host's, planned %s as %s (%s)", n, d->class,
			    action_name(pd->action), role_name(pd->role), pd->reason);
	if (pd->role == ROLE_UNIDENTIFIED)
		fuzz_assert(pd->failed ==
				    (s->mode != MODE_CONTAINER && !ref_excluded(s, d) &&
				     (d->vendor == 0xffff || ref_match(s, d) ||
				      slot_or_group_mate_selected(w, p, i))),
			    "%s: unidentified, failed %d in mode %s (%s)", n, pd->failed,
			    mode_name(s->mode), pd->reason);
	fuzz_assert(pd->selected == ref_selected(s, d), "%s: selected %d, the design says %d (%s)",
		    n, pd->selected, !pd->selected, pd->reason);
	if (pd->selected)
		fuzz_assert(pd->role == ROLE_GPU || pd->role == ROLE_NVSWITCH, "%s: selected as %s",
			    n, role_name(pd->role));
	if (pd->action != ACT_SKIP && pd->action != ACT_KEEP)
		fuzz_assert(pd->selected || slot_mate_selected(w, p, i) ||
				    (pd->action == ACT_UNBIND && pd->role == ROLE_NVSWITCH),
			    "%s (%04x:%04x class %06x, %s): %s though neither selected nor in a selected slot (%s)",
			    n, d->vendor, d->device, d->class, role_name(pd->role),
			    action_name(pd->action), pd->reason);
	if (ref_excluded(s, d))
		fuzz_assert(!takes(pd->action), "%s: in exclude= but planned %s (%s)", n,
			    action_name(pd->action), pd->reason);
	if (pd->role == ROLE_BLOCKER)
		fuzz_assert(pd->action == ACT_SKIP, "%s: a blocker planned %s (%s)", n,
			    action_name(pd->action), pd->reason);
	if (pd->failed && pd->role != ROLE_UNIDENTIFIED)
		fuzz_assert((pd->action == ACT_HOLD) == (s->on_error == ON_ERROR_HOLD) &&
				    (pd->action == ACT_HOLD || pd->action == ACT_UNBIND ||
				     pd->action == ACT_KEEP),
			    "%s: failed, on_error=%s, planned %s", n,
			    s->on_error == ON_ERROR_HOLD ? "hold" : "release",
			    action_name(pd->action));
	fuzz_assert(pd->vgpu <= VGPU_MDEV, "%s: vgpu method %d", n, (int)pd->vgpu);
	if (pd->vgpu != VGPU_NONE)
		fuzz_assert(s->mode == MODE_VM_VGPU && pd->selected &&
				    pd->vgpu == (d->sriov_totalvfs > 0 ? VGPU_SRIOV : VGPU_MDEV),
			    "%s: vgpu method %s", n, vgpu_method_name(pd->vgpu));

	switch (s->mode) {
	case MODE_CONTAINER:
	case MODE_VM_VGPU:
		fuzz_assert(pd->action != ACT_BIND && pd->action != ACT_HOLD &&
				    (!pd->failed ||
				     (s->mode == MODE_VM_VGPU && pd->role == ROLE_UNIDENTIFIED)),
			    "%s: %s in mode %s", n, action_name(pd->action), mode_name(s->mode));
		if (pd->action == ACT_RESERVE || (pd->action == ACT_KEEP && pd->target[0]))
			fuzz_assert(pd->selected && streq(pd->target, reserve_for(s)),
				    "%s: reserved for %s in mode %s", n, pd->target,
				    mode_name(s->mode));
		if (s->mode == MODE_VM_VGPU && pd->selected)
			fuzz_assert(pd->vgpu != VGPU_NONE, "%s: no vgpu method", n);
		break;
	case MODE_VM_PASSTHROUGH:
		fuzz_assert(pd->action != ACT_RESERVE, "%s: reserve in vm-passthrough", n);
		if (pd->action == ACT_BIND)
			fuzz_assert(w->inv.iommu.active &&
					    (d->group >= 0 || inventory_group_pending(&w->inv, d)) &&
					    streq(pd->target, vfio_target(d)) &&
					    has_module(p, pd->target),
				    "%s: bind to %s (group %d, IOMMU %s)", n, pd->target, d->group,
				    w->inv.iommu.active ? "on" : "off");
		if (pd->action == ACT_HOLD)
			fuzz_assert(streq(pd->target, vfio_target(d)), "%s: held for %s", n,
				    pd->target);
		if (pd->selected && !w->inv.iommu.active)
			fuzz_assert(pd->failed, "%s: no IOMMU, yet not failed", n);
		if (pd->selected && d->group < 0 && !inventory_group_pending(&w->inv, d))
			fuzz_assert(pd->failed, "%s: no group, yet not failed", n);
		if (pd->selected && inventory_group_pending(&w->inv, d))
			fuzz_assert(!pd->failed && bound(pd), "%s: pending group, yet %s (%s)", n,
				    action_name(pd->action), pd->reason);
		break;
	}
}

static bool in_list(const size_t *v, size_t n, size_t x)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

/* A pending group: the selected device first, then functions of its slot, all bound. */
static void check_pending(const struct world *w, const struct plan *p, const struct plan_group *pg)
{
	const struct inventory *inv = &w->inv;
	const struct pci_dev *d;
	size_t i, k;

	fuzz_assert(inv->iommu.groups_at_probe && pg->id == -1 && pg->viable && pg->n_members > 0 &&
			    pg->n_blocked == 0,
		    "pending group: id %d, viable %d, %zu members", pg->id, pg->viable, pg->n_members);
	d = &w->dev[pg->members[0]];
	fuzz_assert(p->dev[pg->members[0]].selected && inventory_group_pending(inv, d),
		    "pending group: first member %s is not a selected pending device", d->name);
	for (k = 0; k < pg->n_members; k++) {
		const struct pci_dev *m = &w->dev[pg->members[k]];

		fuzz_assert(pci_same_slot(&m->addr, &d->addr) && bound(&p->dev[pg->members[k]]),
			    "pending group of %s: %s not in the slot or not bound", d->name, m->name);
		if (m->group < 0)
			continue;
		for (i = 0; i < inv->n; i++)
			if (w->dev[i].group == m->group)
				fuzz_assert(in_list(pg->members, pg->n_members, i),
					    "pending group of %s takes group %d but not %s",
					    d->name, m->group, w->dev[i].name);
	}
}

static void check_groups(const struct world *w, const struct plan *p)
{
	const struct inventory *inv = &w->inv;
	size_t gi, i, k;
	int g;

	if (w->s.mode != MODE_VM_PASSTHROUGH || !inv->iommu.active) {
		fuzz_assert(p->n_groups == 0, "%zu groups planned without IOMMU passthrough",
			    p->n_groups);
	}
	for (gi = 0; gi < p->n_groups; gi++) {
		const struct plan_group *pg = &p->group[gi];
		size_t members = 0;
		bool any = false;

		if (pg->pending) {
			check_pending(w, p, pg);
			continue;
		}
		fuzz_assert(!inventory_group_pending(inv, &w->dev[pg->members[0]]),
			    "group %d: its first member is pending", pg->id);
		for (k = 0; k < gi; k++)
			fuzz_assert(p->group[k].id != pg->id, "group %d planned twice", pg->id);
		for (i = 0; i < inv->n; i++)
			if (w->dev[i].group == pg->id) {
				members++;
				fuzz_assert(in_list(pg->members, pg->n_members, i),
					    "%s missing from group %d", w->dev[i].name, pg->id);
				any |= p->dev[i].selected;
			}
		fuzz_assert(members == pg->n_members && any, "group %d: %zu members of %zu", pg->id,
			    pg->n_members, members);
		fuzz_assert(pg->viable == (pg->n_blocked == 0 && pg->n_foreign == 0),
			    "group %d: viable %d, %zu blockers, %zu foreign", pg->id, pg->viable,
			    pg->n_blocked, pg->n_foreign);
		fuzz_assert(pg->n_foreign == (w->inv.n_foreign && w->foreign[0].group == pg->id),
			    "group %d: %zu foreign members", pg->id, pg->n_foreign);
		for (i = 0; i < inv->n; i++)
			if (w->dev[i].group == pg->id &&
			    (w->dev[i].unidentified || (ref_host(&w->dev[i]) && !is_bridge(&w->dev[i]))))
				fuzz_assert(in_list(pg->blocked_by, pg->n_blocked, i),
					    "group %d: %s (the host's or unidentified) does not block it",
					    pg->id, w->dev[i].name);
		for (k = 0; k < pg->n_blocked; k++) {
			size_t b = pg->blocked_by[k];
			const struct plan_dev *pd = &p->dev[b];

			fuzz_assert(in_list(pg->members, pg->n_members, b) && !pd->selected &&
					    (!is_bridge(&w->dev[b]) || w->dev[b].unidentified),
				    "group %d: %s cannot block it", pg->id, w->dev[b].name);
			fuzz_assert(pd->action == ACT_SKIP ||
					    (pd->action == ACT_UNBIND && pd->role == ROLE_NVSWITCH),
				    "group %d: blocker %s (%s) planned %s (%s)", pg->id, w->dev[b].name,
				    role_name(pd->role), action_name(pd->action), pd->reason);
		}
		for (k = 0; k < pg->n_members; k++) {
			size_t m = pg->members[k];
			const struct plan_dev *pd = &p->dev[m];

			if (is_bridge(&w->dev[m]))
				continue;
			if (pg->viable)
				fuzz_assert(bound(pd),
					    "viable group %d half-bound: %s planned %s (%s)", pg->id,
					    w->dev[m].name, action_name(pd->action), pd->reason);
			else
				fuzz_assert(!bound(pd), "group %d is not viable, yet %s planned %s",
					    pg->id, w->dev[m].name, action_name(pd->action));
		}
	}
	/* Every group with a selected member is planned; none is ever half-bound. */
	for (g = 0; g <= 5; g++) {
		bool sel = false, some = false, all = true, planned = false;

		for (i = 0; i < inv->n; i++) {
			if (w->dev[i].group != g)
				continue;
			sel |= p->dev[i].selected;
			if (w->s.mode == MODE_VM_PASSTHROUGH && !is_bridge(&w->dev[i])) {
				some |= bound(&p->dev[i]);
				all &= bound(&p->dev[i]);
			}
		}
		for (gi = 0; gi < p->n_groups; gi++)
			planned |= p->group[gi].id == g;
		if (w->s.mode == MODE_VM_PASSTHROUGH && inv->iommu.active)
			fuzz_assert(planned == sel, "group %d: planned %d, selected member %d", g,
				    planned, sel);
		fuzz_assert(!some || all, "IOMMU group %d half-bound", g);
	}
}

static void check_plan(const struct world *w, const struct plan *p)
{
	size_t i, sel = 0, failed = 0, unidentified = 0;

	for (i = 0; i < w->inv.n; i++) {
		check_device(w, p, i);
		sel += p->dev[i].selected;
		failed += p->dev[i].selected && p->dev[i].failed;
		unidentified += p->dev[i].role == ROLE_UNIDENTIFIED && p->dev[i].failed;
	}
	fuzz_assert(p->n_unidentified == unidentified, "n_unidentified %zu, counted %zu",
		    p->n_unidentified, unidentified);
	fuzz_assert(p->mode == w->s.mode, "plan mode %d", (int)p->mode);
	fuzz_assert(p->n_selected == sel, "n_selected %zu, counted %zu", p->n_selected, sel);
	fuzz_assert(p->n_failed == failed, "n_failed %zu, counted %zu", p->n_failed, failed);
	fuzz_assert(p->n_modules <= PLAN_MODULES_MAX, "%zu modules", p->n_modules);
	fuzz_assert(p->iommu_unusable ==
			    (w->s.mode == MODE_VM_PASSTHROUGH && !w->inv.iommu.active && sel > 0),
		    "iommu_unusable %d", p->iommu_unusable);
	check_groups(w, p);
}

/* plan_build fails only for memory, or past PLAN_MODULES_MAX distinct vfio drivers. */
static size_t vfio_targets(const struct world *w)
{
	const char *seen[DEVS_MAX];
	size_t i, j, n = 0;

	for (i = 0; i < w->inv.n; i++) {
		const char *t = vfio_target(&w->dev[i]);

		/* A device without a group can be bound only when the probe gives it one. */
		if ((w->dev[i].group < 0 && !inventory_group_pending(&w->inv, &w->dev[i])) ||
		    is_bridge(&w->dev[i]))
			continue;
		for (j = 0; j < n && !streq(seen[j], t); j++)
			;
		if (j == n)
			seen[n++] = t;
	}
	return n;
}

static bool same_plan(const struct plan *a, const struct plan *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (a->dev[i].action != b->dev[i].action || a->dev[i].role != b->dev[i].role ||
		    !streq(a->dev[i].target, b->dev[i].target) ||
		    !streq(a->dev[i].reason, b->dev[i].reason))
			return false;
	return a->n_groups == b->n_groups && a->n_modules == b->n_modules;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct world w, copy;
	struct fuzz_in in = { data, size };
	struct plan p, again;
	int r;

	build_world(&w, &in);
	copy = w;
	r = plan_build(&p, &w.s, &w.inv);
	fuzz_assert(memcmp(w.dev, copy.dev, sizeof(w.dev)) == 0 &&
			    memcmp(&w.s, &copy.s, sizeof(w.s)) == 0,
		    "plan_build changed its input");
	if (r == -E2BIG) {
		fuzz_assert(w.s.mode == MODE_VM_PASSTHROUGH && vfio_targets(&w) > PLAN_MODULES_MAX,
			    "-E2BIG with %zu vfio drivers", vfio_targets(&w));
		return 0;
	}
	fuzz_assert(r == 0, "plan_build returned %d", r);
	check_plan(&w, &p);
	fuzz_assert(plan_build(&again, &w.s, &w.inv) == 0 && same_plan(&p, &again, w.inv.n),
		    "a second plan differs");
	plan_free(&again);
	plan_free(&p);
	return 0;
}
