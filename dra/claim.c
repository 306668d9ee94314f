// SPDX-License-Identifier: MIT
/* The reader of a ResourceClaim's JSON: what prepare takes of it, every field checked. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "claim.h"

/* Nested objects deeper than this are no claim (json-c's own default is 32). */
#define CLAIM_DEPTH 24

/*
 * The string at key of o into buf: absent or null leaves "" (0); -EINVAL for another type,
 * -ENAMETOOLONG past size - 1.
 */
static int get_str(struct json_object *o, const char *key, char *buf, size_t size, char *why,
		   size_t whysize, const char *where)
{
	struct json_object *v;
	size_t n;

	buf[0] = '\0';
	if (!o || !json_object_object_get_ex(o, key, &v) || !v)
		return 0;
	if (!json_object_is_type(v, json_type_string)) {
		snprintf(why, whysize, "%s%s is not a string", where, key);
		return -EINVAL;
	}
	n = (size_t)json_object_get_string_len(v);
	if (n >= size || memchr(json_object_get_string(v), '\0', n)) {
		snprintf(why, whysize, "%s%s is too long (or holds a NUL)", where, key);
		return -ENAMETOOLONG;
	}
	memcpy(buf, json_object_get_string(v), n + 1);
	return 0;
}

/* The object at key of o: absent or null gives NULL (0); -EINVAL for another type. */
static int get_obj(struct json_object *o, const char *key, struct json_object **out, char *why,
		   size_t whysize, const char *where)
{
	struct json_object *v;

	*out = NULL;
	if (!o || !json_object_object_get_ex(o, key, &v) || !v)
		return 0;
	if (!json_object_is_type(v, json_type_object)) {
		snprintf(why, whysize, "%s%s is not an object", where, key);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int one_result(struct json_object *r, size_t i, struct claim_result *cr, char *why, size_t whysize)
{
	char where[64];
	int e;

	snprintf(where, sizeof(where), "status.allocation.devices.results[%zu].", i);
	if (!json_object_is_type(r, json_type_object)) {
		snprintf(why, whysize, "status.allocation.devices.results[%zu] is not an object", i);
		return -EINVAL;
	}
	if ((e = get_str(r, "request", cr->request, sizeof(cr->request), why, whysize, where)) ||
	    (e = get_str(r, "driver", cr->driver, sizeof(cr->driver), why, whysize, where)) ||
	    (e = get_str(r, "pool", cr->pool, sizeof(cr->pool), why, whysize, where)) ||
	    (e = get_str(r, "device", cr->device, sizeof(cr->device), why, whysize, where)))
		return e;
	if (!cr->request[0] || !cr->driver[0] || !cr->pool[0] || !cr->device[0]) {
		snprintf(why, whysize, "%s: request, driver, pool or device missing", where);
		return -EINVAL;
	}
	return 0;
}

static int read_claim(struct json_object *root, struct claim_info *ci, char *why, size_t whysize)
{
	struct json_object *meta, *ann, *status, *alloc, *devs, *results, *gen;
	size_t i, n;
	int e;

	if (!json_object_is_type(root, json_type_object)) {
		snprintf(why, whysize, "not a JSON object");
		return -EINVAL;
	}
	if ((e = get_obj(root, "metadata", &meta, why, whysize, "")) ||
	    (e = get_str(meta, "uid", ci->uid, sizeof(ci->uid), why, whysize, "metadata.")) ||
	    (e = get_str(meta, "name", ci->name, sizeof(ci->name), why, whysize, "metadata.")) ||
	    (e = get_str(meta, "namespace", ci->ns, sizeof(ci->ns), why, whysize, "metadata.")) ||
	    (e = get_obj(meta, "annotations", &ann, why, whysize, "metadata.")) ||
	    (e = get_str(ann, "resource.kubernetes.io/pod-claim-name", ci->pod_claim_name,
			 sizeof(ci->pod_claim_name), why, whysize, "metadata.annotations.")))
		return e;
	if (meta && json_object_object_get_ex(meta, "generation", &gen) && gen) {
		if (!json_object_is_type(gen, json_type_int)) {
			snprintf(why, whysize, "metadata.generation is not an integer");
			return -EINVAL;
		}
		ci->generation = json_object_get_int64(gen);
	}
	if ((e = get_obj(root, "status", &status, why, whysize, "")) ||
	    (e = get_obj(status, "allocation", &alloc, why, whysize, "status.")))
		return e;
	ci->allocated = alloc != NULL;
	if ((e = get_obj(alloc, "devices", &devs, why, whysize, "status.allocation.")))
		return e;
	if (!devs || !json_object_object_get_ex(devs, "results", &results) || !results)
		return 0;
	if (!json_object_is_type(results, json_type_array)) {
		snprintf(why, whysize, "status.allocation.devices.results is not a list");
		return -EINVAL;
	}
	n = json_object_array_length(results);
	if (n > CLAIM_RESULTS_MAX) {
		snprintf(why, whysize,
			 "status.allocation.devices.results has %zu entries, more than %d", n,
			 CLAIM_RESULTS_MAX);
		return -E2BIG;
	}
	for (i = 0; i < n; i++)
		if ((e = one_result(json_object_array_get_idx(results, i), i, &ci->res[i], why, whysize)))
			return e;
	ci->n = n;
	return 0;
}

int claim_parse(const char *json, size_t len, struct claim_info *ci, char *why, size_t whysize)
{
	struct json_tokener *tok;
	struct json_object *root;
	size_t end;
	int e;

	memset(ci, 0, sizeof(*ci));
	why[0] = '\0';
	if (len > (size_t)(1 << 30)) {
		snprintf(why, whysize, "too large");
		return -EINVAL;
	}
	tok = json_tokener_new_ex(CLAIM_DEPTH);
	if (!tok)
		return -ENOMEM;
	root = json_tokener_parse_ex(tok, json, (int)len);
	if (!root || json_tokener_get_error(tok) != json_tokener_success) {
		snprintf(why, whysize, "not JSON: %s",
			 root ? "trailing data" :
				json_tokener_error_desc(json_tokener_get_error(tok) ==
									json_tokener_continue ?
								json_tokener_error_parse_eof :
								json_tokener_get_error(tok)));
		json_object_put(root);
		json_tokener_free(tok);
		return -EINVAL;
	}
	end = json_tokener_get_parse_end(tok);
	while (end < len && json[end] && strchr(" \t\r\n", json[end]))
		end++;
	if (end < len) {
		snprintf(why, whysize, "not JSON: bytes after the object");
		json_object_put(root);
		json_tokener_free(tok);
		return -EINVAL;
	}
	e = read_claim(root, ci, why, whysize);
	json_object_put(root);
	json_tokener_free(tok);
	if (e)
		ci->n = 0;
	return e;
}
