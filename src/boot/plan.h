/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_PLAN_H
#define GPUVM_PLAN_H

#include <stdbool.h>
#include <stddef.h>

#include "inventory.h"
#include "settings.h"
#include "vgpu.h"

enum action {
	ACT_SKIP,    /* not ours: left exactly as it is */
	ACT_KEEP,    /* ours and already in its requested state */
	ACT_BIND,    /* override := target, unbind, probe, verify the driver link */
	ACT_UNBIND,  /* off a vfio driver: clear the override, unbind, reprobe for the host */
	ACT_RESERVE, /* override := target (a host driver), off any other driver, probe */
	ACT_HOLD,    /* override := target, unbind, no probe: claimed by no driver */
};

enum role {
	ROLE_NONE,
	ROLE_GPU,
	ROLE_NVSWITCH,
	ROLE_COMPANION, /* another function of a selected device's slot, in its group */
	ROLE_BRIDGE,
	ROLE_BLOCKER, /* a foreign endpoint that makes a group not viable */
	ROLE_EXCLUDED,
	ROLE_VF,
	ROLE_HOST, /* the host needs it (its class, its root disk, its console): never bound */
	ROLE_UNIDENTIFIED, /* its uevent could not be used: never taken, always reported */
};

/* What gpus= made of a GPU a VM mode would take (PICK_IN when gpus= is not set). */
enum pick {
	PICK_IN,    /* selected, or not a GPU */
	PICK_OUT,   /* not selected by gpus=: stays with the host */
	PICK_SPLIT, /* selected by gpus=, but its IOMMU group holds a PICK_OUT GPU: stays too */
};

#define PLAN_REASON_LEN 256
#define PLAN_MODULES_MAX 8

/* One a PCI function (24 bytes): a node may have 10,000. */
struct plan_dev {
	/*
	 * driver_override to write; "" clears it. Never NULL: a literal, a name of the
	 * inventory or the settings' host_driver, valid while they are.
	 */
	const char *target;
	const char *reason; /* a literal, or allocated (reason_owned); < PLAN_REASON_LEN */
	enum role role : 8;
	enum action action : 8;
	enum vgpu_method vgpu : 8; /* vm-vgpu only */
	enum pick pick : 8;	   /* VM modes with gpus= */
	bool selected;		   /* a GPU or NVSwitch that the mode is about */
	bool failed;		   /* the mode cannot be reached for it (on_error applies) */
	bool listed;		   /* shown in reports */
	bool reason_owned;	   /* plan_free() frees reason */
};

struct plan_group {
	int id; /* -1 while pending */
	bool viable;
	bool pending;	 /* the IOMMU gives the group at probe (inventory_group_pending) */
	size_t *members; /* indexes into the inventory */
	size_t n_members;
	size_t n_gpus; /* selected GPUs (not NVSwitches) among the members: > 1, one VM takes all */
	size_t *blocked_by;
	size_t n_blocked;
	const struct foreign_member *foreign; /* members that are no PCI function listed */
	size_t n_foreign;
};

struct plan {
	enum mode mode;
	struct plan_dev *dev; /* one per inventory device */
	size_t n_dev;	      /* whose reasons plan_free() frees */
	struct plan_group *group;
	size_t n_groups;
	char modules[PLAN_MODULES_MAX][DRIVER_LEN]; /* to load before binding */
	size_t n_modules;
	size_t n_selected; /* GPUs and NVSwitches selected */
	size_t n_failed;   /* selected devices that cannot reach their state */
	/*
	 * Unidentified functions that may belong to a VM mode's selection (their vendor is
	 * unknown or matches, or they share a selected device's slot): the mode cannot be
	 * called reached while they are there. Counted as failures of the outcome.
	 */
	size_t n_unidentified;
	bool iommu_unusable; /* a VM mode without an active IOMMU */
};

/*
 * The driver_override that holds a GPU while gpuvm waits for its config (the root's, or
 * config='s disk): no driver has this name, so none can take the device (see
 * plan_build_hold()).
 */
#define HOLD_OVERRIDE "gpuvm-hold"

/*
 * A viable group of several GPUs: vfio gives a group to one VM whole, so a device plugin that
 * offers each GPU alone (KubeVirt's, NVIDIA's sandbox plugin) lets a second VM fail. check,
 * plan, apply and kubevirt say it in these words (the group's id, its n_gpus).
 */
#define PLAN_SHARED_GROUP_FMT                                                                      \
	"IOMMU group %d holds %zu GPUs: they can only be assigned to one VM together (vfio gives a group to one VM whole; a device plugin that offers each GPU alone lets the VM given its sibling fail to start)"
bool plan_group_shared(const struct plan_group *g);

/* The devices worth reading in detail: NVIDIA's, those matching ids=, the unidentified. */
bool plan_interesting(const struct pci_dev *d, const void *settings);

/*
 * Pure: settings + inventory -> one action per device. Fails only when memory runs out
 * (-ENOMEM) or the devices need more than PLAN_MODULES_MAX distinct drivers (-E2BIG).
 */
int plan_build(struct plan *p, const struct settings *s, const struct inventory *inv);
/*
 * Pure: hold each device the settings select under a VM mode that no driver has yet
 * (override HOLD_OVERRIDE, no probe), and nothing else, while the mode is not known yet;
 * a device a driver already has stays with it (the hold takes nothing). until: what the
 * hold waits for, for the reasons ("config=LABEL=x", "the root's /etc/gpuvm/gpuvm.conf").
 * failed: the boot's decision is this hold (on_error=hold, no config could be read): each
 * selected device is failed, so the run does not report success.
 */
int plan_build_hold(struct plan *p, const struct settings *s, const struct inventory *inv,
		    const char *until, bool failed);
void plan_free(struct plan *p);

const char *action_name(enum action a);
const char *role_name(enum role r);
bool driver_is_vfio(const char *name);
/* A vfio driver_override, or gpuvm's hold: what a host-side plan clears. */
bool override_is_ours(const char *override);

#endif
