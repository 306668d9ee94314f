// SPDX-License-Identifier: MIT
/*
 * pci.ids text (pciids_name) and what gpuvm kubevirt makes of a name (kv_resource_name,
 * kv_json, kv_yaml). The input is VV VV DD DD SIZE TEXT: the vendor and device looked
 * up, the size of the name buffer, then the pci.ids text (also used as a name itself).
 *
 * Invariants: pciids_name agrees with a line-by-line reference of the format (the first
 * vendor line, then its device line before the next vendor line, the name cut to size
 * and without trailing blanks), never writes past size; a resource name is the prefix
 * and a non-empty run of [A-Z0-9] words joined by single '_', never past its buffer;
 * kv_json writes valid JSON; kv_yaml writes one selector and one name per device, in
 * quotes, nothing that could break the YAML.
 */
#include <ctype.h>
#include <errno.h>

#include "kvsnippet.h"
#include "fuzz.h"
#include "json.h"
#include "util.h"

/* "XXXX " (hex, any case) after tabs leading tabs and not one more; the name after it. */
static const char *ref_id(const char *line, size_t len, unsigned tabs, uint16_t id)
{
	char hex[5];
	size_t i;

	for (i = 0; i < tabs; i++)
		if (i >= len || line[i] != '\t')
			return NULL;
	if (len < tabs + 5 || line[tabs + 4] != ' ')
		return NULL;
	snprintf(hex, sizeof(hex), "%04x", id);
	for (i = 0; i < 4; i++)
		if (tolower((unsigned char)line[tabs + i]) != hex[i])
			return NULL;
	for (i = tabs + 4; i < len && line[i] == ' '; i++)
		;
	return line + i;
}

static int ref_name(const char *text, uint16_t vendor, uint16_t device, char *out, size_t size)
{
	const char *p = text, *name;
	bool in_vendor = false;

	while (*p) {
		size_t len = strcspn(p, "\n"), n;

		if (len > 0 && p[0] != '\t' && p[0] != '#') {
			if (in_vendor)
				return -ENOENT;
			in_vendor = ref_id(p, len, 0, vendor) != NULL;
		} else if (in_vendor && (name = ref_id(p, len, 1, device))) {
			n = len - (size_t)(name - p);
			if (n > size - 1)
				n = size - 1;
			memcpy(out, name, n);
			while (n > 0 && isspace((unsigned char)name[n - 1]))
				n--;
			out[n] = '\0';
			return 0;
		}
		p += len + (p[len] ? 1 : 0);
	}
	return -ENOENT;
}

static void check_resource(const char *name, uint16_t vendor, uint16_t device, size_t size,
			   char *res, size_t res_size)
{
	char *out = malloc(size);	/* exact: ASan sees a write past it */
	const char *prefix = vendor == 0x10de ? "nvidia.com/" : "devices.kubevirt.io/", *s;

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
		fuzz_assert(*s != '_' && s[strlen(s) - 1] != '_' && !strstr(s, "__"),
			    "resource name '%s': stray '_'", out);
		for (; *s; s++)
			fuzz_assert(isdigit((unsigned char)*s) || isupper((unsigned char)*s) ||
				    *s == '_', "resource name '%s': byte 0x%02x", out, (unsigned char)*s);
	}
	if (res)
		strscpy(res, out, res_size);
	free(out);
}

static void check_cluster(const struct kv_device *d, size_t n)
{
	char *buf = NULL;
	size_t len, i, lines = 0;
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
		fuzz_assert(lines == 3 + n * (ext ? 3 : 2), "%zu YAML lines for %zu devices", lines, n);
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
		vendor = 0x10de;	/* NVIDIA's names are the ones gpuvm upper-cases */
	device = (uint16_t)(data[2] << 8 | data[3]);
	name_size = 1 + data[4] % 128;
	text = fuzz_cstr(data + 5, size - 5);
	name = malloc(name_size);	/* exact: ASan sees a write past it */
	want = malloc(name_size);
	if (!name || !want)
		abort();

	r = pciids_name(text, vendor, device, name, name_size);
	ref = ref_name(text, vendor, device, want, name_size);
	fuzz_assert(r == ref, "pciids_name %04x:%04x returned %d, expected %d", vendor, device, r,
		    ref);
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
