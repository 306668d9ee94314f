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
	RES_UNVERIFIED,	/* written, but no kernel to ask (--root) */
	RES_HELD,	/* the mode failed; claimed by no driver, as on_error=hold asks */
	RES_RELEASED,	/* the mode failed; given back to the host, as on_error=release asks */
	RES_FAILED,	/* a step failed: error says which */
};

#define EXEC_ERROR_LEN 200	/* the longest error, with its NUL */

struct exec_dev {
	enum dev_result result;
	const char *before;	/* the inventory's driver (the inventory outlives this) */
	char after[DRIVER_LEN];
	bool verified;
	int group;		/* IOMMU group read back after a bind, -1: none or not read */
	const char *error;	/* "", error_buf, or a fixed one: most devices have none */
	char *error_buf;	/* allocated, or NULL */
};

struct exec_module {
	char name[DRIVER_LEN];
	int err;		/* 0 or -errno */
	bool loaded;		/* loaded now (false: already there, or not loaded under --root) */
	char msg[200];
};

struct exec_result {
	struct exec_dev *dev;		/* one per inventory device */
	size_t n_dev;
	struct exec_module modules[PLAN_MODULES_MAX];
	size_t n_modules;
	size_t n_ok, n_failed, n_changed;	/* selected devices */
	bool failed_modules;
};

struct exec_opts {
	bool load_modules;		/* false under --root: record what would load */
	bool verify;			/* false under --root: no kernel behind the files */
	unsigned timeout_ms;
};

/*
 * Carry the plan out: load the modules, then per device write driver_override, unbind,
 * probe, read the driver link back. A VM group is all or nothing. Never fails as a
 * whole: every outcome is in res.
 */
int execute(const struct plan *p, const struct settings *s, const struct inventory *inv,
	    const struct exec_opts *o, struct exec_result *res);
void exec_result_free(struct exec_result *res);

const char *dev_result_name(enum dev_result r);

#endif
