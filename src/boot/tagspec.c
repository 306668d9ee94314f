// SPDX-License-Identifier: MIT
/* config= values: which file system, found by which tag, and which file in it. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "tagspec.h"
#include "util.h"

static const char *const names[] = {
	[TAG_LABEL] = "LABEL",	       [TAG_UUID] = "UUID", [TAG_PARTUUID] = "PARTUUID",
	[TAG_PARTLABEL] = "PARTLABEL", [TAG_PATH] = "",
};

const char *tag_name(enum tag_type t)
{
	return names[t];
}

static bool printable_ascii(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] < ' ' || (unsigned char)s[i] >= 0x7f)
			return false;
	return true;
}

/* The file part: absolute, no "." or ".." component, no empty component. */
static int parse_file(const char *f, struct tag_spec *t, const char **why)
{
	const char *c = f;

	if (strlen(f) >= sizeof(t->file)) {
		*why = "the path in the file system is too long";
		return -EINVAL;
	}
	while (*c == '/') {
		const char *end = strchrnul(c + 1, '/');
		size_t n = (size_t)(end - c - 1);

		if (n == 0 || (n == 1 && c[1] == '.') || (n == 2 && c[1] == '.' && c[2] == '.')) {
			*why = "the path in the file system has an empty, '.' or '..' component";
			return -EINVAL;
		}
		c = end;
	}
	if (*c || !printable_ascii(f, strlen(f)) || strchr(f, ' ')) {
		*why = "the path in the file system must be absolute, printable, without blanks";
		return -EINVAL;
	}
	strscpy(t->file, f, sizeof(t->file));
	return 0;
}

int tag_parse(const char *s, struct tag_spec *t, const char **why)
{
	const char *v, *sep, *end;
	size_t i, n;

	memset(t, 0, sizeof(*t));
	*why = NULL;
	if (s[0] == '/') {
		t->type = TAG_PATH;
		v = s;
	} else {
		for (i = 0; i < TAG_PATH; i++)
			if (startswith(s, names[i]) && s[strlen(names[i])] == '=')
				break;
		if (i == TAG_PATH) {
			*why = "expected LABEL=, UUID=, PARTUUID=, PARTLABEL= or a /dev/ path";
			return -EINVAL;
		}
		t->type = (enum tag_type)i;
		v = s + strlen(names[i]) + 1;
	}
	if (*v == '"') {
		v++;
		end = strchr(v, '"');
		if (!end) {
			*why = "an opening quote without its closing quote";
			return -EINVAL;
		}
		sep = end + 1;
		if (*sep && !(sep[0] == ':' && sep[1] == '/')) {
			*why = "after the closing quote only :/PATH may follow";
			return -EINVAL;
		}
	} else {
		sep = strstr(v, ":/");
		end = sep ? sep : v + strlen(v);
	}
	n = (size_t)(end - v);
	if (n == 0) {
		*why = "an empty value";
		return -EINVAL;
	}
	if (n >= sizeof(t->value)) {
		*why = "the value is too long";
		return -EINVAL;
	}
	if (!printable_ascii(v, n)) {
		*why = "the value has a control or non-ASCII byte";
		return -EINVAL;
	}
	if (memchr(v, '"', n)) { /* no escapes: tag_format could not write it back */
		*why = "a double quote inside the value";
		return -EINVAL;
	}
	memcpy(t->value, v, n);
	t->value[n] = '\0';
	if (t->type == TAG_PATH &&
	    (!startswith(t->value, "/dev/") || strstr(t->value, "/..") || strchr(t->value, ' '))) {
		*why = "a device path must be under /dev/, without '..' or blanks";
		return -EINVAL;
	}
	if (sep && *sep)
		return parse_file(sep + 1, t, why);
	strscpy(t->file, CONFIG_PATH, sizeof(t->file));
	return 0;
}

bool tag_value_matches(const struct tag_spec *t, const char *value)
{
	if (t->type == TAG_UUID || t->type == TAG_PARTUUID)
		return strcasecmp(t->value, value) == 0;
	return streq(t->value, value);
}

void tag_format(const struct tag_spec *t, char *buf, size_t size)
{
	bool quote = strchr(t->value, ' ') || strstr(t->value, ":/");

	if (t->type == TAG_PATH)
		snprintf(buf, size, "%s:%s", t->value, t->file);
	else
		snprintf(buf, size, "%s=%s%s%s:%s", names[t->type], quote ? "\"" : "", t->value,
			 quote ? "\"" : "", t->file);
}
