// SPDX-License-Identifier: MIT
/*
 * The node's ResourceSlices (resource.k8s.io/v1): one pool, the node's name, of the GPUs on
 * vfio with a viable group, at most per_slice (SLICE_DEVICES_MAX) a slice, each slice named
 * NODE-vfio.gpuvm.dev-I and owned by the Node (deleted with it). The pool's generation is
 * bumped whenever what is published changes; a GPU not ready is left out, and why is logged.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "rootio.h"
#include "util.h"

#include "cdi.h"
#include "dralog.h"
#include "drasvc.h"
#include "promfile.h"
#include "slices.h"

#define SLICES_MAX 64 /* 8,192 GPUs: more than any node holds */

static long long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000LL;
}

static int call(struct slices *s, const char *method, const char *path, struct json_object *body,
		struct json_object **out, long *code);

/*
 * A Warning Event on the Node for a GPU left out that is gpuvm's business: pinned by it, its
 * boot bind failed, or on vfio without its record. One a change of what is published (as the
 * log line), in default (where the kubelet puts a node's events); a refusal is logged by call.
 */
static void event(struct slices *s, const struct vfio_gpu *g)
{
	struct json_object *o, *m, *io, *src;
	char ts[32], gen[300], msg[600];
	time_t now = time(NULL);
	struct tm tm;
	long code;

	if (!s->cfg->api_ok || !s->events ||
	    !(g->pinned ||
	      (g->reason && (streq(g->reason, "boot_failed") || streq(g->reason, "not_pinned")))))
		return;
	gmtime_r(&now, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	snprintf(gen, sizeof(gen), "%s.gpuvm-dra-", s->cfg->node);
	snprintf(msg, sizeof(msg), "%s (%s) not published (%s): %s", g->name, g->bdf, g->reason,
		 g->why);
	o = json_object_new_object();
	m = json_object_new_object();
	io = json_object_new_object();
	src = json_object_new_object();
	json_object_object_add(o, "apiVersion", json_object_new_string("v1"));
	json_object_object_add(o, "kind", json_object_new_string("Event"));
	json_object_object_add(m, "generateName", json_object_new_string(gen));
	json_object_object_add(m, "namespace", json_object_new_string("default"));
	json_object_object_add(o, "metadata", m);
	json_object_object_add(io, "apiVersion", json_object_new_string("v1"));
	json_object_object_add(io, "kind", json_object_new_string("Node"));
	json_object_object_add(io, "name", json_object_new_string(s->cfg->node));
	json_object_object_add(o, "involvedObject", io);
	json_object_object_add(o, "type", json_object_new_string("Warning"));
	json_object_object_add(o, "reason", json_object_new_string("GPUNotPublished"));
	json_object_object_add(o, "message", json_object_new_string(msg));
	json_object_object_add(src, "component", json_object_new_string("gpuvm-dra"));
	json_object_object_add(src, "host", json_object_new_string(s->cfg->node));
	json_object_object_add(o, "source", src);
	json_object_object_add(o, "reportingComponent", json_object_new_string("gpuvm-dra"));
	json_object_object_add(o, "reportingInstance", json_object_new_string(s->cfg->node));
	json_object_object_add(o, "firstTimestamp", json_object_new_string(ts));
	json_object_object_add(o, "lastTimestamp", json_object_new_string(ts));
	json_object_object_add(o, "count", json_object_new_int(1));
	call(s, "POST", "/api/v1/namespaces/default/events", o, NULL, &code);
	json_object_put(o);
}

/* The metrics file, rewritten only when its text changes; a failure said once. */
static void put_metrics(struct slices *s, const struct vfio_gpu *g, size_t n)
{
	char *text;
	bool changed;
	int r;

	if (!s->metrics_dir || !(text = prom_text(g, n)))
		return;
	r = file_put(s->metrics_dir, PROM_FILE, text, &changed);
	if (r < 0 && !s->metrics_failed)
		dra_log("slices: cannot write %s/%s: %s", s->metrics_dir, PROM_FILE, strerror(-r));
	s->metrics_failed = r < 0;
	free(text);
}

/* The devices of the ready GPUs, as the slices list them; the others logged when they change. */
static struct json_object *devices(struct slices *s, char **text)
{
	struct json_object *devs = json_object_new_array();
	struct vfio_gpu *g;
	bool iommu_dev = root_exists("dev/iommu");
	size_t i, n;
	int r = vfio_gpus(&g, &n);

	*text = NULL;
	if (r < 0) {
		dra_log("slices: cannot read the PCI devices: %s", strerror(-r));
		json_object_put(devs);
		return NULL;
	}
	for (i = 0; i < n; i++) {
		struct json_object *d;

		if (!g[i].ready)
			continue;
		d = json_object_new_object();
		json_object_object_add(d, "name", json_object_new_string(g[i].name));
		json_object_object_add(d, "attributes",
				       gpu_attributes(&g[i], iommu_dev && g[i].cdev[0]));
		json_object_array_add(devs, d);
	}
	*text = json_text(devs, false);
	if (*text && (!s->published || !streq(*text, s->published)))
		for (i = 0; i < n; i++)
			if (!g[i].ready) {
				dra_log("slices: %s (%s) not published: %s", g[i].name, g[i].bdf,
					g[i].why);
				event(s, &g[i]);
			}
	put_metrics(s, g, n);
	free(g);
	return devs;
}

static int call(struct slices *s, const char *method, const char *path, struct json_object *body,
		struct json_object **out, long *code)
{
	char why[300], *text = NULL, *ans = NULL;
	size_t len;
	int r;

	if (body && !(text = json_text(body, false)))
		return -ENOMEM;
	r = kapi_call(&s->cfg->api, method, path, "application/json", text, &ans, &len, code, why,
		      sizeof(why));
	free(text);
	if (r < 0) {
		dra_log("slices: %s", why);
		return r;
	}
	if (out)
		*out = json_tokener_parse(ans);
	if (*code < 200 || *code > 299) {
		struct json_object *o = json_tokener_parse(ans), *m;

		dra_log("slices: %s %s: %ld: %s", method, path, *code,
			o && json_object_object_get_ex(o, "message", &m) ? json_object_get_string(m) :
									   "(no Status)");
		json_object_put(o);
		r = -EIO;
	}
	free(ans);
	return r;
}

static const char *str_at(struct json_object *o, const char *a, const char *b)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, a, &o) || (b && !json_object_object_get_ex(o, b, &o)))
		return NULL;
	v = o;
	return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static struct json_object *slice(const struct slices *s, const char *name, const char *node_uid,
				 struct json_object *devs, size_t from, size_t count,
				 size_t n_slices, long long gen)
{
	struct json_object *o = json_object_new_object(), *m = json_object_new_object();
	struct json_object *own = json_object_new_object(), *owns = json_object_new_array();
	struct json_object *spec = json_object_new_object(), *pool = json_object_new_object();
	struct json_object *list = json_object_new_array();
	size_t i;

	json_object_object_add(o, "apiVersion", json_object_new_string("resource.k8s.io/v1"));
	json_object_object_add(o, "kind", json_object_new_string("ResourceSlice"));
	json_object_object_add(m, "name", json_object_new_string(name));
	json_object_object_add(own, "apiVersion", json_object_new_string("v1"));
	json_object_object_add(own, "kind", json_object_new_string("Node"));
	json_object_object_add(own, "name", json_object_new_string(s->cfg->node));
	json_object_object_add(own, "uid", json_object_new_string(node_uid));
	json_object_object_add(own, "controller", json_object_new_boolean(1));
	json_object_array_add(owns, own);
	json_object_object_add(m, "ownerReferences", owns);
	json_object_object_add(o, "metadata", m);
	json_object_object_add(spec, "driver", json_object_new_string(DRA_DRIVER));
	json_object_object_add(spec, "nodeName", json_object_new_string(s->cfg->node));
	json_object_object_add(pool, "name", json_object_new_string(s->cfg->node));
	json_object_object_add(pool, "generation", json_object_new_int64(gen));
	json_object_object_add(pool, "resourceSliceCount", json_object_new_int64((int64_t)n_slices));
	json_object_object_add(spec, "pool", pool);
	for (i = from; i < from + count; i++)
		json_object_array_add(list, json_object_get(json_object_array_get_idx(devs, i)));
	json_object_object_add(spec, "devices", list);
	json_object_object_add(o, "spec", spec);
	return o;
}

/* Whether the slice on the API holds what is to be published (the generation aside). */
static bool same_slice(struct json_object *have, struct json_object *want)
{
	struct json_object *hs, *ws, *hp, *wp, *a, *b;
	const char *keys[] = { "driver", "nodeName", "devices" };
	size_t i;

	if (!json_object_object_get_ex(have, "spec", &hs) ||
	    !json_object_object_get_ex(want, "spec", &ws))
		return false;
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (!json_object_object_get_ex(hs, keys[i], &a))
			a = NULL;
		json_object_object_get_ex(ws, keys[i], &b);
		if (!json_object_equal(a, b))
			return false;
	}
	if (!json_object_object_get_ex(hs, "pool", &hp) || !json_object_object_get_ex(ws, "pool", &wp) ||
	    !json_object_object_get_ex(hp, "resourceSliceCount", &a) ||
	    !json_object_object_get_ex(wp, "resourceSliceCount", &b) || !json_object_equal(a, b) ||
	    !json_object_object_get_ex(hp, "name", &a) ||
	    !json_object_object_get_ex(wp, "name", &b) || !json_object_equal(a, b))
		return false;
	return true;
}

/* The API's slices of this node and driver, by name into have[] (NULL where none). */
static int existing(struct slices *s, struct json_object **list, long long *max_gen)
{
	char path[600];
	struct json_object *items;
	long code;
	size_t i;
	int r;

	snprintf(path, sizeof(path),
		 "/apis/resource.k8s.io/v1/resourceslices?fieldSelector=spec.nodeName%%3D%s,spec.driver%%3D%s",
		 s->cfg->node, DRA_DRIVER);
	r = call(s, "GET", path, NULL, list, &code);
	if (r < 0 || !*list || !json_object_object_get_ex(*list, "items", &items) ||
	    !json_object_is_type(items, json_type_array)) {
		json_object_put(*list);
		*list = NULL;
		return r < 0 ? r : -EPROTO;
	}
	*max_gen = 0;
	for (i = 0; i < json_object_array_length(items); i++) {
		struct json_object *it = json_object_array_get_idx(items, i), *sp, *p, *g;

		if (json_object_object_get_ex(it, "spec", &sp) &&
		    json_object_object_get_ex(sp, "pool", &p) &&
		    json_object_object_get_ex(p, "generation", &g) &&
		    json_object_get_int64(g) > *max_gen)
			*max_gen = json_object_get_int64(g);
	}
	return 0;
}

static struct json_object *find(struct json_object *list, const char *name)
{
	struct json_object *items;
	size_t i;

	json_object_object_get_ex(list, "items", &items);
	for (i = 0; i < json_object_array_length(items); i++) {
		const char *n = str_at(json_object_array_get_idx(items, i), "metadata", "name");

		if (n && streq(n, name))
			return json_object_array_get_idx(items, i);
	}
	return NULL;
}

/* Publish devs: the slices made to hold them, the others of the pool deleted. */
static int publish(struct slices *s, struct json_object *devs)
{
	struct json_object *list = NULL, *node = NULL, *want[SLICES_MAX], *items;
	size_t n = json_object_array_length(devs), n_slices, i;
	char name[300], path[600];
	const char *uid;
	long long gen = 0;
	bool same = true;
	long code;
	int r;

	n_slices = n ? (n + s->per_slice - 1) / s->per_slice : 1;
	if (n_slices > SLICES_MAX)
		return -E2BIG;
	snprintf(path, sizeof(path), "/api/v1/nodes/%s", s->cfg->node);
	if ((r = call(s, "GET", path, NULL, &node, &code)) < 0 || !node ||
	    !(uid = str_at(node, "metadata", "uid"))) {
		json_object_put(node);
		return r < 0 ? r : -EPROTO;
	}
	if ((r = existing(s, &list, &gen)) < 0) {
		json_object_put(node);
		return r;
	}
	for (i = 0; i < n_slices; i++) {
		size_t from = i * s->per_slice, cnt = n - from < s->per_slice ? n - from : s->per_slice;

		snprintf(name, sizeof(name), "%s-%s-%zu", s->cfg->node, DRA_DRIVER, i);
		want[i] = slice(s, name, uid, devs, n ? from : 0, n ? cnt : 0, n_slices, 0);
		if (!find(list, name) || !same_slice(find(list, name), want[i]))
			same = false;
	}
	json_object_object_get_ex(list, "items", &items);
	if (json_object_array_length(items) != n_slices)
		same = false;
	if (!same) {
		gen = (gen > s->generation ? gen : s->generation) + 1;
		for (i = 0; i < n_slices && r == 0; i++) {
			struct json_object *have, *sp, *p;
			const char *nm = str_at(want[i], "metadata", "name"), *rv;

			json_object_object_get_ex(want[i], "spec", &sp);
			json_object_object_get_ex(sp, "pool", &p);
			json_object_object_add(p, "generation", json_object_new_int64(gen));
			have = find(list, nm);
			if (have && (rv = str_at(have, "metadata", "resourceVersion"))) {
				struct json_object *m;

				json_object_object_get_ex(want[i], "metadata", &m);
				json_object_object_add(m, "resourceVersion",
						       json_object_new_string(rv));
				snprintf(path, sizeof(path),
					 "/apis/resource.k8s.io/v1/resourceslices/%s", nm);
				r = call(s, "PUT", path, want[i], NULL, &code);
			} else {
				r = call(s, "POST", "/apis/resource.k8s.io/v1/resourceslices",
					 want[i], NULL, &code);
			}
		}
		for (i = 0; r == 0 && i < json_object_array_length(items); i++) {
			const char *nm =
				str_at(json_object_array_get_idx(items, i), "metadata", "name");
			size_t k;

			for (k = 0;
			     nm && k < n_slices && !streq(nm, str_at(want[k], "metadata", "name")); k++)
				;
			if (!nm || k < n_slices)
				continue;
			snprintf(path, sizeof(path), "/apis/resource.k8s.io/v1/resourceslices/%s", nm);
			r = call(s, "DELETE", path, NULL, NULL, &code);
		}
		if (r == 0) {
			s->generation = gen;
			dra_log("slices: pool %s, generation %lld: %zu devices in %zu slices",
				s->cfg->node, gen, n, n_slices);
		}
	}
	for (i = 0; i < n_slices; i++)
		json_object_put(want[i]);
	json_object_put(list);
	json_object_put(node);
	return r;
}

void slices_tick(void *data)
{
	struct slices *s = data;
	struct json_object *devs;
	char *text;
	long long now = mono_ms();

	if (!s->enabled)
		return;
	if (s->cfg->notified) {
		s->cfg->notified = false;
		s->sync = s->recheck = true;
	} else if (s->published && now < s->next_ms) {
		return;
	}
	s->next_ms = now + s->interval_s * 1000;
	devs = devices(s, &text);
	if (!devs || !text) {
		json_object_put(devs);
		free(text);
		return;
	}
	if (!s->published || !streq(text, s->published) || s->sync) {
		if (!s->cfg->api_ok || publish(s, devs) < 0) {
			/* Asked again at the next interval. */
			free(s->published);
			s->published = strdup("");
			s->sync = true;
		} else {
			free(s->published);
			s->published = text;
			text = NULL;
			s->sync = s->recheck;
			s->recheck = false;
		}
	}
	free(text);
	json_object_put(devs);
}

void slices_fini(struct slices *s)
{
	free(s->published);
	s->published = NULL;
}
