/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_MODE_H
#define GPUVM_MODE_H

/* The three modes of a node, as its label names them. Pure. */
enum mode {
	MODE_CONTAINER,
	MODE_VM_PASSTHROUGH,
	MODE_VM_VGPU
};

/* "container", "vm-passthrough", "vm-vgpu". */
const char *mode_name(enum mode m);
/* One of those names into *m: 0, or -EINVAL. */
int mode_parse(const char *s, enum mode *m);

#endif
