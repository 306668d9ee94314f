// SPDX-License-Identifier: MIT
/*
 * /proc/bus/pci/devices (src/pciproc.c): a line's key and IDs; the index of the functions by
 * key; the file read in chunks however they cut it; which functions it names without doubt
 * (one domain, or as many identical lines as domains), and which it cannot (a key named by
 * fewer lines than domains have it, two lines of one key with other IDs, a key no line
 * names); a line that hides a newline in its fixed fields.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "inventory.h"
#include "pciproc.h"
#include "unit.h"

static void test_proc_line(void)
{
	static const char h100[] = "4100\t10de2330\t9d\t        88000000\t      408000000c"
				   "\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\tnvidia";
	static const char *const bad[] = {
		"",
		"4100",
		"4100\t10de233",      /* short */
		"4100 10de2330\t0",   /* not a tab */
		"4100\t10de2330x\t0", /* a ninth digit */
		"41g0\t10de2330\t0",  /* not hex */
		"410\t010de2330\t0",  /* the key is 4 digits */
		"4100\t10de 330\t0",
	};
	uint16_t key = 0, vendor = 0, device = 0;
	size_t i;

	CHECK_INT(pci_proc_parse_line(h100, sizeof(h100) - 1, &key, &vendor, &device), 0,
		  "an H100's line");
	CHECK(key == 0x4100 && vendor == 0x10de && device == 0x2330, "bus 41, devfn 00, 10de:2330");
	CHECK_INT(pci_proc_parse_line("0008\t1af41045", 13, &key, &vendor, &device), 0,
		  "the IDs alone, at the end of the line");
	CHECK(key == 0x0008 && vendor == 0x1af4 && device == 0x1045, "bus 00, devfn 08 (01.0)");
	CHECK_INT(pci_proc_parse_line(h100, 12, &key, &vendor, &device), -EINVAL,
		  "the length is the caller's, not the NUL");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK_INT(pci_proc_parse_line(bad[i], strlen(bad[i]), &key, &vendor, &device),
			  -EINVAL, "proc line case %zu: \"%s\"", i, bad[i]);
}

/* A line as the kernel writes it: key, IDs, IRQ, 14 fields of 17 bytes, the driver. */
static size_t proc_line(char *out, size_t size, unsigned key, unsigned vendor, unsigned device,
			const char *driver)
{
	size_t n = (size_t)snprintf(out, size, "%04x\t%04x%04x\t%x", key, vendor, device, 16);
	int f;

	for (f = 0; f < 14; f++)
		n += (size_t)snprintf(out + n, size - n, "\t%16x", 0);
	n += (size_t)snprintf(out + n, size - n, "\t%s\n", driver);
	return n;
}

static struct pci_dev devs[8];

static size_t fns(const char *const *addrs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		pci_dev_init(&devs[i]);
		pci_addr_parse(addrs[i], &devs[i].addr);
		snprintf(devs[i].name, sizeof(devs[i].name), "%s", addrs[i]);
	}
	return n;
}

/* The file's text fed to pci_proc_chunk in pieces of cut bytes, as a read would cut it. */
static int feed(struct pci_proc *pp, const char *text, size_t len, size_t cut)
{
	char buf[4096];
	size_t have = 0, pos = 0;

	while (pos < len || have) {
		size_t take = len - pos < cut ? len - pos : cut;
		ssize_t used;

		memcpy(buf + have, text + pos, take);
		have += take;
		pos += take;
		used = pci_proc_chunk(buf, have, pos == len, pp);
		if (used < 0)
			return (int)used;
		memmove(buf, buf + used, have - (size_t)used);
		have -= (size_t)used;
		if (pos == len && have)
			return -EIO; /* the last chunk left bytes unused */
	}
	return 0;
}

static void test_index(void)
{
	static const char *const two_domains[] = { "0000:41:00.0", "0000:41:00.1", "0001:41:00.0",
						   "0001:42:00.0", "0000:43:00.0" };
	char text[2048];
	struct pci_proc pp;
	size_t n = fns(two_domains, 5), len = 0, cut;

	for (cut = 1; cut <= 512; cut = cut < 8 ? cut + 1 : cut * 4) {
		len = 0;
		/* 41:00.0 in both domains, the same GPU; 41:00.1 once; 42:00.0 named twice, IDs apart */
		len += proc_line(text + len, sizeof(text) - len, 0x4100, 0x10de, 0x2330, "nvidia");
		len += proc_line(text + len, sizeof(text) - len, 0x4101, 0x10de, 0x22a3, "");
		len += proc_line(text + len, sizeof(text) - len, 0x4100, 0x10de, 0x2330, "nvidia");
		len += proc_line(text + len, sizeof(text) - len, 0x4200, 0x8086, 0x1521, "igb");
		len += proc_line(text + len, sizeof(text) - len, 0x4200, 0x8086, 0x1522, "igb");
		CHECK_INT(pci_proc_init(&pp, devs, n), 0, "cut %zu: the index", cut);
		CHECK_INT(feed(&pp, text, len, cut), 0, "cut %zu: every line read", cut);
		CHECK(pci_proc_known(&pp, 0) && pci_proc_known(&pp, 2) &&
			      devs[0].vendor == 0x10de && devs[2].device == 0x2330,
		      "cut %zu: one key in two domains, two like lines: both known", cut);
		CHECK(pci_proc_known(&pp, 1) && devs[1].device == 0x22a3,
		      "cut %zu: one domain, one line", cut);
		CHECK(!pci_proc_known(&pp, 3),
		      "cut %zu: two lines of one key, other IDs: not known", cut);
		CHECK(!pci_proc_known(&pp, 4), "cut %zu: a key no line names: not known", cut);
		pci_proc_fini(&pp);
	}

	/* Two domains have 41:00.0, one line names it: whose it is cannot be told. */
	len = proc_line(text, sizeof(text), 0x4100, 0x10de, 0x2330, "nvidia");
	CHECK_INT(pci_proc_init(&pp, devs, n), 0, "one line for two domains: the index");
	CHECK_INT(feed(&pp, text, len, len), 0, "one line for two domains: read");
	CHECK(!pci_proc_known(&pp, 0) && !pci_proc_known(&pp, 2),
	      "fewer lines than domains: neither known");
	pci_proc_fini(&pp);

	/*
	 * A newline hidden in a line's fixed fields: where the whole line is in the chunk, the
	 * end is searched for past the fields, so the line is read whole; where a chunk cuts it
	 * before its end, the hidden newline ends it and what follows is no line: the file is
	 * refused (-EINVAL) and the scan reads uevents. Never a wrong ID either way.
	 */
	len = proc_line(text, sizeof(text), 0x4101, 0x10de, 0x22a3, "");
	text[40] = '\n';
	len += proc_line(text + len, sizeof(text) - len, 0x4300, 0x1af4, 0x1050, "virtio-pci");
	CHECK_INT(pci_proc_init(&pp, devs, n), 0, "a hidden newline: the index");
	CHECK_INT(feed(&pp, text, len, len), 0, "a hidden newline, the line whole: read");
	CHECK(pci_proc_known(&pp, 1) && devs[1].device == 0x22a3 && pci_proc_known(&pp, 4) &&
		      devs[4].device == 0x1050,
	      "a hidden newline, the line whole: both lines as they are");
	pci_proc_fini(&pp);
	CHECK_INT(pci_proc_init(&pp, devs, n), 0, "a hidden newline, cut: the index");
	CHECK_INT(feed(&pp, text, len, 64), -EINVAL, "a hidden newline, cut before it: refused");
	pci_proc_fini(&pp);

	/* Not the file's format: the reader says so, the scan reads uevents instead. */
	CHECK_INT(pci_proc_init(&pp, devs, n), 0, "not the format: the index");
	CHECK_INT(feed(&pp, "garbage\n", 8, 8), -EINVAL, "a line not in the format: -EINVAL");
	pci_proc_fini(&pp);
	CHECK(pp.head == NULL && pp.seen == NULL, "fini leaves nothing to free twice");
}

int main(void)
{
	test_proc_line();
	test_index();
	return unit_done();
}
