// SPDX-License-Identifier: MIT
/*
 * pci.ids text (pciids_name) and what gpuvm kubevirt makes of a name (kv_resource_name,
 * kv_json, kv_yaml). The input is VV VV DD DD SIZE TEXT: the vendor and device looked
 * up, the size of the name buffer, then the pci.ids text (also used as a name itself).
 *
 * Invariants: pciids_name agrees with a line-by-line reference of how NVIDIA's sandbox
 * device plugin reads the file (after the first line that starts with the vendor ID,
 * '#' lines skipped, the first "\tdddd" line before any other line; nothing past a line
 * of 64 KiB; the rest of the line as it is, NUL as DEL), never writes past size; a
 * resource name is the prefix and a non-empty [A-Za-z0-9_] tail (for NVIDIA: the
 * lower-case ID when nothing else is left), never past its buffer; kv_json writes valid
 * JSON; kv_yaml writes one selector and one name per device, in quotes, nothing that
 * could break the YAML.
 */
#include <ctype.h>
#include <errno.h>

#include "kvsnippet.h"
#include "pciids.h"
#include "fuzz.h"
#include "json.h"
#include "util.h"

static int ref_name(const char *text, size_t len, uint16_t vendor, uint16_t device, char *out,
		    size_t size)
{
	char ven[8], dev[8];
	size_t i = 0, n, k;
	int state = 0; /* 0: before the vendor, 1: in it */

	snprintf(ven, sizeof(ven), "%04x", vendor);
	snprintf(dev, sizeof(dev), "\t%04x", device);
	while (i < len) {
		const char *line = text + i;

		for (n = 0; i + n < len && line[n] != '\n'; n++)
			;
		i += n + 1;
		if (n >= 65536)
			return -ENOENT;
		if (n && line[n - 1] == '\r')
			n--;
		if (state == 0) {
			if (n >= 4 && !strncmp(line, ven, 4))
				state = 1;
			continue;
		}
		if (n && line[0] == '#')
			continue;
		if (!n || line[0] != '\t')
			return -ENOENT;
		if (n < 5 || memcmp(line, dev, 5))
			continue;
		if (n - 5 > size - 1)
			return -ENAMETOOLONG;
		for (k = 5; k < n; k++)
			out[k - 5] = line[k] ? line[k] : 0x7f;
		out[n - 5] = '\0';
		return 0;
	}
	return -ENOENT;
}

static void check_resource(const char *name, uint16_t vendor, uint16_t device, size_t size,
			   char *res, size_t res_size)
{
	char *out = malloc(size); /* exact: ASan sees a write past it */
	const char *prefix = vendor == 0x10de ? "nvidia.com/" : "devices.kubevirt.io/", *s;
	char id[8];

	if (!out)
		abort();
	kv_resource_name(name, vendor, device, out, size);
	fuzz_assert(memchr(out, '\0', size), "resource name unterminated in %zu bytes", size);
	fuzz_assert(strncmp(out, prefix, strlen(prefix)) == 0 || strlen(out) == size - 1,
		    "resource name '%s' without its prefix", out);
	if (strlen(out) < size - 1 || size > 40) {
		s = out + strlen(prefix);
		fuzz_assert(*s, "resource name '%s' is only a prefix (pci.ids name '%s')", out,
			    name ? name : "(none)");
		for (; *s; s++)
			fuzz_assert(isdigit((unsigned char)*s) || isupper((unsigned char)*s) ||
					    islower((unsigned char)*s) || *s == '_',
				    "resource name '%s': byte 0x%02x", out, (unsigned char)*s);
		snprintf(id, sizeof(id), "%04x", device);
		s = out + strlen(prefix);
		/* Lower case only in the fallback, which is the ID alone. */
		fuzz_assert(vendor != 0x10de || streq(s, id) ||
				    !strpbrk(s, "abcdefghijklmnopqrstuvwxyz"),
			    "resource name '%s': lower case", out);
		fuzz_assert(vendor != 0x10de || name || streq(s, id),
			    "resource name '%s' without a pci.ids name", out);
	}
	if (res)
		strscpy(res, out, res_size);
	free(out);
}

static void check_cluster(const struct kv_device *d, size_t n)
{
	char *buf = NULL;
	size_t len, i, lines = 0, want;
	FILE *f;
	int ext;

	for (ext = 0; ext <= 1; ext++) {
		f = open_memstream(&buf, &len);
		if (!f)
			abort();
		kv_json(f, d, n, ext);
		fclose(f);
		fuzz_assert(json_valid(buf, len), "kv_json wrote invalid JSON:\n%s", buf);
		free(buf);

		f = open_memstream(&buf, &len);
		if (!f)
			abort();
		kv_yaml(f, d, n, ext);
		fclose(f);
		for (i = 0; i < len; i++) {
			fuzz_assert((unsigned char)buf[i] >= 0x20 || buf[i] == '\n',
				    "control byte in the YAML");
			lines += buf[i] == '\n';
		}
		/* Two comment lines, two keys; per device its two keys, the external key
		 * where asked or for a vGPU profile KubeVirt does not take itself, and a
		 * comment line for each vGPU profile. */
		want = 4;
		for (i = 0; i < n; i++)
			want += 2 + (ext || (d[i].vgpu && d[i].vf_external)) + d[i].vgpu;
		fuzz_assert(lines == want, "%zu YAML lines for %zu devices, expected %zu", lines, n,
			    want);
		lines = 0;
		free(buf);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t res_sizes[] = { 12, 24, 96 };
	struct kv_device dev[3];
	uint16_t vendor, device;
	size_t name_size;
	char *text, *name, *want;
	int r, ref;
	size_t i;

	if (size < 5)
		return 0;
	vendor = (uint16_t)(data[0] << 8 | data[1]);
	if (data[0] & 1)
		vendor = 0x10de; /* NVIDIA's names are the ones gpuvm upper-cases */
	device = (uint16_t)(data[2] << 8 | data[3]);
	name_size = 1 + data[4] % 128;
	text = fuzz_cstr(data + 5, size - 5); /* NUL-terminated; pciids_name reads len */
	name = malloc(name_size);	      /* exact: ASan sees a write past it */
	want = malloc(name_size);
	if (!name || !want)
		abort();

	r = pciids_name(text, size - 5, vendor, device, name, name_size);
	ref = ref_name(text, size - 5, vendor, device, want, name_size);
	fuzz_assert(r == ref, "pciids_name %04x:%04x returned %d, expected %d", vendor, device, r, ref);
	if (r == 0) {
		fuzz_assert(streq(name, want), "pciids_name %04x:%04x gave '%s', expected '%s'",
			    vendor, device, name, want);
		fuzz_assert(!strchr(name, '\n'), "newline in the name");
	}

	memset(dev, 0, sizeof(dev));
	for (i = 0; i < ARRAY_SIZE(dev); i++) {
		dev[i].vendor = i == 2 ? 0x8086 : vendor;
		dev[i].device = (uint16_t)(device + i);
		dev[i].count = i + 1;
	}
	dev[1].vgpu = data[4] & 0x80;
	dev[1].vf_external = data[0] & 2;
	for (i = 0; i < ARRAY_SIZE(res_sizes); i++)
		check_resource(r == 0 ? name : NULL, vendor, device, res_sizes[i], dev[0].resource,
			       sizeof(dev[0].resource));
	check_resource(text, vendor, device, sizeof(dev[1].resource), dev[1].resource,
		       sizeof(dev[1].resource));
	check_resource(text, 0x8086, device, sizeof(dev[2].resource), dev[2].resource,
		       sizeof(dev[2].resource));
	check_cluster(dev, data[4] % 4);

	free(text);
	free(name);
	free(want);
	return 0;
}
