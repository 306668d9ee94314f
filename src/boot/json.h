/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_JSON_H
#define GPUVM_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define JSON_DEPTH_MAX 64 /* deeper containers are not supported (gpuvm uses 4) */

/* A small streaming JSON writer: two-space indentation, strings escaped as RFC 8259 asks. */
struct json {
	FILE *f;
	int depth;
	bool first[JSON_DEPTH_MAX];
};

void json_init(struct json *j, FILE *f);
/* key is NULL inside arrays and at the top level. */
void json_object_begin(struct json *j, const char *key);
void json_object_end(struct json *j);
void json_array_begin(struct json *j, const char *key);
void json_array_end(struct json *j);
void json_string(struct json *j, const char *key, const char *value); /* NULL: null */
void json_int(struct json *j, const char *key, long long value);
void json_bool(struct json *j, const char *key, bool value);
void json_null(struct json *j, const char *key);
/* A value that is already JSON text (checked with json_valid by the caller). */
void json_raw(struct json *j, const char *key, const char *text);
void json_finish(struct json *j);

/* Escape s as a JSON string body into f. Invalid UTF-8 bytes become U+FFFD. */
void json_escape(FILE *f, const char *s);

/* Pure: is text one complete JSON value (with surrounding whitespace)? */
bool json_valid(const char *text, size_t len);

/*
 * Pure: the string at a path of object keys in one JSON text ({"config_disk", "status"}:
 * text.config_disk.status; depth 0: the text itself), unescaped (\uXXXX and surrogate
 * pairs to UTF-8) into buf, NUL-terminated. Keys are compared decoded, only members of the
 * objects on the path count (never a key inside a string or a deeper object), and a key
 * twice in one of those objects is ambiguous. 0; -ENOENT when a key is absent or a value
 * on the way is not an object; -EINVAL when the text is not valid JSON, a key is there
 * twice, or the value is not a string or holds \u0000 or a lone surrogate; -E2BIG when it
 * does not fit in size (buf then holds what fits).
 */
int json_get_string(const char *text, size_t len, const char *const *path, size_t depth, char *buf,
		    size_t size);

#endif
