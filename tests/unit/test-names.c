// SPDX-License-Identifier: MIT
/*
 * names.c: the one list of a directory's names; its filters, its order, and a name it could
 * not keep.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"
#include "unit.h"

static bool no_dot(const char *name)
{
	return name[0] != '.';
}

static void filters_and_order(void)
{
	static const char *const in[] = { "b.conf", ".conf", "a.conf", ".hidden.conf",
					  "c.txt",  "conf",  "a.conf~" };
	struct names l = { .suffix = ".conf", .want = no_dot };
	size_t i;

	for (i = 0; i < sizeof(in) / sizeof(in[0]); i++)
		CHECK_INT(names_add(in[i], &l), 0, "names_add(%s)", in[i]);
	names_sort(&l);
	CHECK_INT((int)l.n, 2, "only the .conf names that are longer than it and not hidden");
	if (l.n == 2) {
		CHECK_STR(l.v[0], "a.conf", "byte order");
		CHECK_STR(l.v[1], "b.conf", "byte order");
	}
	CHECK_INT(l.err, 0, "no error");
	names_free(&l);
	CHECK(l.v == NULL && l.n == 0 && l.cap == 0, "freed, empty again");
}

static void many_and_unfiltered(void)
{
	struct names l = { 0 };
	char name[16];
	int i;

	for (i = 99; i >= 0; i--) {
		snprintf(name, sizeof(name), "n%03d", i);
		CHECK_INT(names_add(name, &l), 0, "names_add(%s)", name);
	}
	names_sort(&l);
	CHECK_INT((int)l.n, 100, "every name kept past the first growth");
	CHECK(l.n == 100 && strcmp(l.v[0], "n000") == 0 && strcmp(l.v[99], "n099") == 0, "sorted");
	names_free(&l);
}

static void out_of_memory(void)
{
	struct names l = { 0 };

	CHECK_INT(names_take(&l, strdup("x")), 0, "a name taken");
	CHECK_INT(names_take(&l, NULL), 1, "a name that could not be made stops the listing");
	CHECK_INT(l.err, -ENOMEM, "and says why");
	CHECK_INT((int)l.n, 1, "what was kept stays");
	names_free(&l);
}

int main(void)
{
	filters_and_order();
	many_and_unfiltered();
	out_of_memory();
	return unit_done();
}
