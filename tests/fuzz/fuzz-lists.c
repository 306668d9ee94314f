// SPDX-License-Identifier: MIT
/*
 * PCI addresses, vendor:device IDs and their lists (ids=, exclude=). The input is
 * MAX BADSIZE TEXT: the list capacity, the size of the buffer that names a bad entry.
 *
 * Invariants: pci_addr_parse and pci_id_parse accept exactly what a reference written
 * from the grammar accepts ("[DDDD[DDDD]:]BB:DD.F" with DD <= 1f and F <= 7;
 * "VVVV:DDDD" or "VVVV:*"), with the same values; a formatted address parses back to
 * itself; the list parsers return what the reference walk returns, entry by entry,
 * never write past max entries or badsize bytes, and name a bad entry on failure.
 */
#include <ctype.h>
#include <errno.h>

#include "fuzz.h"
#include "pci.h"

#define ITEM_MAX 63 /* list_walk's longest entry */

static bool hexn(const char *s, size_t n, unsigned long *v)
{
	size_t i;

	*v = 0;
	for (i = 0; i < n; i++) {
		if (!isxdigit((unsigned char)s[i]))
			return false;
		*v = *v * 16 +
			(unsigned long)(isdigit((unsigned char)s[i]) ?
						s[i] - '0' :
						tolower((unsigned char)s[i]) - 'a' + 10);
	}
	return true;
}

static bool ref_addr(const char *s, struct pci_addr *a)
{
	size_t len = strlen(s), dl;
	unsigned long dom = 0, bus, dev, fn;

	if (len < 7)
		return false;
	dl = len - 7; /* "BB:DD.F" is the tail */
	if (dl) {
		if (dl < 5 || dl > 9 || s[dl - 1] != ':' || !hexn(s, dl - 1, &dom))
			return false;
	}
	s += dl;
	if (s[2] != ':' || s[5] != '.' || !hexn(s, 2, &bus) || !hexn(s + 3, 2, &dev) ||
	    !hexn(s + 6, 1, &fn) || dev > 0x1f || fn > 7)
		return false;
	a->domain = (uint32_t)dom;
	a->bus = (uint8_t)bus;
	a->dev = (uint8_t)dev;
	a->fn = (uint8_t)fn;
	return true;
}

static bool ref_id(const char *s, struct pci_id *id)
{
	unsigned long v, d = 0;

	if (strlen(s) < 6 || s[4] != ':' || !hexn(s, 4, &v))
		return false;
	if (strcmp(s + 5, "*") == 0) {
		id->any_device = true;
	} else {
		if (strlen(s + 5) != 4 || !hexn(s + 5, 4, &d))
			return false;
		id->any_device = false;
	}
	id->vendor = (uint16_t)v;
	id->device = (uint16_t)d;
	return true;
}

static bool same_id(const struct pci_id *a, const struct pci_id *b)
{
	return a->vendor == b->vendor && a->any_device == b->any_device &&
		(a->any_device || a->device == b->device);
}

/* One entry on its own, against the reference and through a format round trip. */
static void check_one(const char *s)
{
	struct pci_addr a, ra, back;
	struct pci_id id, rid;
	char buf[32];
	bool ok, rok;

	memset(&a, 0, sizeof(a));
	ok = pci_addr_parse(s, &a) == 0;
	rok = ref_addr(s, &ra);
	fuzz_assert(ok == rok, "pci_addr_parse('%s') %s, the grammar says %s", s,
		    ok ? "accepts" : "refuses", rok ? "accept" : "refuse");
	if (ok) {
		fuzz_assert(pci_addr_cmp(&a, &ra) == 0 && pci_same_slot(&a, &ra),
			    "pci_addr_parse('%s'): wrong value", s);
		pci_addr_format(&a, buf, sizeof(buf));
		fuzz_assert(pci_addr_parse(buf, &back) == 0 && pci_addr_cmp(&a, &back) == 0,
			    "'%s' formatted as '%s' does not parse back", s, buf);
		pci_addr_format(&a, buf, 5); /* truncation, never overflow */
		fuzz_assert(strlen(buf) == 4, "a cut address is '%s'", buf);
	}
	ok = pci_id_parse(s, &id) == 0;
	rok = ref_id(s, &rid);
	fuzz_assert(ok == rok, "pci_id_parse('%s') %s, the grammar says %s", s,
		    ok ? "accepts" : "refuses", rok ? "accept" : "refuse");
	if (ok) {
		fuzz_assert(same_id(&id, &rid), "pci_id_parse('%s'): wrong value", s);
		fuzz_assert(pci_id_match(&id, id.vendor, id.device) &&
				    !pci_id_match(&id, (uint16_t)(id.vendor + 1), id.device),
			    "pci_id_match('%s')", s);
	}
}

/* The list walk as pci.h describes it; returns the result list_walk must give. */
static int ref_list(const char *s, bool addr, size_t max, size_t *n, struct pci_addr *ra,
		    struct pci_id *ri)
{
	char item[ITEM_MAX + 1];
	size_t count = 0;

	while (*s) {
		size_t len = strcspn(s, ", \t");

		if (len == 0) {
			s++;
			continue;
		}
		if (len > ITEM_MAX)
			return -EINVAL;
		memcpy(item, s, len);
		item[len] = '\0';
		s += len;
		check_one(item);
		if (count >= max)
			return -E2BIG;
		if (addr ? !ref_addr(item, &ra[count]) : !ref_id(item, &ri[count]))
			return -EINVAL;
		count++;
	}
	if (!count)
		return -EINVAL;
	*n = count;
	return 0;
}

static void check_list(const char *s, bool addr, size_t max, size_t badsize)
{
	struct pci_addr *a = malloc(max * sizeof(*a) + 1), *ra = calloc(max + 1, sizeof(*ra));
	struct pci_id *id = malloc(max * sizeof(*id) + 1), *rid = calloc(max + 1, sizeof(*rid));
	char *bad = malloc(badsize); /* exact: ASan sees a write past it */
	size_t n = 9999, rn = 0, i;
	int r, rr;

	if (!a || !ra || !id || !rid || !bad)
		abort();
	memset(bad, 'x', badsize);
	if (addr)
		r = pci_addr_list_parse(s, a, max, &n, bad, badsize);
	else
		r = pci_id_list_parse(s, id, max, &n, bad, badsize);
	rr = ref_list(s, addr, max, &rn, ra, rid);
	fuzz_assert(r == rr, "%s list '%s' (max %zu): %d, expected %d", addr ? "address" : "ID", s,
		    max, r, rr);
	if (r == 0) {
		fuzz_assert(n == rn && n >= 1 && n <= max, "%zu entries, expected %zu", n, rn);
		for (i = 0; i < n; i++)
			fuzz_assert(addr ? pci_addr_cmp(&a[i], &ra[i]) == 0 : same_id(&id[i], &rid[i]),
				    "entry %zu of '%s'", i, s);
	} else {
		fuzz_assert(n == 9999, "*n set on failure");
		fuzz_assert(memchr(bad, '\0', badsize), "bad entry not terminated");
		fuzz_assert(badsize == 1 || bad[0], "bad entry not named");
	}
	free(a);
	free(ra);
	free(id);
	free(rid);
	free(bad);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t max, badsize;
	char *s;

	if (size < 2)
		return 0;
	max = data[0] % 70;
	badsize = 1 + data[1] % 96;
	s = fuzz_cstr(data + 2, size - 2);
	check_one(s);
	check_list(s, true, max, badsize);
	check_list(s, false, max, badsize);
	free(s);
	return 0;
}
