// SPDX-License-Identifier: MIT
/* gpuvm-dra's log lines. */
#include <stdarg.h>
#include <stdio.h>

#include "dralog.h"

void dra_log(const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "gpuvm-dra: %s\n", line);
}
