// SPDX-License-Identifier: MIT
/* PCI addresses, IDs and their lists. */
#include <errno.h>

#include "pci.h"
#include "unit.h"

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
		{ "ABCD:EF:1f.7", 0, "abcd:ef:1f.7" },
		{ "0000:01:20.0", -EINVAL, NULL },	/* device > 0x1f */
		{ "0000:01:00.8", -EINVAL, NULL },	/* function > 7 */
		{ "000:01:00.0", -EINVAL, NULL },	/* short domain */
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
		{ "10de:2204", 0, 0x10de, 0x2204, false },
		{ "10DE:*", 0, 0x10de, 0, true },
		{ "1234:1111", 0, 0x1234, 0x1111, false },
		{ "10de:22041", -EINVAL, 0, 0, false },
		{ "10de", -EINVAL, 0, 0, false },
		{ "*:2204", -EINVAL, 0, 0, false },
		{ "10de:", -EINVAL, 0, 0, false },
		{ "10dg:2204", -EINVAL, 0, 0, false },
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

	CHECK_INT(pci_addr_list_parse("0000:01:00.0, 02:00.0 0000:03:00.1", list, 4, &n, bad, sizeof(bad)), 0,
		  "address list with commas and spaces");
	CHECK_INT(n, 3, "three addresses");
	CHECK_INT(pci_addr_list_parse("0000:01:00.0,bogus", list, 4, &n, bad, sizeof(bad)), -EINVAL,
		  "a bad entry fails the list");
	CHECK_STR(bad, "bogus", "the bad entry is named");
	CHECK_INT(pci_addr_list_parse("01:00.0,02:00.0,03:00.0,04:00.0,05:00.0", list, 4, &n, bad, sizeof(bad)),
		  -E2BIG, "too many entries");
	CHECK_INT(pci_addr_list_parse(" , ", list, 4, &n, bad, sizeof(bad)), -EINVAL, "an empty list is bad");
	CHECK_INT(pci_id_list_parse("10de:2204,10de:1aef", idl, 64, &n, bad, sizeof(bad)), 0, "id list");
	CHECK_INT(n, 2, "two ids");
	CHECK(pci_class_is_gpu(0x030000) && pci_class_is_gpu(0x030200) && !pci_class_is_gpu(0x038000),
	      "GPU classes: VGA and 3D controllers");
	CHECK(pci_class_is_bridge(0x060400) && pci_class_is_bridge(0x060000) && !pci_class_is_bridge(0x068000),
	      "bridges, but an NVSwitch (0680) is an endpoint");
	return unit_done();
}
