// SPDX-License-Identifier: MIT
/* The ResourceClaim reader (dra/claim.c): what prepare takes, and what it refuses. */
#include <errno.h>
#include <string.h>

#include "claim.h"
#include "unit.h"

static int parse(const char *json, struct claim_info *ci, char *why)
{
	return claim_parse(json, strlen(json), ci, why, 256);
}

static void allocated(void)
{
	static const char json[] =
		"{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\","
		"\"metadata\":{\"name\":\"c1\",\"namespace\":\"default\",\"uid\":\"u-1\",\"generation\":3,"
		"\"annotations\":{\"resource.kubernetes.io/pod-claim-name\":\"gpus\"}},"
		"\"status\":{\"allocation\":{\"devices\":{\"results\":["
		"{\"request\":\"gpu\",\"driver\":\"vfio.gpuvm.dev\",\"pool\":\"n1\",\"device\":\"gpu-0000-01-00-0\"},"
		"{\"request\":\"nic/fast\",\"driver\":\"other.dev\",\"pool\":\"p\",\"device\":\"d\",\"adminAccess\":null}]}}}}";
	struct claim_info ci;
	char why[256];

	CHECK_INT(parse(json, &ci, why), 0, "an allocated claim");
	CHECK_STR(ci.uid, "u-1", "its uid");
	CHECK_STR(ci.name, "c1", "its name");
	CHECK_STR(ci.ns, "default", "its namespace");
	CHECK_STR(ci.pod_claim_name, "gpus", "its pod claim name");
	CHECK_INT(ci.generation, 3, "its generation");
	CHECK(ci.allocated, "allocated");
	CHECK_INT(ci.n, 2, "two results");
	CHECK_STR(ci.res[0].device, "gpu-0000-01-00-0", "the first result's device");
	CHECK_STR(ci.res[1].request, "nic/fast", "a subrequest's name whole");
	CHECK_STR(ci.res[1].driver, "other.dev", "another driver's result is read too");
}

static void unallocated(void)
{
	struct claim_info ci;
	char why[256];

	CHECK_INT(parse("{\"metadata\":{\"uid\":\"u\"},\"status\":{}}", &ci, why), 0,
		  "no allocation: read");
	CHECK(!ci.allocated && ci.n == 0, "no allocation: not allocated, no results");
	CHECK_INT(parse("{\"metadata\":{\"uid\":\"u\"},\"status\":{\"allocation\":null}}", &ci, why),
		  0, "a null allocation: read");
	CHECK(!ci.allocated, "a null allocation: not allocated");
	CHECK_INT(parse("{\"status\":{\"allocation\":{}}}", &ci, why), 0, "an empty allocation");
	CHECK(ci.allocated && ci.n == 0, "an empty allocation: allocated, no results");
}

static void refused(void)
{
	static const struct {
		const char *name, *json, *why;
		int want;
	} t[] = {
		{ "not JSON", "{\"metadata\":", NULL, -EINVAL },
		{ "empty", "", NULL, -EINVAL },
		{ "a list", "[]", "not a JSON object", -EINVAL },
		{ "bytes after the object", "{} x", NULL, -EINVAL },
		{ "metadata a string", "{\"metadata\":\"x\"}", "metadata is not an object", -EINVAL },
		{ "uid a number", "{\"metadata\":{\"uid\":7}}", "metadata.uid is not a string", -EINVAL },
		{ "generation a string", "{\"metadata\":{\"generation\":\"1\"}}",
		  "metadata.generation is not an integer", -EINVAL },
		{ "results an object", "{\"status\":{\"allocation\":{\"devices\":{\"results\":{}}}}}",
		  "status.allocation.devices.results is not a list", -EINVAL },
		{ "a result a string",
		  "{\"status\":{\"allocation\":{\"devices\":{\"results\":[\"x\"]}}}}",
		  "status.allocation.devices.results[0] is not an object", -EINVAL },
		{ "a result without its device",
		  "{\"status\":{\"allocation\":{\"devices\":{\"results\":[{\"request\":\"r\",\"driver\":\"d\",\"pool\":\"p\"}]}}}}",
		  "status.allocation.devices.results[0].: request, driver, pool or device missing",
		  -EINVAL },
		{ "a device name too long",
		  "{\"status\":{\"allocation\":{\"devices\":{\"results\":[{\"request\":\"r\",\"driver\":\"d\",\"pool\":\"p\","
		  "\"device\":\"0123456789012345678901234567890123456789012345678901234567890123\"}]}}}}",
		  "status.allocation.devices.results[0].device is too long (or holds a NUL)",
		  -ENAMETOOLONG },
		{ "a NUL in a name", "{\"metadata\":{\"name\":\"a\\u0000b\"}}",
		  "metadata.name is too long (or holds a NUL)", -ENAMETOOLONG },
		{ "too deep",
		  "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
		  NULL, -EINVAL },
	};
	struct claim_info ci;
	char why[256];
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		CHECK_INT(parse(t[i].json, &ci, why), t[i].want, "refused: %s", t[i].name);
		if (t[i].why)
			CHECK_STR(why, t[i].why, "refused: %s: says why", t[i].name);
		CHECK_INT(ci.n, 0, "refused: %s: no results", t[i].name);
	}
}

static void too_many(void)
{
	char json[8192], *p = json;
	struct claim_info ci;
	char why[256];
	int i;

	p += sprintf(p, "{\"status\":{\"allocation\":{\"devices\":{\"results\":[");
	for (i = 0; i <= CLAIM_RESULTS_MAX; i++)
		p += sprintf(p, "%s{\"request\":\"r\",\"driver\":\"d\",\"pool\":\"p\",\"device\":\"d%d\"}",
			     i ? "," : "", i);
	sprintf(p, "]}}}}");
	CHECK_INT(parse(json, &ci, why), -E2BIG, "33 results: more than the API allows");
	CHECK_STR(why, "status.allocation.devices.results has 33 entries, more than 32",
		  "33 results: says so");
	/* Not NUL-terminated: only len bytes are read. */
	CHECK_INT(claim_parse("{\"metadata\":{}}garbage", 15, &ci, why, sizeof(why)), 0,
		  "only the length given is read");
}

int main(void)
{
	allocated();
	unallocated();
	refused();
	too_many();
	return unit_done();
}
