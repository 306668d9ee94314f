// SPDX-License-Identifier: MIT
/*
 * The kubelet's two services: registration (GetInfo, NotifyRegistrationStatus) and DRA
 * (NodePrepareResources, NodeUnprepareResources). Prepare reads the claim from the API,
 * checks each device it names is still on vfio with its IOMMU group viable (never binding
 * anything), and writes a CDI spec and the device metadata; its files are named by the
 * claim's UID, so that they are the state: a restarted plugin finds them, and unprepare
 * removes them and nothing else.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "dra.pb-c.h"
#include "pluginregistration.pb-c.h"

#include "cdi.h"
#include "claim.h"
#include "dralog.h"
#include "drareq.h"
#include "drasvc.h"
#include "grpcframe.h"
#include "rootio.h"
#include "util.h"

#define D(x) K8s__Io__Kubelet__Pkg__Apis__Dra__V1__##x
#define DD(x) k8s__io__kubelet__pkg__apis__dra__v1__##x##__descriptor

/* Everything a reply is made of, freed at once when it is packed. */
struct arena {
	void **p;
	size_t n, cap;
	bool failed;
};

static void *a_alloc(struct arena *a, size_t size)
{
	void *p, **np;

	if (a->n == a->cap) {
		np = realloc(a->p, (a->cap ? a->cap * 2 : 64) * sizeof(*np));
		if (!np) {
			a->failed = true;
			return NULL;
		}
		a->p = np;
		a->cap = a->cap ? a->cap * 2 : 64;
	}
	p = calloc(1, size);
	if (!p) {
		a->failed = true;
		return NULL;
	}
	a->p[a->n++] = p;
	return p;
}

static char *a_strdup(struct arena *a, const char *s)
{
	char *p = a_alloc(a, strlen(s) + 1);

	if (p)
		memcpy(p, s, strlen(s) + 1);
	return p ? p : (char *)"";
}

static void a_free(struct arena *a)
{
	while (a->n)
		free(a->p[--a->n]);
	free(a->p);
	a->p = NULL;
	a->cap = 0;
}

/* Pack m as the reply: GRPC_OK, or RESOURCE_EXHAUSTED when memory ran out. */
static int reply(const ProtobufCMessage *m, struct arena *a, uint8_t **resp, size_t *len, char *err,
		 size_t errsize)
{
	size_t n;

	if (a->failed) {
		fmt_cut(err, errsize, "out of memory");
		return GRPC_RESOURCE_EXHAUSTED;
	}
	n = protobuf_c_message_get_packed_size(m);
	*resp = malloc(n ? n : 1);
	if (!*resp) {
		fmt_cut(err, errsize, "out of memory");
		return GRPC_RESOURCE_EXHAUSTED;
	}
	*len = protobuf_c_message_pack(m, *resp);
	return GRPC_OK;
}

static int get_info(const uint8_t *req, size_t len, uint8_t **resp, size_t *resp_len, char *err,
		    size_t errsize, void *data)
{
	const struct dra_cfg *cfg = data;
	Pluginregistration__PluginInfo info = PLUGINREGISTRATION__PLUGIN_INFO__INIT;
	static char *versions[] = { (char *)"v1.DRAPlugin" };
	struct arena a = { .n = 0 };
	ProtobufCMessage *m;
	int r;

	m = protobuf_c_message_unpack(&pluginregistration__info_request__descriptor, NULL, len, req);
	if (!m) {
		fmt_cut(err, errsize, "the InfoRequest cannot be decoded");
		return GRPC_INVALID_ARGUMENT;
	}
	protobuf_c_message_free_unpacked(m, NULL);
	info.type = (char *)"DRAPlugin";
	info.name = (char *)DRA_DRIVER;
	info.endpoint = (char *)cfg->dra_sock;
	info.n_supported_versions = 1;
	info.supported_versions = versions;
	r = reply(&info.base, &a, resp, resp_len, err, errsize);
	dra_log("registration: GetInfo: %s, endpoint %s", DRA_DRIVER, cfg->dra_sock);
	return r;
}

static int notify(const uint8_t *req, size_t len, uint8_t **resp, size_t *resp_len, char *err,
		  size_t errsize, void *data)
{
	struct dra_cfg *cfg = data;
	Pluginregistration__RegistrationStatusResponse out =
		PLUGINREGISTRATION__REGISTRATION_STATUS_RESPONSE__INIT;
	Pluginregistration__RegistrationStatus *st;
	struct arena a = { .n = 0 };

	st = (Pluginregistration__RegistrationStatus *)
		protobuf_c_message_unpack(&pluginregistration__registration_status__descriptor,
					  NULL, len, req);
	if (!st) {
		fmt_cut(err, errsize, "the RegistrationStatus cannot be decoded");
		return GRPC_INVALID_ARGUMENT;
	}
	cfg->registered = st->plugin_registered;
	cfg->notified = true;
	if (st->plugin_registered)
		dra_log("registration: the kubelet registered %s", DRA_DRIVER);
	else
		dra_log("registration: the kubelet did not register %s: %s", DRA_DRIVER,
			st->error[0] ? st->error : "no reason given");
	protobuf_c_message_free_unpacked(&st->base, NULL);
	return reply(&out.base, &a, resp, resp_len, err, errsize);
}

/* The API's Status message of an error answer, or its first line. */
static void api_message(const char *body, char *out, size_t size)
{
	struct json_object *o = json_tokener_parse(body), *m;

	if (o && json_object_object_get_ex(o, "message", &m) && json_object_is_type(m, json_type_string))
		snprintf(out, size, "%s", json_object_get_string(m));
	else
		snprintf(out, size, "%.*s", (int)strcspn(body, "\n"), body);
	json_object_put(o);
}

/* One device of the claim, checked: its GPU, its nodes. */
struct dev {
	const struct claim_result *r;
	const struct vfio_gpu *g;
	char req[64]; /* the request's own name: "REQ" of "REQ/SUBREQ" */
	char node[2][64];
	bool first_of_req; /* carries the request's metadata device */
};

struct prep {
	struct dra_cfg *cfg;
	struct vfio_gpu *gpus;
	size_t n_gpus;
	bool iommu_dev; /* /dev/iommu exists */
	bool scanned;
	int scan_err;
};

static int check_devices(struct prep *p, const struct claim_info *ci, struct dev *dv, size_t *n,
			 char *err, size_t errsize)
{
	size_t i, k;

	*n = 0;
	for (i = 0; i < ci->n; i++) {
		const struct claim_result *r = &ci->res[i];
		struct dev *d = &dv[*n];

		if (!streq(r->driver, DRA_DRIVER))
			continue;
		memset(d, 0, sizeof(*d));
		d->r = r;
		if (!streq(r->pool, p->cfg->node)) {
			fmt_cut(err, errsize, "device %s/%s is in pool %s, not this node's (%s)",
				r->pool, r->device, r->pool, p->cfg->node);
			return -EINVAL;
		}
		snprintf(d->req, sizeof(d->req), "%.*s", (int)strcspn(r->request, "/"), r->request);
		if (!dns_label(d->req) || !dns_label(r->device)) {
			fmt_cut(err, errsize, "request %s or device %s is not a DNS label",
				r->request, r->device);
			return -EINVAL;
		}
		if (!p->scanned) {
			p->scanned = true;
			p->scan_err = vfio_gpus(&p->gpus, &p->n_gpus);
			p->iommu_dev = root_exists("dev/iommu");
		}
		if (p->scan_err) {
			fmt_cut(err, errsize, "cannot read the PCI devices: %s",
				strerror(-p->scan_err));
			return p->scan_err;
		}
		for (k = 0; k < p->n_gpus && !streq(p->gpus[k].name, r->device); k++)
			;
		if (k == p->n_gpus) {
			fmt_cut(err, errsize, "device %s: no such GPU on node %s", r->device,
				p->cfg->node);
			return -ENODEV;
		}
		d->g = &p->gpus[k];
		if (!d->g->ready) {
			fmt_cut(err, errsize,
				"device %s: %s; gpuvm-dra binds nothing: the GPU must be on vfio since boot (gpuvm)",
				r->device, d->g->why);
			return -EBUSY;
		}
		if (vfio_nodes(d->g, p->cfg->backend, d->node, err, errsize) < 0)
			return -ENODEV;
		for (k = 0; k < *n && !streq(dv[k].req, d->req); k++)
			;
		d->first_of_req = k == *n;
		(*n)++;
	}
	return 0;
}

/* The host file of a request's metadata: STATE/claims/UID/REQ. */
static void meta_dir(const struct prep *p, const char *uid, const char *req, char *out, size_t size)
{
	snprintf(out, size, "%s/claims/%s/%s", p->cfg->state_dir, uid, req);
}

static void container_path(const struct claim_info *ci, const char *req, char *out, size_t size)
{
	if (ci->pod_claim_name[0])
		snprintf(out, size, "%s/resourceclaimtemplates/%s/%s/%s", METADATA_CONTAINER_DIR,
			 ci->pod_claim_name, req, METADATA_FILE);
	else
		snprintf(out, size, "%s/resourceclaims/%s/%s/%s", METADATA_CONTAINER_DIR, ci->name,
			 req, METADATA_FILE);
}

/* The metadata stream of request req: v1beta1's object, then v1alpha1's (KubeVirt 1.9.0's). */
static char *metadata(const struct prep *p, const struct claim_info *ci, const struct dev *dv,
		      size_t n, const char *req)
{
	static const char *const versions[] = { "metadata.resource.k8s.io/v1beta1",
						"metadata.resource.k8s.io/v1alpha1" };
	char *text[2] = { NULL, NULL }, *out = NULL;
	size_t v, i;

	for (v = 0; v < 2; v++) {
		struct json_object *o = json_object_new_object(), *m = json_object_new_object();
		struct json_object *reqs = json_object_new_array(), *r = json_object_new_object();
		struct json_object *devs = json_object_new_array();

		json_object_object_add(o, "apiVersion", json_object_new_string(versions[v]));
		json_object_object_add(o, "kind", json_object_new_string("DeviceMetadata"));
		json_object_object_add(m, "name", json_object_new_string(ci->name));
		json_object_object_add(m, "namespace", json_object_new_string(ci->ns));
		json_object_object_add(m, "uid", json_object_new_string(ci->uid));
		json_object_object_add(m, "generation", json_object_new_int64(ci->generation));
		json_object_object_add(o, "metadata", m);
		if (ci->pod_claim_name[0])
			json_object_object_add(o, "podClaimName",
					       json_object_new_string(ci->pod_claim_name));
		json_object_object_add(r, "name", json_object_new_string(req));
		for (i = 0; i < n; i++) {
			struct json_object *d;

			if (!streq(dv[i].req, req))
				continue;
			d = json_object_new_object();
			json_object_object_add(d, "driver", json_object_new_string(DRA_DRIVER));
			json_object_object_add(d, "pool", json_object_new_string(dv[i].r->pool));
			json_object_object_add(d, "name", json_object_new_string(dv[i].r->device));
			json_object_object_add(d, "attributes",
					       gpu_attributes(dv[i].g,
							      p->iommu_dev && dv[i].g->cdev[0]));
			json_object_array_add(devs, d);
		}
		json_object_object_add(r, "devices", devs);
		json_object_array_add(reqs, r);
		json_object_object_add(o, "requests", reqs);
		text[v] = json_text(o, false);
		json_object_put(o);
	}
	if (text[0] && text[1] && asprintf(&out, "%s\n%s\n", text[0], text[1]) < 0)
		out = NULL;
	free(text[0]);
	free(text[1]);
	return out;
}

static void node_edit(struct json_object *nodes, const char *path)
{
	struct json_object *n = json_object_new_object();

	json_object_object_add(n, "path", json_object_new_string(path));
	json_object_object_add(n, "hostPath", json_object_new_string(path));
	json_object_object_add(n, "permissions", json_object_new_string("rw"));
	json_object_array_add(nodes, n);
}

/* The CDI spec of the claim: a device a GPU, and one a request for its metadata's mount. */
static char *spec(const struct prep *p, const struct claim_info *ci, const struct dev *dv, size_t n)
{
	struct json_object *o = json_object_new_object(), *devs = json_object_new_array();
	char name[160], path[PATH_MAX], dir[2048], *text;
	size_t i;

	json_object_object_add(o, "cdiVersion", json_object_new_string(CDI_VERSION));
	json_object_object_add(o, "kind", json_object_new_string(CDI_KIND));
	for (i = 0; i < n; i++) {
		struct json_object *d, *e, *nodes;
		size_t k;

		/* A device two results name (admin access) is one device of the spec. */
		for (k = 0; k < i && !streq(dv[k].r->device, dv[i].r->device); k++)
			;
		if (k < i)
			continue;
		d = json_object_new_object();
		e = json_object_new_object();
		nodes = json_object_new_array();
		snprintf(name, sizeof(name), "%s-%s", ci->uid, dv[i].r->device);
		json_object_object_add(d, "name", json_object_new_string(name));
		node_edit(nodes, dv[i].node[0]);
		node_edit(nodes, dv[i].node[1]);
		json_object_object_add(e, "deviceNodes", nodes);
		json_object_object_add(d, "containerEdits", e);
		json_object_array_add(devs, d);
	}
	for (i = 0; i < n; i++) {
		struct json_object *d, *e, *mounts, *mnt, *opts;

		if (!dv[i].first_of_req)
			continue;
		d = json_object_new_object();
		e = json_object_new_object();
		mounts = json_object_new_array();
		mnt = json_object_new_object();
		opts = json_object_new_array();
		snprintf(name, sizeof(name), "%s-metadata-%s", ci->uid, dv[i].req);
		json_object_object_add(d, "name", json_object_new_string(name));
		meta_dir(p, ci->uid, dv[i].req, dir, sizeof(dir));
		snprintf(path, sizeof(path), "%s/%s", dir, METADATA_FILE);
		json_object_object_add(mnt, "hostPath", json_object_new_string(path));
		container_path(ci, dv[i].req, path, sizeof(path));
		json_object_object_add(mnt, "containerPath", json_object_new_string(path));
		json_object_array_add(opts, json_object_new_string("ro"));
		json_object_array_add(opts, json_object_new_string("bind"));
		json_object_object_add(mnt, "options", opts);
		json_object_array_add(mounts, mnt);
		json_object_object_add(e, "mounts", mounts);
		json_object_object_add(d, "containerEdits", e);
		json_object_array_add(devs, d);
	}
	json_object_object_add(o, "devices", devs);
	text = json_text(o, true);
	json_object_put(o);
	return text;
}

static void spec_name(const char *uid, char *out, size_t size)
{
	snprintf(out, size, "%s-%s.json", DRA_DRIVER, uid);
}

/* Write the claim's files: the metadata first, then the spec that mounts it. */
static int write_files(struct prep *p, const struct claim_info *ci, const struct dev *dv, size_t n,
		       char *err, size_t errsize)
{
	char dir[2048], name[128], *text;
	bool changed;
	size_t i;
	int r;

	for (i = 0; i < n; i++) {
		if (!dv[i].first_of_req)
			continue;
		text = metadata(p, ci, dv, n, dv[i].req);
		meta_dir(p, ci->uid, dv[i].req, dir, sizeof(dir));
		r = text ? file_put(dir, METADATA_FILE, text, &changed) : -ENOMEM;
		free(text);
		if (r < 0) {
			fmt_cut(err, errsize, "cannot write %s/%s: %s", dir, METADATA_FILE,
				strerror(-r));
			return r;
		}
	}
	text = spec(p, ci, dv, n);
	spec_name(ci->uid, name, sizeof(name));
	r = text ? file_put(p->cfg->cdi_dir, name, text, &changed) : -ENOMEM;
	free(text);
	if (r < 0) {
		fmt_cut(err, errsize, "cannot write the CDI spec %s/%s: %s", p->cfg->cdi_dir, name,
			strerror(-r));
		return r;
	}
	dra_log("claim %s/%s (%s): %zu devices prepared, CDI spec %s/%s %s", ci->ns, ci->name,
		ci->uid, n, p->cfg->cdi_dir, name, changed ? "written" : "already right");
	return 0;
}

static int prepare_one(struct prep *p, const D(Claim) * c, D(NodePrepareResourceResponse) * out,
		       struct arena *a, char *err, size_t errsize)
{
	char path[600], msg[300], why[300];
	struct claim_info *ci;
	struct dev dv[CLAIM_RESULTS_MAX];
	char *body = NULL;
	size_t len, n, i;
	long code;
	int r;

	if (!claim_ref_ok(c->namespace_, c->name, c->uid)) {
		fmt_cut(err, errsize, "claim %s/%s (%s): not a namespace, name and UID the API makes",
			c->namespace_, c->name, c->uid);
		return -EINVAL;
	}
	if (!p->cfg->api_ok) {
		fmt_cut(err, errsize, "%s", p->cfg->api_why);
		return -EINVAL;
	}
	snprintf(path, sizeof(path), "/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims/%s",
		 c->namespace_, c->name);
	r = kapi_call(&p->cfg->api, "GET", path, NULL, NULL, &body, &len, &code, why, sizeof(why));
	if (r < 0) {
		fmt_cut(err, errsize, "%s", why);
		return r;
	}
	if (code != 200) {
		api_message(body, msg, sizeof(msg));
		fmt_cut(err, errsize, "GET %s: %ld: %s", path, code, msg);
		free(body);
		return -EIO;
	}
	ci = malloc(sizeof(*ci));
	if (!ci) {
		free(body);
		return -ENOMEM;
	}
	r = claim_parse(body, len, ci, why, sizeof(why));
	free(body);
	if (r < 0)
		fmt_cut(err, errsize, "ResourceClaim %s/%s: %s", c->namespace_, c->name, why);
	else if (!streq(ci->uid, c->uid))
		fmt_cut(err, errsize,
			"ResourceClaim %s/%s has UID %s, not %s: not the claim the kubelet prepares",
			c->namespace_, c->name, ci->uid, c->uid),
			r = -ESTALE;
	else if (!streq(ci->name, c->name) || !streq(ci->ns, c->namespace_))
		fmt_cut(err, errsize, "ResourceClaim %s/%s: the API answered %s/%s", c->namespace_,
			c->name, ci->ns, ci->name),
			r = -EPROTO;
	else if (ci->pod_claim_name[0] && !dns_label(ci->pod_claim_name))
		fmt_cut(err, errsize,
			"ResourceClaim %s/%s: its pod claim name (resource.kubernetes.io/pod-claim-name) is not a DNS label",
			c->namespace_, c->name),
			r = -EINVAL;
	else if (!ci->allocated)
		fmt_cut(err, errsize, "ResourceClaim %s/%s is not allocated", c->namespace_, c->name),
			r = -EINVAL;
	else if ((r = check_devices(p, ci, dv, &n, err, errsize)) == 0 && n > 0)
		r = write_files(p, ci, dv, n, err, errsize);
	if (r < 0) {
		free(ci);
		return r;
	}
	out->devices = a_alloc(a, (n ? n : 1) * sizeof(D(Device) *));
	for (i = 0; out->devices && i < n; i++) {
		D(Device) *d = a_alloc(a, sizeof(*d));
		char id[200];

		if (!d)
			break;
		k8s__io__kubelet__pkg__apis__dra__v1__device__init(d);
		d->n_request_names = 1;
		d->request_names = a_alloc(a, sizeof(char *));
		if (d->request_names)
			d->request_names[0] = a_strdup(a, dv[i].r->request);
		d->pool_name = a_strdup(a, dv[i].r->pool);
		d->device_name = a_strdup(a, dv[i].r->device);
		d->cdi_device_ids = a_alloc(a, 2 * sizeof(char *));
		if (d->cdi_device_ids) {
			snprintf(id, sizeof(id), "%s=%s-%s", CDI_KIND, ci->uid, dv[i].r->device);
			d->cdi_device_ids[d->n_cdi_device_ids++] = a_strdup(a, id);
			if (dv[i].first_of_req) {
				snprintf(id, sizeof(id), "%s=%s-metadata-%s", CDI_KIND, ci->uid,
					 dv[i].req);
				d->cdi_device_ids[d->n_cdi_device_ids++] = a_strdup(a, id);
			}
		}
		out->devices[out->n_devices++] = d;
	}
	free(ci);
	return 0;
}

static int node_prepare(const uint8_t *req, size_t len, uint8_t **resp, size_t *resp_len, char *err,
			size_t errsize, void *data)
{
	D(NodePrepareResourcesResponse)
	out = K8S__IO__KUBELET__PKG__APIS__DRA__V1__NODE_PREPARE_RESOURCES_RESPONSE__INIT;
	struct prep p = { .cfg = data };
	D(NodePrepareResourcesRequest) * in;
	struct arena *a = calloc(1, sizeof(*a));
	size_t i;
	int r;

	if (!a) {
		fmt_cut(err, errsize, "out of memory");
		return GRPC_RESOURCE_EXHAUSTED;
	}
	in = (D(NodePrepareResourcesRequest) *)
		protobuf_c_message_unpack(&DD(node_prepare_resources_request), NULL, len, req);
	if (!in) {
		free(a);
		fmt_cut(err, errsize, "the NodePrepareResourcesRequest cannot be decoded");
		return GRPC_INVALID_ARGUMENT;
	}
	out.claims = a_alloc(a,
			     (in->n_claims ? in->n_claims : 1) *
				     sizeof(D(NodePrepareResourcesResponse__ClaimsEntry) *));
	for (i = 0; out.claims && i < in->n_claims; i++) {
		D(NodePrepareResourcesResponse__ClaimsEntry) *e = a_alloc(a, sizeof(*e));
		D(NodePrepareResourceResponse) *v = a_alloc(a, sizeof(*v));
		char why[600];

		if (!e || !v)
			break;
		k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_response__claims_entry__init(
			e);
		k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resource_response__init(v);
		e->key = a_strdup(a, in->claims[i]->uid);
		e->value = v;
		why[0] = '\0';
		if (prepare_one(&p, in->claims[i], v, a, why, sizeof(why)) < 0) {
			dra_log("claim %s/%s (%s): not prepared: %s", in->claims[i]->namespace_,
				in->claims[i]->name, in->claims[i]->uid, why);
			v->n_devices = 0;
			v->error = a_strdup(a, why);
		}
		out.claims[out.n_claims++] = e;
	}
	r = reply(&out.base, a, resp, resp_len, err, errsize);
	protobuf_c_message_free_unpacked(&in->base, NULL);
	a_free(a);
	free(a);
	free(p.gpus);
	return r;
}

/* Remove the claim's files, those prepare writes, and nothing else. -errno of the first failure. */
static int unprepare_one(const struct dra_cfg *cfg, const char *uid, char *err, size_t errsize)
{
	char path[PATH_MAX], dir[2048], name[128];
	struct dirent *e;
	int r = 0;
	DIR *d;

	if (!uid_ok(uid)) {
		fmt_cut(err, errsize, "claim UID %s: not a UID the API makes", uid);
		return -EINVAL;
	}
	spec_name(uid, name, sizeof(name));
	snprintf(path, sizeof(path), "%s/%s", cfg->cdi_dir, name);
	if (unlink(path) < 0 && errno != ENOENT) {
		r = -errno;
		fmt_cut(err, errsize, "cannot remove %s: %s", path, strerror(errno));
		return r;
	}
	snprintf(dir, sizeof(dir), "%s/claims/%s", cfg->state_dir, uid);
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((e = readdir(d))) {
		if (!dns_label(e->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%.63s/%s", dir, e->d_name, METADATA_FILE);
		if (unlink(path) < 0 && errno != ENOENT && !r) {
			r = -errno;
			fmt_cut(err, errsize, "cannot remove %s: %s", path, strerror(errno));
		}
		snprintf(path, sizeof(path), "%s/%.63s", dir, e->d_name);
		rmdir(path);
	}
	closedir(d);
	rmdir(dir);
	return r;
}

static int node_unprepare(const uint8_t *req, size_t len, uint8_t **resp, size_t *resp_len,
			  char *err, size_t errsize, void *data)
{
	D(NodeUnprepareResourcesResponse)
	out = K8S__IO__KUBELET__PKG__APIS__DRA__V1__NODE_UNPREPARE_RESOURCES_RESPONSE__INIT;
	const struct dra_cfg *cfg = data;
	D(NodeUnprepareResourcesRequest) * in;
	struct arena *a = calloc(1, sizeof(*a));
	size_t i;
	int r;

	if (!a) {
		fmt_cut(err, errsize, "out of memory");
		return GRPC_RESOURCE_EXHAUSTED;
	}
	in = (D(NodeUnprepareResourcesRequest) *)
		protobuf_c_message_unpack(&DD(node_unprepare_resources_request), NULL, len, req);
	if (!in) {
		free(a);
		fmt_cut(err, errsize, "the NodeUnprepareResourcesRequest cannot be decoded");
		return GRPC_INVALID_ARGUMENT;
	}
	out.claims = a_alloc(a,
			     (in->n_claims ? in->n_claims : 1) *
				     sizeof(D(NodeUnprepareResourcesResponse__ClaimsEntry) *));
	for (i = 0; out.claims && i < in->n_claims; i++) {
		D(NodeUnprepareResourcesResponse__ClaimsEntry) *e = a_alloc(a, sizeof(*e));
		D(NodeUnprepareResourceResponse) *v = a_alloc(a, sizeof(*v));
		char why[600];

		if (!e || !v)
			break;
		k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_response__claims_entry__init(
			e);
		k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resource_response__init(v);
		e->key = a_strdup(a, in->claims[i]->uid);
		e->value = v;
		why[0] = '\0';
		if (unprepare_one(cfg, in->claims[i]->uid, why, sizeof(why)) < 0) {
			dra_log("claim %s/%s (%s): not unprepared: %s", in->claims[i]->namespace_,
				in->claims[i]->name, in->claims[i]->uid, why);
			v->error = a_strdup(a, why);
		} else {
			dra_log("claim %s/%s (%s): unprepared", in->claims[i]->namespace_,
				in->claims[i]->name, in->claims[i]->uid);
		}
		out.claims[out.n_claims++] = e;
	}
	r = reply(&out.base, a, resp, resp_len, err, errsize);
	protobuf_c_message_free_unpacked(&in->base, NULL);
	a_free(a);
	free(a);
	return r;
}

const struct h2_method reg_methods[] = {
	{ "/pluginregistration.Registration/GetInfo", get_info },
	{ "/pluginregistration.Registration/NotifyRegistrationStatus", notify },
};
const size_t n_reg_methods = sizeof(reg_methods) / sizeof(reg_methods[0]);

const struct h2_method dra_methods[] = {
	{ "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources", node_prepare },
	{ "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodeUnprepareResources", node_unprepare },
};
const size_t n_dra_methods = sizeof(dra_methods) / sizeof(dra_methods[0]);
