/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_DRA_CLAIM_H
#define GPUVM_DRA_CLAIM_H

#include <stdbool.h>
#include <stddef.h>

/* The API's bound on a claim's allocation results (resource.k8s.io/v1). */
#define CLAIM_RESULTS_MAX 32

/* One allocated device: request ("REQ" or "REQ/SUBREQ"), driver, pool, device. */
struct claim_result {
	char request[128];
	char driver[64];
	char pool[254];
	char device[64];
};

/* What prepare needs of a ResourceClaim (resource.k8s.io/v1). Strings "" when absent. */
struct claim_info {
	char uid[64];
	char name[254];
	char ns[64];
	char pod_claim_name[254]; /* the annotation resource.kubernetes.io/pod-claim-name */
	long long generation;	  /* metadata.generation, 0 when absent */
	bool allocated;		  /* status.allocation is there */
	struct claim_result res[CLAIM_RESULTS_MAX];
	size_t n;
};

/*
 * Pure: the claim of the API's JSON (len bytes, not necessarily NUL-terminated), trusting
 * nothing of it: -EINVAL for what is not a JSON object, a field of the wrong type or a
 * result without its driver, pool, device or request; -ENAMETOOLONG for a string longer
 * than its field; -E2BIG for more than CLAIM_RESULTS_MAX results. why (of size whysize)
 * says which field.
 */
int claim_parse(const char *json, size_t len, struct claim_info *ci, char *why, size_t whysize);

#endif
