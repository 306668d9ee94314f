/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_DRA_DRASVC_H
#define GPUVM_DRA_DRASVC_H

#include <stdbool.h>
#include <stddef.h>

#include "h2srv.h"
#include "kapi.h"
#include "vfiodev.h"

/* What the services need: the options, the API, and what the kubelet said. */
struct dra_cfg {
	const char *node;      /* this node's name: the pool's */
	const char *dra_sock;  /* the endpoint GetInfo names */
	const char *cdi_dir;   /* the CDI specs */
	const char *state_dir; /* the device metadata files, under claims/ */
	enum vfio_backend backend;
	struct kapi api;
	bool api_ok;
	char api_why[256];
	bool registered; /* the kubelet's last NotifyRegistrationStatus */
	bool notified;	 /* one came since the last look (slices.c republishes) */
};

/* The methods of the registration socket and of the DRA socket. */
extern const struct h2_method reg_methods[];
extern const size_t n_reg_methods;
extern const struct h2_method dra_methods[];
extern const size_t n_dra_methods;

#endif
