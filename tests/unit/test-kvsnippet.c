// SPDX-License-Identifier: MIT
/*
 * KubeVirt resource names exactly as NVIDIA's sandbox device plugin advertises them
 * (kubevirt-gpu-device-plugin, getDeviceName): its own test vectors, the odd names, the
 * fallback, and every NVIDIA ID of a whole pci.ids against a reference written here.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "kvsnippet.h"
#include "pciids.h"

/* The plugin's test file, as its test writes it (a blank first line, one space after 10de). */
static const char plugin_ids[] = "\n"
				 "8086  Intel Corporation\n"
				 "\t2331  DH89xxCC Chap Counter\n"
				 "10de NVIDIA Corporation\n"
				 "\t118a  GK104GL [GRID K520]\n"
				 "\t118b  GK104GL [GRID K2 GeForce USM]\n"
				 "\t118d  gk104gl [grid k520]\n"
				 "\t118e gk104.gl [grid/k./520]\n"
				 "\t2331 GH100 [H100 PCIe]\n";

/* The resource name gpuvm gives device of ids (NVIDIA). */
static const char *res(const char *ids, size_t len, uint16_t device)
{
	static char out[256];
	char name[256];
	int r = pciids_name(ids, len, 0x10de, device, name, sizeof(name));

	kv_resource_name(r == 0 ? name : NULL, 0x10de, device, out, sizeof(out));
	return out;
}

static const char *one(const char *line, uint16_t device)
{
	static char ids[512];

	snprintf(ids, sizeof(ids), "10de  NVIDIA Corporation\n%s\n", line);
	return res(ids, strlen(ids), device);
}

static void vectors(void)
{
	size_t n = sizeof(plugin_ids) - 1;

	CHECK_STR(res(plugin_ids, n, 0x118a), "nvidia.com/GK104GL_GRID_K520", "plugin: 118a");
	CHECK_STR(res(plugin_ids, n, 0x118d), "nvidia.com/GK104GL_GRID_K520", "plugin: upper-cased");
	CHECK_STR(res(plugin_ids, n, 0x118e), "nvidia.com/GK104_GL_GRID_K__520",
		  "plugin: / and . become _");
	CHECK_STR(res(plugin_ids, n, 0x2331), "nvidia.com/GH100_H100_PCIE",
		  "plugin: another vendor's 2331 is not NVIDIA's");
	CHECK_STR(res(plugin_ids, n, 0xabcd), "nvidia.com/abcd", "plugin: not listed, the bare ID");

	/* The three. */
	CHECK_STR(one("\t1e87  TU104 [GeForce RTX 2080 Rev. A]", 0x1e87),
		  "nvidia.com/TU104_GEFORCE_RTX_2080_REV__A", "1e87: '. ' is two _");
	CHECK_STR(one("\t2342  GH100 [GH200 120GB / 480GB]", 0x2342),
		  "nvidia.com/GH100_GH200_120GB___480GB", "2342: ' / ' is three _");
	CHECK_STR(one("\t20f3  GA100 [A800-SXM4-80GB]", 0x20f3), "nvidia.com/GA100_A800SXM480GB",
		  "20f3: '-' is deleted");

	CHECK_STR(one("\t1234  A [B|C] (D)", 0x1234), "nvidia.com/A_BC_D", "[ | ( deleted");
	CHECK_STR(one("\t1234  a \t  b", 0x1234), "nvidia.com/A_B", "a run of blanks is one _");
	CHECK_STR(one("\t1234  a \v b", 0x1234), "nvidia.com/A__B", "\\v is no \\s: it breaks the run");
	CHECK_STR(one("\t1234  \t A b \t ", 0x1234), "nvidia.com/A_B", "blanks trimmed");
	CHECK_STR(one("\t1234  Caf\xc3\xa9 \xe2\x84\xa2", 0x1234), "nvidia.com/CAF_",
		  "non-ASCII deleted after the blanks became _");
	CHECK_STR(one("\t1234  A \xc2\xa0", 0x1234), "nvidia.com/A",
		  "a trailing NBSP is trimmed, and the blank before it");
	CHECK_STR(one("\t1234  \xe3\x80\x80 A", 0x1234), "nvidia.com/A", "a leading U+3000 too");
	CHECK_STR(one("\t1234  \xc4\xb1 \xc5\xbf", 0x1234), "nvidia.com/I_S",
		  "dotless i and long s upper-case to ASCII");
	CHECK_STR(one("\t1234  \xc4 \xff", 0x1234), "nvidia.com/_", "invalid UTF-8 deleted");
	CHECK_STR(one("\t1234  ...", 0x1234), "nvidia.com/___", "dots");
	CHECK_STR(one("\t1234  [\xe2\x84\xa2]", 0x1234), "nvidia.com/1234",
		  "nothing left: the bare ID");
	CHECK_STR(one("\t1234", 0x1234), "nvidia.com/1234", "no name: the bare ID");
	CHECK_STR(one("\t12345 x", 0x1234), "nvidia.com/5_X", "prefix match, as the plugin's");
	CHECK_STR(one("\t1e87  x\r", 0x1e87), "nvidia.com/X", "CRLF");
	CHECK_STR(one("\t1E87  x", 0x1e87), "nvidia.com/1e87", "IDs are lower-case in pci.ids");
	CHECK_STR(one("\t1e87  x", 0x1e87), "nvidia.com/X", "lower-case ID found");
}

/* "10de  N", a device line of line bytes, then 2335; the length of it all. */
static size_t longline(char *big, size_t line)
{
	size_t n = (size_t)sprintf(big, "10de  N\n\t0001  ");

	memset(big + n, 'x', line - 7);
	n += line - 7;
	return n + (size_t)sprintf(big + n, "\n\t2335  b\n");
}

static void lookup(void)
{
	static const char ids[] = "# 10de in a comment\n"
				  "10de  NVIDIA Corporation\n"
				  "\t0001  a\n"
				  "# comment\n"
				  "\t\t10de 2335  subsystem\n"
				  "\t2335  b\n"
				  "\n"
				  "\t2336  after a blank line\n"
				  "10de  again\n"
				  "\t2337  c\n";
	static const char nul[] = "10de  N\n\t2335  a\0b\n";
	static char big[70000];
	char name[64];

	CHECK_STR(res(ids, sizeof(ids) - 1, 0x2335), "nvidia.com/B", "past comments and subsystems");
	CHECK_STR(res(ids, sizeof(ids) - 1, 0x2336), "nvidia.com/2336", "a blank line ends the vendor");
	CHECK_STR(res(ids, sizeof(ids) - 1, 0x2337), "nvidia.com/2337", "only the first 10de line");
	CHECK_INT(pciids_name(ids, sizeof(ids) - 1, 0x10de, 0x2335, name, 2), -ENAMETOOLONG,
		  "a name that does not fit");
	CHECK_STR(res(nul, sizeof(nul) - 1, 0x2335), "nvidia.com/AB", "a NUL is a byte like another");

	/* Go's bufio.Scanner stops at a line of 64 KiB: the plugin finds nothing after it. */
	CHECK_STR(res(big, longline(big, 65536), 0x2335), "nvidia.com/2335",
		  "a line of 64 KiB ends the search");
	CHECK_STR(res(big, longline(big, 65535), 0x2335), "nvidia.com/B",
		  "a line of 64 KiB - 1 does not");

	kv_resource_name(NULL, 0x1002, 0x74a1, name, sizeof(name));
	CHECK_STR(name, "devices.kubevirt.io/1002_74A1", "not NVIDIA: no plugin names it");
}

/* The IDs scripts/pciids-ship.sh lists as ones the plugin's pci.ids may name otherwise. */
static void uncertain(void)
{
	static const char ids[] = "#\tVersion: 2025.06.09\n"
				  "#gpuvm-uncertain 2bb1\n"
				  "#gpuvm-uncertain 2bb40\n"
				  "#gpuvm-uncertain 2BB5\n"
				  "\n"
				  "10de  NVIDIA Corporation\n"
				  "\t2bb2  #gpuvm-uncertain 2bb3\n";

	CHECK_INT(pciids_uncertain(ids, 0x2bb1), 0, "a line of its own");
	CHECK_INT(pciids_uncertain(ids, 0x2bb2), -ENOENT, "not listed");
	CHECK_INT(pciids_uncertain(ids, 0x2bb3), -ENOENT, "only at the start of a line");
	CHECK_INT(pciids_uncertain(ids, 0x2bb4), -ENOENT, "the whole line, not a prefix");
	CHECK_INT(pciids_uncertain(ids, 0x2bb5), -ENOENT, "in lower case only");
}

/* ---- A reference of getDeviceName, step by step as the Go code does it. ---- */

/* unicode.IsSpace as UTF-8 at s (length of the space, or 0). */
static size_t ref_space(const unsigned char *s, size_t left)
{
	static const char *const u[] = { "\xc2\x85",	 "\xc2\xa0",	 "\xe1\x9a\x80",
					 "\xe2\x80\xa8", "\xe2\x80\xa9", "\xe2\x80\xaf",
					 "\xe2\x81\x9f", "\xe3\x80\x80" };
	size_t i;

	if (left && strchr("\t\n\v\f\r ", s[0]) && s[0])
		return 1;
	if (left >= 3 && s[0] == 0xe2 && s[1] == 0x80 && s[2] >= 0x80 && s[2] <= 0x8a)
		return 3;
	for (i = 0; i < sizeof(u) / sizeof(u[0]); i++)
		if (left >= strlen(u[i]) && !memcmp(s, u[i], strlen(u[i])))
			return strlen(u[i]);
	return 0;
}

static void ref_name(const unsigned char *s, size_t len, char *out)
{
	char a[1024], b[1024];
	size_t i, n = 0, k, end;

	/* TrimSpace */
	while (len && (k = ref_space(s, len))) {
		s += k;
		len -= k;
	}
	for (end = len; end > 0;) {
		for (k = 1; k <= 3 && k <= end; k++)
			if (ref_space(s + end - k, k) == k)
				break;
		if (k > 3 || k > end)
			break;
		end -= k;
	}
	len = end;
	/* ToUpper, '/' and '.' to '_' */
	for (i = 0; i < len && n < sizeof(a) - 1; i++) {
		if (i + 1 < len && s[i] == 0xc4 && s[i + 1] == 0xb1) {
			a[n++] = 'I';
			i++;
		} else if (i + 1 < len && s[i] == 0xc5 && s[i + 1] == 0xbf) {
			a[n++] = 'S';
			i++;
		} else if (s[i] >= 'a' && s[i] <= 'z') {
			a[n++] = (char)(s[i] - 'a' + 'A');
		} else {
			a[n++] = s[i] == '/' || s[i] == '.' ? '_' : (char)s[i];
		}
	}
	len = n;
	/* \s+ to '_' */
	for (i = 0, n = 0; i < len; i++) {
		if (strchr("\t\n\f\r ", a[i]) && a[i]) {
			while (i + 1 < len && strchr("\t\n\f\r ", a[i + 1]) && a[i + 1])
				i++;
			b[n++] = '_';
		} else {
			b[n++] = a[i];
		}
	}
	/* [^a-zA-Z0-9_.]+ deleted */
	for (i = 0, k = 0; i < n; i++)
		if ((b[i] >= 'A' && b[i] <= 'Z') || (b[i] >= 'a' && b[i] <= 'z') ||
		    (b[i] >= '0' && b[i] <= '9') || b[i] == '_' || b[i] == '.')
			out[k++] = b[i];
	out[k] = '\0';
}

/* Every NVIDIA device line of a whole pci.ids ($PCIIDS, else the host's). */
static void whole(void)
{
	const char *path;
	char *ids, *p, *e, want[1100], got[300];
	size_t len, count = 0, bad = 0;

	ids = unit_pciids(&len, &path);
	if (!ids)
		return;
	p = strstr(ids, "\n10de");
	CHECK(p != NULL, "%s has NVIDIA", path);
	/* The NVIDIA block: its lines up to one that starts with neither a tab nor '#'. */
	for (p = p ? strchr(p + 1, '\n') : NULL; p && p + 1 < ids + len; p = e) {
		unsigned dev;
		char r[300];

		p++;
		e = strchr(p, '\n');
		if (!e)
			e = ids + len;
		if (*p != '\t' && *p != '#')
			break;
		if (*p == '#' || p[1] == '\t' || sscanf(p + 1, "%4x", &dev) != 1)
			continue;
		count++;
		ref_name((const unsigned char *)p + 5, (size_t)(e - p - 5), r);
		if (*r)
			snprintf(want, sizeof(want), "nvidia.com/%s", r);
		else
			snprintf(want, sizeof(want), "nvidia.com/%04x", dev);
		snprintf(got, sizeof(got), "%s", res(ids, len, (uint16_t)dev));
		if (strcmp(got, want) && bad++ < 5)
			printf("#   %04x: got '%s', want '%s'\n", dev, got, want);
	}
	CHECK(count > 1000 && bad == 0, "%s: %zu NVIDIA IDs, %zu named unlike the plugin", path,
	      count, bad);
	free(ids);
}

/* vGPU types: the plugin's names for mdev types and for vendor-specific VFIO profiles. */
static void vgpu_types(void)
{
	char out[128], name[96];

	kv_mdev_resource("GRID T4-1Q\n", out, sizeof(out));
	CHECK_STR(out, "nvidia.com/GRID_T4-1Q", "mdev: the plugin's example");
	kv_mdev_resource("\nNVIDIA  A40-2Q \t\n", out, sizeof(out));
	CHECK_STR(out, "nvidia.com/NVIDIA_A40-2Q_", "mdev: newlines trimmed, other blanks a _");
	kv_mdev_resource("A\xc2\xa0"
			 "B",
			 out, sizeof(out));
	CHECK_STR(out,
		  "nvidia.com/A\xc2\xa0"
		  "B",
		  "mdev: \\s is ASCII only");
	kv_mdev_resource("GRID T4-1Q", out, 16);
	CHECK_STR(out, "nvidia.com/GRID", "mdev: cut to size");

	CHECK_INT(kv_vgpu_type_line("1428 : NVIDIA H200X-141C", strlen("1428 : NVIDIA H200X-141C"),
				    name, sizeof(name)),
		  0, "vfio: a profile line");
	CHECK_STR(name, "NVIDIA H200X-141C", "vfio: its name");
	CHECK_INT(kv_vgpu_type_line("  7:x  \r", strlen("  7:x  \r"), name, sizeof(name)), 0,
		  "vfio: blanks");
	CHECK_STR(name, "x", "vfio: trimmed");
	CHECK_INT(kv_vgpu_type_line("Creatable vGPU types", strlen("Creatable vGPU types"), name,
				    sizeof(name)),
		  -EINVAL, "vfio: a header");
	CHECK_INT(kv_vgpu_type_line("12 :   ", strlen("12 :   "), name, sizeof(name)), -EINVAL,
		  "vfio: no name");
	CHECK_INT(kv_vgpu_type_line("12 NVIDIA", strlen("12 NVIDIA"), name, sizeof(name)), -EINVAL,
		  "vfio: no colon");
	CHECK_INT(kv_vgpu_type_line("1 : abcdef", strlen("1 : abcdef"), name, 4), -ENAMETOOLONG,
		  "vfio: too long");
}

/* --kubevirt-version: what KubeVirt's releases are called, nothing else. */
static void versions(void)
{
	int a = 0, b = 0;

	CHECK(kv_version_parse("1.9", &a, &b) == 0 && a == 1 && b == 9, "1.9");
	CHECK(kv_version_parse("v1.9.0", &a, &b) == 0 && a == 1 && b == 9, "v1.9.0");
	CHECK(kv_version_parse("1.10", &a, &b) == 0 && a == 1 && b == 10, "1.10");
	CHECK(kv_version_parse("1", &a, &b) == -EINVAL, "1");
	CHECK(kv_version_parse("1.", &a, &b) == -EINVAL, "1.");
	CHECK(kv_version_parse("1.9.", &a, &b) == -EINVAL, "1.9.");
	CHECK(kv_version_parse("1.9-rc", &a, &b) == -EINVAL, "1.9-rc");
	CHECK(kv_version_parse("", &a, &b) == -EINVAL, "empty");
	CHECK(kv_version_parse("v", &a, &b) == -EINVAL, "v");
	CHECK(kv_version_parse(" 1.9", &a, &b) == -EINVAL, "a blank");
}

int main(void)
{
	versions();
	vgpu_types();
	vectors();
	lookup();
	uncertain();
	whole();
	return unit_done();
}
