// SPDX-License-Identifier: MIT
/* KubeVirt's permittedHostDevices for the GPUs in passthrough. Pure text in, text out. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kvsnippet.h"
#include "json.h"
#include "util.h"

/* The line "XXXX  name" (after leading tabs) for id, at the start of s; else NULL. */
static const char *id_line(const char *s, unsigned tabs, uint16_t id)
{
	char hex[5];
	unsigned i;

	for (i = 0; i < tabs; i++)
		if (s[i] != '\t')
			return NULL;
	if (s[tabs] == '\t')
		return NULL;
	snprintf(hex, sizeof(hex), "%04x", id);
	if (strncasecmp(s + tabs, hex, 4) != 0 || s[tabs + 4] != ' ')
		return NULL;
	return s + tabs + 4 + strspn(s + tabs + 4, " ");
}

int pciids_name(const char *ids, uint16_t vendor, uint16_t device, char *out, size_t size)
{
	const char *p = ids, *name;
	bool in_vendor = false;

	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);

		if (*p != '\t' && *p != '#' && len > 0) {
			if (in_vendor)
				return -ENOENT;	/* the next vendor: not listed */
			in_vendor = id_line(p, 0, vendor) != NULL;
		} else if (in_vendor && (name = id_line(p, 1, device))) {
			size_t n = len - (size_t)(name - p);

			if (n >= size)
				n = size - 1;
			memcpy(out, name, n);
			out[n] = '\0';
			rstrip(out);
			return 0;
		}
		p += len + (nl ? 1 : 0);
	}
	return -ENOENT;
}

void kv_resource_name(const char *name, uint16_t vendor, uint16_t device, char *out, size_t size)
{
	size_t n;
	bool sep = false;

	if (vendor != 0x10de || !name || !*name) {
		snprintf(out, size, "%s/%04X_%04X", vendor == 0x10de ? "nvidia.com" : "devices.kubevirt.io",
			 vendor, device);
		return;
	}
	snprintf(out, size, "nvidia.com/");
	n = strlen(out);
	for (; *name; name++) {
		unsigned char c = (unsigned char)*name;
		size_t need = sep && out[n - 1] != '/' ? 2 : 1;

		if (!isalnum(c)) {
			sep = true;
			continue;
		}
		if (n + need + 1 > size)
			break;
		if (need == 2)
			out[n++] = '_';
		out[n++] = (char)toupper(c);
		sep = false;
	}
	out[n] = '\0';
	if (n == strlen("nvidia.com/"))	/* nothing usable in the name */
		snprintf(out, size, "nvidia.com/%04X_%04X", vendor, device);
}

void kv_yaml(FILE *f, const struct kv_device *d, size_t n, bool external)
{
	size_t i;

	fprintf(f, "# gpuvm kubevirt: merge under the KubeVirt CR's spec.configuration\n");
	fprintf(f, "permittedHostDevices:\n  pciHostDevices:%s\n", n ? "" : " []");
	for (i = 0; i < n; i++) {
		char res[sizeof(d[i].resource)];

		/* kv_resource_name() keeps [A-Z0-9_] of pci.ids' names; masked all the same. */
		term_safe(d[i].resource, res, sizeof(res));
		fprintf(f, "  - pciVendorSelector: \"%04X:%04X\"\n", d[i].vendor, d[i].device);
		fprintf(f, "    resourceName: \"%s\"\n", res);
		if (external)
			fprintf(f, "    externalResourceProvider: true\n");
	}
}

void kv_json(FILE *f, const struct kv_device *d, size_t n, bool external)
{
	struct json j;
	char sel[10];
	size_t i;

	json_init(&j, f);
	json_object_begin(&j, NULL);
	json_object_begin(&j, "permittedHostDevices");
	json_array_begin(&j, "pciHostDevices");
	for (i = 0; i < n; i++) {
		snprintf(sel, sizeof(sel), "%04X:%04X", d[i].vendor, d[i].device);
		json_object_begin(&j, NULL);
		json_string(&j, "pciVendorSelector", sel);
		json_string(&j, "resourceName", d[i].resource);
		if (external)
			json_bool(&j, "externalResourceProvider", true);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_object_end(&j);
	json_object_end(&j);
	json_finish(&j);
}
