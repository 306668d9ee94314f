// SPDX-License-Identifier: MIT
/* PCI addresses and vendor:device IDs as users and sysfs write them. */
#include <errno.h>
#include <stdio.h>

#include "pci.h"
#include "util.h"

static int hex_field(const char *s, size_t n, unsigned max_digits, unsigned long *v)
{
	char buf[16];

	if (n == 0 || n > max_digits || n >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (buf[0] == '0' && (buf[1] == 'x' || buf[1] == 'X'))
		return -EINVAL;
	return parse_hex(buf, max_digits, v);
}

int pci_addr_parse(const char *s, struct pci_addr *a)
{
	const char *c1, *c2, *dot;
	unsigned long dom = 0, bus, dev, fn;

	/* As sysfs names every function ("%04x:%02x:%02x.%d"): no search, no copy. */
	if (s[0] && s[1] && s[2] && s[3] && s[4] == ':' && s[5] && s[6] && s[7] == ':' && s[8] &&
	    s[9] && s[10] == '.' && s[11] && !s[12] && parse_hex_fixed(s, 4, &dom) == 0 &&
	    parse_hex_fixed(s + 5, 2, &bus) == 0 && parse_hex_fixed(s + 8, 2, &dev) == 0 &&
	    parse_hex_fixed(s + 11, 1, &fn) == 0)
		goto parsed;
	c1 = strchr(s, ':');
	if (!c1)
		return -EINVAL;
	c2 = strchr(c1 + 1, ':');
	if (c2) {
		if (hex_field(s, (size_t)(c1 - s), 8, &dom) < 0 || (c1 - s) < 4)
			return -EINVAL;
		s = c1 + 1;
		c1 = c2;
	}
	dot = strchr(c1 + 1, '.');
	if (!dot || c1 - s != 2 || dot - c1 - 1 != 2 || strlen(dot + 1) != 1)
		return -EINVAL;
	if (hex_field(s, 2, 2, &bus) < 0 || hex_field(c1 + 1, 2, 2, &dev) < 0 ||
	    hex_field(dot + 1, 1, 1, &fn) < 0)
		return -EINVAL;
parsed:
	if (dev > 0x1f || fn > 7 || dom > 0xffffffffUL)
		return -EINVAL;
	a->domain = (uint32_t)dom;
	a->bus = (uint8_t)bus;
	a->dev = (uint8_t)dev;
	a->fn = (uint8_t)fn;
	return 0;
}

/* "%04x:%02x:%02x.%x" without printf: the scan names every function it reads so. */
void pci_addr_format(const struct pci_addr *a, char *buf, size_t size)
{
	static const char hex[] = "0123456789abcdef";
	char s[PCI_ADDR_LEN], *p = s;
	int shift = 28;

	while (shift > 12 && !(a->domain >> shift & 0xf))
		shift -= 4;
	for (; shift >= 0; shift -= 4)
		*p++ = hex[a->domain >> shift & 0xf];
	*p++ = ':';
	*p++ = hex[a->bus >> 4];
	*p++ = hex[a->bus & 0xf];
	*p++ = ':';
	*p++ = hex[a->dev >> 4 & 0xf];
	*p++ = hex[a->dev & 0xf];
	*p++ = '.';
	*p++ = hex[a->fn & 0xf];
	*p = '\0';
	strscpy(buf, s, size);
}

int pci_addr_cmp(const struct pci_addr *a, const struct pci_addr *b)
{
	if (a->domain != b->domain)
		return a->domain < b->domain ? -1 : 1;
	if (a->bus != b->bus)
		return a->bus < b->bus ? -1 : 1;
	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	if (a->fn != b->fn)
		return a->fn < b->fn ? -1 : 1;
	return 0;
}

bool pci_same_slot(const struct pci_addr *a, const struct pci_addr *b)
{
	return a->domain == b->domain && a->bus == b->bus && a->dev == b->dev;
}

int pci_id_parse(const char *s, struct pci_id *id)
{
	const char *c = strchr(s, ':');
	unsigned long v, d = 0;

	if (!c || c - s != 4 || hex_field(s, 4, 4, &v) < 0)
		return -EINVAL;
	if (streq(c + 1, "*")) {
		id->any_device = true;
	} else {
		if (strlen(c + 1) != 4 || hex_field(c + 1, 4, 4, &d) < 0)
			return -EINVAL;
		id->any_device = false;
	}
	id->vendor = (uint16_t)v;
	id->device = (uint16_t)d;
	return 0;
}

bool pci_id_match(const struct pci_id *id, uint16_t vendor, uint16_t device)
{
	return id->vendor == vendor && (id->any_device || id->device == device);
}

const char *pci_class_host_needs(uint16_t vendor, uint32_t class)
{
	uint32_t base = class >> 16, sub = (class >> 8) & 0xff;

	if (class > 0xffffff)
		return NULL;
	if (base == 0x01)
		return "a mass-storage controller";
	if (base == 0x06 && !pci_class_is_bridge(class)) {
		if (sub == 0x80 && vendor == PCI_VENDOR_NVIDIA)
			return NULL; /* an NVSwitch: nvswitch= decides */
		return sub == 0x01 ? "an ISA/LPC bridge" : "a bridge";
	}
	if (base == 0x08 && sub <= 0x06)
		return sub == 0x06 ? "an IOMMU" : "a base system peripheral";
	if (base == 0x0c && sub == 0x05)
		return "an SMBus controller";
	return NULL;
}

/* Walk the entries of a list separated by commas or whitespace. */
static int list_walk(const char *s, size_t max, size_t *n, char *bad, size_t badsize,
		     int (*one)(const char *item, size_t idx, void *out), void *out)
{
	char item[64];
	size_t count = 0;

	while (*s) {
		size_t len = strcspn(s, ", \t");

		if (len == 0) {
			s++;
			continue;
		}
		if (len >= sizeof(item)) {
			snprintf(bad, badsize, "%.*s...", 16, s);
			return -EINVAL;
		}
		memcpy(item, s, len);
		item[len] = '\0';
		s += len;
		if (count >= max) {
			snprintf(bad, badsize, "%s", item);
			return -E2BIG;
		}
		if (one(item, count, out) < 0) {
			snprintf(bad, badsize, "%s", item);
			return -EINVAL;
		}
		count++;
	}
	if (count == 0) {
		snprintf(bad, badsize, "(empty list)");
		return -EINVAL;
	}
	*n = count;
	return 0;
}

static int one_addr(const char *item, size_t idx, void *out)
{
	return pci_addr_parse(item, (struct pci_addr *)out + idx);
}

static int one_id(const char *item, size_t idx, void *out)
{
	return pci_id_parse(item, (struct pci_id *)out + idx);
}

int pci_addr_list_parse(const char *s, struct pci_addr *out, size_t max, size_t *n, char *bad,
			size_t badsize)
{
	return list_walk(s, max, n, bad, badsize, one_addr, out);
}

int pci_id_list_parse(const char *s, struct pci_id *out, size_t max, size_t *n, char *bad, size_t badsize)
{
	return list_walk(s, max, n, bad, badsize, one_id, out);
}
