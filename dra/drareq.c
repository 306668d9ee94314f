// SPDX-License-Identifier: MIT
/* Pure: the checks of a decoded request's claim (drareq.h); dra/fuzz/fuzz-drareq.c calls them. */
#include <string.h>

#include "cdi.h"
#include "drareq.h"

/* A namespace or a claim's name as the API takes them: [a-z0-9.-], at most 253. */
static bool name_ok(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n <= 253 && strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789.-") == n &&
		s[0] != '.' && s[0] != '-';
}

bool claim_ref_ok(const char *ns, const char *name, const char *uid)
{
	return uid_ok(uid) && name_ok(ns) && name_ok(name);
}
