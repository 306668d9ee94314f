// SPDX-License-Identifier: MIT
/* KubeVirt's permittedHostDevices for the GPUs in passthrough. Pure text in, text out. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kvsnippet.h"
#include "json.h"
#include "util.h"

/* Length of a Go unicode.IsSpace rune in UTF-8 at s (left bytes), or 0. */
static size_t space_at(const unsigned char *s, size_t left)
{
	static const char *const wide[] = { "\xc2\x85",	    "\xc2\xa0",	    "\xe1\x9a\x80",
					    "\xe2\x80\xa8", "\xe2\x80\xa9", "\xe2\x80\xaf",
					    "\xe2\x81\x9f", "\xe3\x80\x80" };
	size_t i, n;

	if (left >= 1 && (s[0] == ' ' || (s[0] >= '\t' && s[0] <= '\r')))
		return 1;
	if (left >= 3 && s[0] == 0xe2 && s[1] == 0x80 && s[2] >= 0x80 && s[2] <= 0x8a)
		return 3; /* U+2000..U+200A */
	for (i = 0; i < ARRAY_SIZE(wide); i++) {
		n = strlen(wide[i]);
		if (left >= n && memcmp(s, wide[i], n) == 0)
			return n;
	}
	return 0;
}

/* Go's \s: ASCII blanks but \v. */
static bool re_space(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r';
}

/*
 * The plugin's steps, in its order: strings.TrimSpace (Unicode blanks), strings.ToUpper,
 * '/' and '.' to '_', each run of \s to one '_', then [^a-zA-Z0-9_.] deleted. Done in one
 * pass: nothing non-ASCII survives the last step but what ToUpper makes ASCII (U+0131 ı is
 * I, U+017F ſ is S), and no lead byte of UTF-8 is a continuation byte, so bytes will do.
 */
static size_t plugin_name(const char *name, char *out, size_t size)
{
	const unsigned char *s = (const unsigned char *)name;
	size_t b = 0, e = strlen(name), k, n = 0;

	while (b < e && (k = space_at(s + b, e - b)))
		b += k;
	while (e > b) {
		for (k = 1; k <= 3 && k <= e - b; k++)
			if (space_at(s + e - k, k) == k)
				break;
		if (k > 3 || k > e - b)
			break;
		e -= k;
	}
	while (b < e && n + 1 < size) {
		unsigned char c = s[b++];

		if (re_space(c)) {
			while (b < e && re_space(s[b]))
				b++;
			out[n++] = '_';
		} else if (c == 0xc4 && b < e && s[b] == 0xb1) {
			out[n++] = 'I';
			b++;
		} else if (c == 0xc5 && b < e && s[b] == 0xbf) {
			out[n++] = 'S';
			b++;
		} else if (c == '/' || c == '.' || c == '_') {
			out[n++] = '_';
		} else if (c < 0x80 && isalnum(c)) {
			out[n++] = (char)toupper(c);
		}
	}
	out[n] = '\0';
	return n;
}

void kv_resource_name(const char *name, uint16_t vendor, uint16_t device, char *out, size_t size)
{
	static const char prefix[] = "nvidia.com/";
	size_t n = sizeof(prefix) - 1;

	if (vendor != 0x10de) {
		snprintf(out, size, "devices.kubevirt.io/%04X_%04X", vendor, device);
		return;
	}
	snprintf(out, size, "%s", prefix);
	/* Not in its pci.ids, or nothing left of the name: the ID as sysfs spells it. */
	if (!name || n + 1 >= size || !plugin_name(name, out + n, size - n))
		snprintf(out, size, "%s%04x", prefix, device);
}

void kv_yaml(FILE *f, const struct kv_device *d, size_t n, bool external)
{
	size_t i;

	fprintf(f, "# gpuvm kubevirt: merge under the KubeVirt CR's spec.configuration\n");
	fprintf(f, "# %s\n",
		external ? "for NVIDIA's sandbox device plugin, which the GPU Operator deploys" :
			   "for KubeVirt's own device plugin, which takes devices on vfio-pci only");
	fprintf(f, "permittedHostDevices:\n  pciHostDevices:%s\n", n ? "" : " []");
	for (i = 0; i < n; i++) {
		char res[sizeof(d[i].resource)];

		/* kv_resource_name() keeps [A-Za-z0-9_] of pci.ids' names; masked all the same. */
		term_safe(d[i].resource, res, sizeof(res));
		if (d[i].vgpu)
			fprintf(f, "  # a vGPU profile of SR-IOV VFs (vendor-specific VFIO, vGPU 17 and later): %s\n",
				d[i].vf_external ?
					"external: KubeVirt before 1.9 does not take VFs on nvidia" :
					"KubeVirt 1.9's own PCI plugin advertises these (VFs on nvidia)");
		fprintf(f, "  - pciVendorSelector: \"%04X:%04X\"\n", d[i].vendor, d[i].device);
		fprintf(f, "    resourceName: \"%s\"\n", res);
		if (external || (d[i].vgpu && d[i].vf_external))
			fprintf(f, "    externalResourceProvider: true\n");
	}
}

int kv_version_parse(const char *s, int *major, int *minor)
{
	char *end;
	unsigned long a, b;

	if (!s)
		return -EINVAL;
	if (*s == 'v')
		s++;
	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	a = strtoul(s, &end, 10);
	if (*end != '.' || !isdigit((unsigned char)end[1]) || a > 99)
		return -EINVAL;
	b = strtoul(end + 1, &end, 10);
	if (b > 999)
		return -EINVAL;
	if (*end == '.') {
		if (!isdigit((unsigned char)end[1]))
			return -EINVAL;
		strtoul(end + 1, &end, 10);
	}
	if (*end)
		return -EINVAL;
	*major = (int)a;
	*minor = (int)b;
	return 0;
}

void kv_mdev_resource(const char *raw, char *out, size_t size)
{
	size_t b = 0, e = strlen(raw), n;

	while (b < e && raw[b] == '\n')
		b++;
	while (e > b && raw[e - 1] == '\n')
		e--;
	n = (size_t)snprintf(out, size, "nvidia.com/");
	while (b < e && n + 1 < size) {
		if (re_space((unsigned char)raw[b])) {
			while (b < e && re_space((unsigned char)raw[b]))
				b++;
			out[n++] = '_';
		} else {
			out[n++] = raw[b++];
		}
	}
	out[n] = '\0';
}

int kv_vgpu_type_line(const char *line, size_t len, char *name, size_t size)
{
	size_t b = 0, e = len;

	while (b < e && re_space((unsigned char)line[b]))
		b++;
	if (b == e || !isdigit((unsigned char)line[b]))
		return -EINVAL;
	while (b < e && isdigit((unsigned char)line[b]))
		b++;
	while (b < e && re_space((unsigned char)line[b]))
		b++;
	if (b == e || line[b] != ':')
		return -EINVAL;
	b++;
	while (b < e && re_space((unsigned char)line[b]))
		b++;
	while (e > b && re_space((unsigned char)line[e - 1]))
		e--;
	if (b == e)
		return -EINVAL;
	if (e - b >= size)
		return -ENAMETOOLONG;
	memcpy(name, line + b, e - b);
	name[e - b] = '\0';
	return 0;
}

void kv_yaml_mdev(FILE *f, const struct kv_mdev *m, size_t n, bool external, bool none_visible)
{
	char name[sizeof(m->name)], res[sizeof(m->resource)];
	size_t i;

	if (none_visible)
		fprintf(f, "  # no vGPU type is visible yet: the vGPU Manager (nvidia_vgpu_vfio) has shown none\n");
	fprintf(f, "  mediatedDevices:%s\n", n ? "" : " []");
	for (i = 0; i < n; i++) {
		/*
		 * The host's sysfs text, for a terminal: masked as every text output is (C1 and
		 * bidirectional controls are valid UTF-8 that JSON escaping keeps), then escaped
		 * as JSON is: a YAML double-quoted string.
		 */
		term_safe(m[i].name, name, sizeof(name));
		term_safe(m[i].resource, res, sizeof(res));
		fputs("  - mdevNameSelector: \"", f);
		json_escape(f, name);
		fputs("\"\n    resourceName: \"", f);
		json_escape(f, res);
		fputs("\"\n", f);
		if (external)
			fprintf(f, "    externalResourceProvider: true\n");
	}
}

static void json_snippet(FILE *f, const struct kv_device *d, size_t n, const struct kv_mdev *m,
			 size_t n_m, bool vgpu, bool external)
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
		if (external || (d[i].vgpu && d[i].vf_external))
			json_bool(&j, "externalResourceProvider", true);
		json_object_end(&j);
	}
	json_array_end(&j);
	if (vgpu) {
		json_array_begin(&j, "mediatedDevices");
		for (i = 0; i < n_m; i++) {
			json_object_begin(&j, NULL);
			json_string(&j, "mdevNameSelector", m[i].name);
			json_string(&j, "resourceName", m[i].resource);
			if (external)
				json_bool(&j, "externalResourceProvider", true);
			json_object_end(&j);
		}
		json_array_end(&j);
	}
	json_object_end(&j);
	json_object_end(&j);
	json_finish(&j);
}

void kv_json(FILE *f, const struct kv_device *d, size_t n, bool external)
{
	json_snippet(f, d, n, NULL, 0, false, external);
}

void kv_json_vgpu(FILE *f, const struct kv_device *d, size_t n, const struct kv_mdev *m, size_t n_m,
		  bool external)
{
	json_snippet(f, d, n, m, n_m, true, external);
}
