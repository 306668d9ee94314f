/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_TAGSPEC_H
#define GPUVM_TAGSPEC_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Where the host config lives when it is not in the initramfs, as config= says:
 *     LABEL=L | UUID=U | PARTUUID=P | PARTLABEL=N | /dev/NODE   [:/path/in/the/fs]
 * The path defaults to /etc/gpuvm/gpuvm.conf, so the root file system itself can be named.
 */
enum tag_type {
	TAG_LABEL,
	TAG_UUID,
	TAG_PARTUUID,
	TAG_PARTLABEL,
	TAG_PATH
};

#define TAG_VALUE_MAX 128
#define TAG_FILE_MAX 128

struct tag_spec {
	enum tag_type type;
	char value[TAG_VALUE_MAX]; /* the label, UUID, … or the device path */
	char file[TAG_FILE_MAX];   /* absolute, in the file system */
};

/*
 * Parse a config= value. -EINVAL for a bad one, with *why saying what is wrong.
 * The value of a tag may be in double quotes (LABEL="my disk"); it ends at the first ":/".
 */
int tag_parse(const char *s, struct tag_spec *t, const char **why);
const char *tag_name(enum tag_type t);
/* Does a probed value match? UUIDs compare without regard to case, labels exactly. */
bool tag_value_matches(const struct tag_spec *t, const char *value);
/* "LABEL=gpuvm:/etc/gpuvm/gpuvm.conf" */
void tag_format(const struct tag_spec *t, char *buf, size_t size);

#endif
