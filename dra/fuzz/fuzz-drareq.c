// SPDX-License-Identifier: MIT
/*
 * The DRA service's request decoding on arbitrary bytes: the first byte picks the message
 * (NodePrepareResourcesRequest, NodeUnprepareResourcesRequest, the registration's
 * InfoRequest, RegistrationStatus), the rest goes, in an exact buffer, to protobuf-c's unpack
 * as drasvc.c calls it; each claim of a decoded request to claim_ref_ok, as prepare and
 * unprepare check it before they ask the API or name a file.
 *
 * Invariants: claim_ref_ok agrees with the rule written again here (a UID of [0-9a-zA-Z-],
 * 1 to 63; a namespace and a name of [a-z0-9.-], 1 to 253, not starting with '.' or '-'); an
 * accepted claim has no '/' in any of the three and a UID that is neither "." nor ".."; a
 * decoded message packs; one without unknown fields (at any depth) unpacks and packs again to
 * the same bytes. Unknown fields are left out of that: protobuf-c's unpack keeps a field
 * numbered 0 (e.g. the overlong tag 0x80 0x00) as unknown, and its pack writes it back as bytes
 * its unpack refuses; the plugin never packs a request again.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dra.pb-c.h"
#include "pluginregistration.pb-c.h"

#include "drareq.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                                                     \
	do {                                                                                         \
		if (!(c)) {                                                                          \
			fprintf(stderr, "invariant violated: %s (%s:%d)\n", #c, __FILE__, __LINE__); \
			abort();                                                                     \
		}                                                                                    \
	} while (0)

#define DD(x) k8s__io__kubelet__pkg__apis__dra__v1__##x##__descriptor
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__Claim Claim;

static bool in(char c, const char *set)
{
	return c && strchr(set, c);
}

static bool oracle_uid(const char *s)
{
	size_t i, n = strlen(s);

	for (i = 0; i < n; i++)
		if (!in(s[i], "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-"))
			return false;
	return n >= 1 && n <= 63;
}

static bool oracle_name(const char *s)
{
	size_t i, n = strlen(s);

	for (i = 0; i < n; i++)
		if (!in(s[i], "0123456789abcdefghijklmnopqrstuvwxyz.-"))
			return false;
	return n >= 1 && n <= 253 && s[0] != '.' && s[0] != '-';
}

/* Whether any of the claims carries an unknown field. */
static bool claims(Claim **c, size_t n)
{
	bool ok, unknown = false;
	size_t i;

	for (i = 0; i < n; i++) {
		CHECK(c[i] && c[i]->namespace_ && c[i]->name && c[i]->uid);
		ok = claim_ref_ok(c[i]->namespace_, c[i]->name, c[i]->uid);
		CHECK(ok ==
		      (oracle_uid(c[i]->uid) && oracle_name(c[i]->namespace_) &&
		       oracle_name(c[i]->name)));
		if (ok)
			CHECK(!strchr(c[i]->uid, '/') && !strchr(c[i]->namespace_, '/') &&
			      !strchr(c[i]->name, '/') && strcmp(c[i]->uid, ".") &&
			      strcmp(c[i]->uid, ".."));
		unknown |= c[i]->base.n_unknown_fields > 0;
	}
	return unknown;
}

static void round_trip(const ProtobufCMessage *m, bool unknown)
{
	const ProtobufCMessageDescriptor *d = m->descriptor;
	size_t n = protobuf_c_message_get_packed_size(m), n2;
	uint8_t *a = malloc(n ? n : 1), *b;
	ProtobufCMessage *m2;

	CHECK(a && protobuf_c_message_pack(m, a) == n);
	if (unknown || m->n_unknown_fields) {
		free(a);
		return;
	}
	m2 = protobuf_c_message_unpack(d, NULL, n, a);
	CHECK(m2);
	n2 = protobuf_c_message_get_packed_size(m2);
	b = malloc(n2 ? n2 : 1);
	CHECK(b && protobuf_c_message_pack(m2, b) == n2);
	CHECK(n2 == n && memcmp(a, b, n) == 0);
	protobuf_c_message_free_unpacked(m2, NULL);
	free(a);
	free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const ProtobufCMessageDescriptor *const desc[] = {
		&DD(node_prepare_resources_request),
		&DD(node_unprepare_resources_request),
		&pluginregistration__info_request__descriptor,
		&pluginregistration__registration_status__descriptor,
	};
	const ProtobufCMessageDescriptor *d;
	ProtobufCMessage *m;
	bool unknown = false;
	uint8_t *buf;

	if (size < 1)
		return 0;
	d = desc[data[0] % 4];
	buf = malloc(size - 1 ? size - 1 : 1);
	if (!buf)
		abort();
	memcpy(buf, data + 1, size - 1);
	m = protobuf_c_message_unpack(d, NULL, size - 1, buf);
	if (m) {
		if (d == &DD(node_prepare_resources_request)) {
			K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesRequest *r =
				(void *)m;

			unknown = claims(r->claims, r->n_claims);
		} else if (d == &DD(node_unprepare_resources_request)) {
			K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourcesRequest *r =
				(void *)m;

			unknown = claims(r->claims, r->n_claims);
		}
		round_trip(m, unknown);
		protobuf_c_message_free_unpacked(m, NULL);
	}
	free(buf);
	return 0;
}
