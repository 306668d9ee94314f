/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_DRA_KAPI_H
#define GPUVM_DRA_KAPI_H

#include <stddef.h>

/* The most an answer of the API server may hold. */
#define KAPI_BODY_MAX (8u << 20)

/*
 * The API server, as a pod reaches it, or as the label mirror's environment overrides it
 * (mirror/gpuvm-label-mirror: GPUVM_API_SERVER, GPUVM_API_TOKEN_FILE ("none": no token),
 * GPUVM_API_CA_FILE, GPUVM_API_TIMEOUT).
 */
struct kapi {
	char server[256];
	char token_file[256];
	char ca_file[256];
	long timeout_s;
};

/* From the environment; -EINVAL (why says) where no server can be made of it. */
int kapi_from_env(struct kapi *k, char *why, size_t whysize);

/*
 * One call: method on path ("/apis/..."), body (NULL: none) of content type ctype. The
 * answer's body (malloc'd, NUL-terminated) in *out, its HTTP status in *code. The token is
 * read at each call (a projected token rotates). -errno, with why, when no answer came.
 */
int kapi_call(const struct kapi *k, const char *method, const char *path, const char *ctype,
	      const char *body, char **out, size_t *out_len, long *code, char *why, size_t whysize);

#endif
