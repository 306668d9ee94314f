// SPDX-License-Identifier: MIT
/* The modes by name. */
#include <errno.h>

#include "mode.h"
#include "util.h"

static const char *const mode_names[] = {
	[MODE_CONTAINER] = "container",
	[MODE_VM_PASSTHROUGH] = "vm-passthrough",
	[MODE_VM_VGPU] = "vm-vgpu",
};

const char *mode_name(enum mode m)
{
	return mode_names[m];
}

int mode_parse(const char *s, enum mode *m)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(mode_names); i++)
		if (streq(s, mode_names[i])) {
			*m = (enum mode)i;
			return 0;
		}
	return -EINVAL;
}
