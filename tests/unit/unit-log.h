/* SPDX-License-Identifier: MIT */
/* For unit tests that run a command: did it log an error that says this? */
#ifndef GPUVM_UNIT_LOG_H
#define GPUVM_UNIT_LOG_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "log.h"

/* An error logged since log_setup() holds needle; when none does, the errors are printed. */
static inline bool unit_logged(const char *needle)
{
	size_t i;

	for (i = 0; i < log_count(LOG_ERR); i++)
		if (strstr(log_get(LOG_ERR, i), needle))
			return true;
	printf("#   no error with '%s'; errors:\n", needle);
	for (i = 0; i < log_count(LOG_ERR); i++)
		printf("#     %s\n", log_get(LOG_ERR, i));
	return false;
}

#endif
