/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_EXECUTE_H
#define GPUVM_EXECUTE_H

#include <stdbool.h>
#include <stdint.h>

#include "inventory.h"
#include "plan.h"
#include "settings.h"

enum dev_result {
	RES_NOOP,	/* nothing to do */
	RES_OK,		/* done, and the driver link says so */
	RES_UNVERIFIED, /* written, but no kernel to ask (--root) */
	RES_HELD,	/* the mode failed; claimed by no driver, as on_error=hold asks */
	RES_RELEASED,	/* the mode failed; given back to the host, as on_error=release asks */
	RES_FAILED,	/* a step failed: error says which */
	RES_REFUSED,	/* apply --live: in use, left exactly as it was (error says by whom) */
};

#define EXEC_ERROR_LEN 200 /* the longest error, with its NUL */

/*
 * One a PCI function (24 bytes); the driver before is the inventory's. The vfio nodes are
 * read for a device on a vfio driver when the run ends (with a kernel behind sysfs).
 */
struct exec_dev {
	const char *after; /* the driver read back, "" none: the inventory's or names' */
	const char *error; /* "", a fixed one, or allocated (error_owned): most have none */
	int group;	   /* IOMMU group read back after a bind, -1: none or not read */
	enum dev_result result : 8;
	bool verified : 1;
	bool error_owned : 1; /* exec_result_free() frees error */
	bool vfio_group : 1;  /* its group's /dev/vfio/GROUP is there (sys/class/vfio/GROUP) */
	int vfio_cdev : 21;   /* N of its /dev/vfio/devices/vfioN (a minor: < 2^20); -1 none */
};

struct exec_module {
	char name[DRIVER_LEN];
	int err;     /* 0 or -errno */
	bool loaded; /* loaded now (false: already there, or not loaded under --root) */
	char msg[200];
};

struct exec_result {
	struct exec_dev *dev; /* one per inventory device */
	size_t n_dev;
	struct exec_module modules[PLAN_MODULES_MAX];
	size_t n_modules;
	/* selected devices; n_failed also counts the plan's n_unidentified */
	size_t n_ok, n_failed, n_changed;
	size_t n_refused; /* selected devices that refuse() left as they were */
	bool failed_modules;
	struct strpool names; /* drivers read back that the inventory did not name */
};

struct exec_opts {
	bool load_modules; /* false under --root: record what would load */
	bool verify;	   /* false under --root: no kernel behind the files */
	unsigned timeout_ms;
	/*
	 * apply --live: asked before the first write to an IOMMU group (VM groups) or a device
	 * (the others), with the inventory indexes it is about. true refuses: each of them
	 * that the plan would change is left untouched, RES_REFUSED with why as its error.
	 */
	bool (*refuse)(void *data, const size_t *members, size_t n, char *why, size_t size);
	void *refuse_data;
};

/*
 * Carry the plan out: load the modules, then per device write driver_override, unbind,
 * probe, read the driver link back. A VM group is all or nothing. Every step's outcome is
 * in res, a failed one too; the whole fails only when res cannot be allocated (-ENOMEM),
 * before anything is written.
 */
int execute(const struct plan *p, const struct settings *s, const struct inventory *inv,
	    const struct exec_opts *o, struct exec_result *res);
void exec_result_free(struct exec_result *res);

const char *dev_result_name(enum dev_result r);
/* The IOMMU group of a device after the run: the inventory's, or the one its bind gave. */
int exec_group(const struct pci_dev *d, const struct exec_dev *ed);

#endif
