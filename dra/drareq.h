/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_DRA_DRAREQ_H
#define GPUVM_DRA_DRAREQ_H

#include <stdbool.h>

/*
 * Pure: a claim of a NodePrepareResources or NodeUnprepareResources request, as protobuf-c
 * decoded it, names a namespace and a claim as the API takes them ([a-z0-9.-], at most 253,
 * not starting with '.' or '-') and a UID as the API makes them (uid_ok). What the plugin
 * checks before it asks the API or names a file by them.
 */
bool claim_ref_ok(const char *ns, const char *name, const char *uid);

#endif
