// SPDX-License-Identifier: MIT
/*
 * /proc/bus/pci/devices (src/boot/pciproc.c): a line's key and IDs; the index of the functions by
 * key; the file read in chunks however they cut it; which functions it names without doubt
 * (one domain, or as many identical lines as domains), and which it cannot (a key named by
 * fewer lines than domains have it, two lines of one key with other IDs, a key no line
 * names); a line that hides a newline in its fixed fields; the bus directories' names and
 * the file read alone: each line a function of its bus's one domain, the lines of a bus two
 * domains have to the functions the listing named, out of order noticed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static struct pci_fn devs[8];

static size_t fns(const char *const *addrs, size_t n)
{
	struct pci_addr a;
	size_t i;

	for (i = 0; i < n; i++) {
		pci_addr_parse(addrs[i], &a);
		devs[i] = (struct pci_fn){ .key = pci_fn_key(&a) };
	}
	return n;
}

/* The file's text fed to chunk() in pieces of cut bytes, as a read would cut it. */
static int feed_to(ssize_t (*chunk)(const char *, size_t, bool, void *), void *data,
		   const char *text, size_t len, size_t cut)
{
	char buf[4096];
	size_t have = 0, pos = 0;

	while (pos < len || have) {
		size_t take = len - pos < cut ? len - pos : cut;
		ssize_t used;

		memcpy(buf + have, text + pos, take);
		have += take;
		pos += take;
		used = chunk(buf, have, pos == len, data);
		if (used < 0)
			return (int)used;
		memmove(buf, buf + used, have - (size_t)used);
		have -= (size_t)used;
		if (pos == len && have)
			return -EIO; /* the last chunk left bytes unused */
	}
	return 0;
}

static int feed(struct pci_proc *pp, const char *text, size_t len, size_t cut)
{
	return feed_to(pci_proc_chunk, pp, text, len, cut);
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

static void test_bus_names(void)
{
	static const char *const bad[] = { "devices",	   "",	     "0",
					   "000",	   "0g",     "000:00",
					   "123456789:00", "0000:0", "0000:000",
					   "0000:",	   ":00",    "0000:00:00" };
	uint32_t domain_of[256], domain = 7;
	uint8_t bus = 7;
	size_t i;

	CHECK_INT(pci_proc_bus_parse("41", &domain, &bus), 0, "\"41\": domain 0's bus 41 (x86)");
	CHECK(domain == 0 && bus == 0x41, "\"41\": 0, 0x41");
	CHECK_INT(pci_proc_bus_parse("0000:ff", &domain, &bus), 0, "\"0000:ff\" (arm64 names all so)");
	CHECK(domain == 0 && bus == 0xff, "\"0000:ff\": 0, 0xff");
	CHECK_INT(pci_proc_bus_parse("10000:e1", &domain, &bus), 0, "a VMD domain, 5 digits");
	CHECK(domain == 0x10000 && bus == 0xe1, "\"10000:e1\": 0x10000, 0xe1");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK_INT(pci_proc_bus_parse(bad[i], &domain, &bus), -EINVAL, "not a bus: \"%s\"",
			  bad[i]);

	memset(domain_of, 0xff, sizeof(domain_of));
	pci_proc_bus_add(domain_of, 0, 0x00);
	pci_proc_bus_add(domain_of, 1, 0x41);
	pci_proc_bus_add(domain_of, 1, 0x00);
	pci_proc_bus_add(domain_of, 0, 0x00);
	CHECK(domain_of[0x41] == 1 && domain_of[0x00] == PCI_BUS_SHARED &&
		      domain_of[0x42] == PCI_BUS_NONE,
	      "a bus of one domain, one of two (shared, and stays so), one of none");
}

static void test_list(void)
{
	static const char *const named_addrs[] = { "0000:00:00.0", "0001:00:00.0", "0001:00:01.0" };
	uint32_t domain_of[256];
	struct pci_proc_list l;
	struct pci_proc pp;
	char text[4096];
	size_t len = 0, cut;

	memset(domain_of, 0xff, sizeof(domain_of));
	pci_proc_bus_add(domain_of, 0, 0x00);
	pci_proc_bus_add(domain_of, 0, 0x41);
	pci_proc_bus_add(domain_of, 1, 0x00);
	pci_proc_bus_add(domain_of, 1, 0x0c);
	len += proc_line(text + len, sizeof(text) - len, 0x0000, 0x1022, 0x1480, "");
	len += proc_line(text + len, sizeof(text) - len, 0x4100, 0x10de, 0x2330, "nvidia");
	len += proc_line(text + len, sizeof(text) - len, 0x4101, 0x10de, 0x22a3, "");
	len += proc_line(text + len, sizeof(text) - len, 0x0000, 0x1022, 0x1480, "");
	len += proc_line(text + len, sizeof(text) - len, 0x0008, 0x1022, 0x1482, "");
	len += proc_line(text + len, sizeof(text) - len, 0x0c00, 0x10de, 0x22a3, "nvidia");

	for (cut = 1; cut <= 1024; cut = cut < 8 ? cut + 1 : cut * 4) {
		/* No listing read: bus 00 is two domains', its lines cannot be placed. */
		l = (struct pci_proc_list){ .domain_of = domain_of, .sorted = true };
		CHECK_INT(feed_to(pci_proc_list_chunk, &l, text, len, cut), -ESRCH,
			  "cut %zu: a bus two domains have, nothing named: -ESRCH", cut);
		free(l.fn);

		/* The listing named bus 00's functions: its lines go to them. */
		fns(named_addrs, 3);
		CHECK_INT(pci_proc_init(&pp, devs, 3), 0, "cut %zu: the named functions' index", cut);
		l = (struct pci_proc_list){ .domain_of = domain_of, .named = &pp, .sorted = true };
		CHECK_INT(feed_to(pci_proc_list_chunk, &l, text, len, cut), 0,
			  "cut %zu: every line read", cut);
		CHECK(l.n == 3 && l.fn[0].key == 0x4100 && l.fn[1].key == 0x4101 &&
			      l.fn[2].key == 0x10c00 && l.fn[0].vendor == 0x10de &&
			      l.fn[1].device == 0x22a3 && l.fn[2].device == 0x22a3 &&
			      (l.fn[0].flags & PCI_FN_KNOWN),
		      "cut %zu: the lines of buses of one domain, each with its domain and IDs", cut);
		CHECK(l.sorted, "cut %zu: in order", cut);
		CHECK(pci_proc_known(&pp, 0) && pci_proc_known(&pp, 1) && devs[1].device == 0x1480,
		      "cut %zu: 00:00.0 in two domains, two like lines: both known", cut);
		CHECK(pci_proc_known(&pp, 2) && devs[2].device == 0x1482,
		      "cut %zu: 0001:00:01.0 named once: known", cut);
		pci_proc_fini(&pp);
		free(l.fn);
	}

	/* Domain 1's bus 0c before domain 0's bus 41: not in order, and said so. */
	len = proc_line(text, sizeof(text), 0x0c00, 0x10de, 0x22a3, "nvidia");
	len += proc_line(text + len, sizeof(text) - len, 0x4100, 0x10de, 0x2330, "nvidia");
	l = (struct pci_proc_list){ .domain_of = domain_of, .sorted = true };
	CHECK_INT(feed_to(pci_proc_list_chunk, &l, text, len, len), 0, "out of order: read");
	CHECK(l.n == 2 && !l.sorted, "out of order: noticed");
	free(l.fn);

	/* A bus no directory names: whose it is cannot be told. */
	len = proc_line(text, sizeof(text), 0x4200, 0x8086, 0x1521, "igb");
	l = (struct pci_proc_list){ .domain_of = domain_of, .sorted = true };
	CHECK_INT(feed_to(pci_proc_list_chunk, &l, text, len, len), -ESRCH,
		  "a bus of no directory: -ESRCH");
	free(l.fn);

	l = (struct pci_proc_list){ .domain_of = domain_of, .sorted = true };
	CHECK_INT(feed_to(pci_proc_list_chunk, &l, "garbage\n", 8, 8), -EINVAL,
		  "read alone, a line not in the format: -EINVAL");
	free(l.fn);
}

int main(void)
{
	test_proc_line();
	test_index();
	test_bus_names();
	test_list();
	return unit_done();
}
