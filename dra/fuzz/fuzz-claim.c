// SPDX-License-Identifier: MIT
/*
 * claim_parse, the ResourceClaim reader, on arbitrary bytes in an exact buffer (no NUL
 * after it: ASan sees a read past size).
 *
 * Invariants: 0 or one of -EINVAL, -ENAMETOOLONG, -E2BIG, -ENOMEM; the reason is
 * NUL-terminated within its buffer and said for every refusal but a refusal of the JSON
 * itself; on 0 every string of the claim is NUL-terminated within its field, at most
 * CLAIM_RESULTS_MAX results, each with its request, driver, pool and device; on an error
 * no result.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "claim.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                                                     \
	do {                                                                                         \
		if (!(c)) {                                                                          \
			fprintf(stderr, "invariant violated: %s (%s:%d)\n", #c, __FILE__, __LINE__); \
			abort();                                                                     \
		}                                                                                    \
	} while (0)

#define TERMINATED(f) (memchr((f), '\0', sizeof(f)) != NULL)

static struct claim_info ci;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size ? size : 1), why[128];
	size_t i;
	int r;

	if (!buf)
		abort();
	if (size)
		memcpy(buf, data, size);
	r = claim_parse(buf, size, &ci, why, sizeof(why));
	free(buf);
	CHECK(r == 0 || r == -EINVAL || r == -ENAMETOOLONG || r == -E2BIG || r == -ENOMEM);
	CHECK(TERMINATED(why));
	if (r < 0) {
		CHECK(ci.n == 0);
		CHECK(r == -ENOMEM || why[0]);
		return 0;
	}
	CHECK(TERMINATED(ci.uid) && TERMINATED(ci.name) && TERMINATED(ci.ns) &&
	      TERMINATED(ci.pod_claim_name));
	CHECK(ci.n <= CLAIM_RESULTS_MAX);
	CHECK(ci.allocated || ci.n == 0);
	for (i = 0; i < ci.n; i++) {
		const struct claim_result *cr = &ci.res[i];

		CHECK(TERMINATED(cr->request) && TERMINATED(cr->driver) && TERMINATED(cr->pool) &&
		      TERMINATED(cr->device));
		CHECK(cr->request[0] && cr->driver[0] && cr->pool[0] && cr->device[0]);
	}
	return 0;
}
