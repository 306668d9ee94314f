// SPDX-License-Identifier: MIT
/* PCI addresses, IDs and their lists; a function's uevent and modalias; interned names. */
#include <errno.h>

#include "inventory.h"
#include "pci.h"
#include "strpool.h"
#include "unit.h"
#include "util.h"

/* An RTX 4090 on nouveau, as the kernel's pci_uevent() writes it. */
#define UEVENT_4090                                                                                \
	"DRIVER=nouveau\nPCI_CLASS=30000\nPCI_ID=10DE:2684\nPCI_SUBSYS_ID=1043:889C\n"             \
	"PCI_SLOT_NAME=0000:41:00.0\nMODALIAS=pci:v000010DEd00002684sv00001043sd0000889Cbc03sc00i00\n"

static void test_uevent(void)
{
	static const struct {
		const char *in;
		int ret;
		const char *driver;
	} bad[] = {
		{ "PCI_CLASS=30000\n", -EINVAL, "" },  /* no PCI_ID */
		{ "PCI_ID=10DE:2684\n", -EINVAL, "" }, /* no PCI_CLASS */
		{ "PCI_ID=10DE2684\nPCI_CLASS=30000\n", -EINVAL, "" },
		{ "PCI_ID=10DE:2684\nPCI_CLASS=1000000\n", -EINVAL, "" }, /* > 24 bits */
		{ "PCI_ID=10DE:2684:0000000000000000\nPCI_CLASS=30000\n", -EINVAL, "" },
		{ "DRIVER=..\nPCI_ID=10DE:2684\nPCI_CLASS=30000\n", -EINVAL, NULL },
		{ "DRIVER=a/b\nPCI_ID=10DE:2684\nPCI_CLASS=30000\n", -EINVAL, NULL },
		{ "DRIVER="
		  "0123456789012345678901234567890123456789012345678901234567890123"
		  "\nPCI_ID=10DE:2684\nPCI_CLASS=30000\n",
		  -EINVAL, NULL }, /* 64: too long */
		{ "DRIVER="
		  "012345678901234567890123456789012345678901234567890123456789012"
		  "\nPCI_ID=10DE:2684\nPCI_CLASS=30000",
		  0, "012345678901234567890123456789012345678901234567890123456789012" },
		{ "PCI_ID=10de:2684\nPCI_CLASS=030200\nX_LONG="
		  "0123456789012345678901234567890123456789"
		  "0123456789012345678901234567890123456789012345678901234567890123456789"
		  "\n",
		  0, "" },
	};
	struct pci_dev d;
	char driver[DRIVER_LEN], alias[MODALIAS_LEN];
	size_t i;

	pci_dev_init(&d);
	CHECK(d.group == -1 && d.boot_vga == -1 && d.sriov_totalvfs == -1 && !d.details,
	      "a new function: no group, no details");
	CHECK_STR(d.driver, "", "a new function: no driver (\"\", never NULL)");
	CHECK(d.override && !d.override[0] && d.variant && !d.variant[0],
	      "a new function: no override, no variant");
	CHECK(sizeof(struct pci_dev) <= 80,
	      "a function takes %zu bytes, at most 80 (10,000: 800 KB)", sizeof(struct pci_dev));

	d.driver = "kept";
	CHECK_INT(pci_dev_parse_uevent(&d, UEVENT_4090, driver, sizeof(driver)), 0, "RTX 4090 uevent");
	CHECK_STR(driver, "nouveau", "its driver");
	CHECK_STR(d.driver, "kept", "the parser leaves d->driver to the caller");
	CHECK(d.vendor == 0x10de && d.device == 0x2684 && d.subvendor == 0x1043 &&
		      d.subdevice == 0x889c && d.class == 0x030000,
	      "its IDs and class");
	pci_dev_modalias(&d, alias, sizeof(alias));
	CHECK_STR(alias, "pci:v000010DEd00002684sv00001043sd0000889Cbc03sc00i00",
		  "its modalias is the one its uevent carries");
	d.vendor = d.device = d.subvendor = d.subdevice = 0xffff;
	d.class = 0xffffff;
	pci_dev_modalias(&d, alias, sizeof(alias));
	CHECK_INT(strlen(alias), MODALIAS_LEN - 1, "the longest modalias fits MODALIAS_LEN");
	CHECK_INT(pci_dev_parse_uevent(&d, "DRIVER=x\n", driver, 4), -EINVAL,
		  "a driver longer than the caller's buffer is refused");

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		pci_dev_init(&d);
		CHECK_INT(pci_dev_parse_uevent(&d, bad[i].in, driver, sizeof(driver)), bad[i].ret,
			  "uevent case %zu", i);
		if (bad[i].driver)
			CHECK_STR(driver, bad[i].driver, "uevent case %zu: driver", i);
	}
}

static void test_strpool(void)
{
	struct strpool p = { 0 };
	const char *a, *b, *c;
	char buf[16];

	a = strpool_add(&p, "vfio-pci");
	strcpy(buf, "vfio-pci");
	b = strpool_add(&p, buf);
	c = strpool_add(&p, "nouveau");
	CHECK(a && a == b, "one copy of a name added twice");
	CHECK(c && c != a && strcmp(c, "nouveau") == 0, "another name, its own copy");
	CHECK(a != (const char *)buf, "the pool's copy, not the caller's buffer");
	CHECK_STR(strpool_add(&p, ""), "", "\"\" is no entry");
	strpool_free(&p);
	CHECK(strpool_add(&p, "after") != NULL, "a freed pool is empty and usable");
	strpool_free(&p);
}

static int ref_cmp(const void *a, const void *b)
{
	const struct sort_key *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

/* sort_keys against qsort: sizes 0 to 300 and 10,000, few and many distinct keys. */
static void test_sort_keys(void)
{
	static struct sort_key a[10000], b[10000];
	static const size_t sizes[] = { 0, 1, 2, 3, 7, 64, 300, 10000 };
	unsigned seed = 12345;
	size_t t, i, m;
	int bad = 0;

	for (t = 0; t < sizeof(sizes) / sizeof(sizes[0]); t++) {
		for (m = 1; m <= 1000000; m *= 1000) {
			size_t n = sizes[t];

			for (i = 0; i < n; i++) {
				seed = seed * 1103515245u + 12345u;
				a[i] = (struct sort_key){ (uint64_t)(seed >> 8) % m << 20, n - i };
				b[i] = a[i];
			}
			sort_keys(a, n);
			qsort(b, n, sizeof(b[0]), ref_cmp);
			if (n && memcmp(a, b, n * sizeof(a[0])) != 0)
				bad++;
		}
	}
	CHECK_INT(bad, 0, "sort_keys sorts as qsort does (by key, then index), 24 arrays");
}

/* A line of /proc/bus/pci/devices, as drivers/pci/proc.c writes it. */
int main(void)
{
	static const struct {
		const char *in;
		int ret;
		const char *canon;
	} addrs[] = {
		{ "0000:01:00.0", 0, "0000:01:00.0" },
		{ "01:00.1", 0, "0000:01:00.1" },
		{ "10000:01:00.0", 0, "10000:01:00.0" },
		{ "ffffffff:ff:1f.7", 0, "ffffffff:ff:1f.7" }, /* the longest: 16 bytes */
		{ "100000000:01:00.0", -EINVAL, NULL },	       /* a domain of 9 digits */
		{ "ABCD:EF:1f.7", 0, "abcd:ef:1f.7" },
		{ "0000:01:20.0", -EINVAL, NULL }, /* device > 0x1f */
		{ "0000:01:00.8", -EINVAL, NULL }, /* function > 7 */
		{ "000:01:00.0", -EINVAL, NULL },  /* short domain */
		{ "0000:1:00.0", -EINVAL, NULL },
		{ "0000:01:00", -EINVAL, NULL },
		{ "0000:01:00.0x", -EINVAL, NULL },
		{ "0x00:01:00.0", -EINVAL, NULL },
		{ "../../../etc", -EINVAL, NULL },
		{ "0000:01:00.0/../x", -EINVAL, NULL },
		{ "", -EINVAL, NULL },
		{ ":::", -EINVAL, NULL },
	};
	static const struct {
		const char *in;
		int ret;
		unsigned vendor, device;
		bool any;
	} ids[] = {
		{ "10de:2204", 0, 0x10de, 0x2204, false }, { "10DE:*", 0, 0x10de, 0, true },
		{ "1234:1111", 0, 0x1234, 0x1111, false }, { "10de:22041", -EINVAL, 0, 0, false },
		{ "10de", -EINVAL, 0, 0, false },	   { "*:2204", -EINVAL, 0, 0, false },
		{ "10de:", -EINVAL, 0, 0, false },	   { "10dg:2204", -EINVAL, 0, 0, false },
		{ "0x10de:2204", -EINVAL, 0, 0, false },
	};
	struct pci_addr a, b, list[4];
	struct pci_id id, idl[64];
	char buf[PCI_ADDR_LEN], bad[64];
	size_t i, n;

	for (i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++) {
		int r = pci_addr_parse(addrs[i].in, &a);

		CHECK_INT(r, addrs[i].ret, "address '%s'", addrs[i].in);
		if (r == 0 && addrs[i].canon) {
			pci_addr_format(&a, buf, sizeof(buf));
			CHECK_STR(buf, addrs[i].canon, "address '%s' formats back", addrs[i].in);
		}
	}
	for (i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		int r = pci_id_parse(ids[i].in, &id);

		CHECK_INT(r, ids[i].ret, "id '%s'", ids[i].in);
		if (r == 0)
			CHECK(id.vendor == ids[i].vendor && id.device == ids[i].device &&
				      id.any_device == ids[i].any,
			      "id '%s' fields", ids[i].in);
	}
	pci_id_parse("10de:*", &id);
	CHECK(pci_id_match(&id, 0x10de, 0x1234), "10de:* matches any NVIDIA device");
	CHECK(!pci_id_match(&id, 0x1234, 0x10de), "10de:* does not match another vendor");

	pci_addr_parse("0000:01:00.0", &a);
	pci_addr_parse("0000:01:00.3", &b);
	CHECK(pci_same_slot(&a, &b), "functions of one slot");
	CHECK(pci_addr_cmp(&a, &b) < 0, "ordered by function");
	pci_addr_parse("0001:01:00.0", &b);
	CHECK(!pci_same_slot(&a, &b), "another domain is another slot");
	CHECK(pci_addr_cmp(&a, &b) < 0, "ordered by domain first");

	CHECK_INT(pci_addr_list_parse("0000:01:00.0, 02:00.0 0000:03:00.1", list, 4, &n, bad,
				      sizeof(bad)),
		  0, "address list with commas and spaces");
	CHECK_INT(n, 3, "three addresses");
	CHECK_INT(pci_addr_list_parse("0000:01:00.0,bogus", list, 4, &n, bad, sizeof(bad)), -EINVAL,
		  "a bad entry fails the list");
	CHECK_STR(bad, "bogus", "the bad entry is named");
	CHECK_INT(pci_addr_list_parse("01:00.0,02:00.0,03:00.0,04:00.0,05:00.0", list, 4, &n, bad,
				      sizeof(bad)),
		  -E2BIG, "too many entries");
	CHECK_INT(pci_addr_list_parse(" , ", list, 4, &n, bad, sizeof(bad)), -EINVAL,
		  "an empty list is bad");
	CHECK_INT(pci_id_list_parse("10de:2204,10de:1aef", idl, 64, &n, bad, sizeof(bad)), 0,
		  "id list");
	CHECK_INT(n, 2, "two ids");
	CHECK(pci_class_is_gpu(0x030000) && pci_class_is_gpu(0x030200) && !pci_class_is_gpu(0x038000),
	      "GPU classes: VGA and 3D controllers");
	CHECK(pci_class_is_bridge(0x060400) && pci_class_is_bridge(0x060000) &&
		      !pci_class_is_bridge(0x068000),
	      "bridges, but an NVSwitch (0680) is an endpoint");
	test_uevent();
	test_strpool();
	test_sort_keys();
	return unit_done();
}
