// SPDX-License-Identifier: MIT
/* The node's ResourceSlices (not yet published: the tick does nothing). */
#include "slices.h"

void slices_tick(void *data)
{
	(void)data;
}
