/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_JSON_H
#define GPUVM_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define JSON_DEPTH_MAX 64	/* deeper containers are not supported (gpuvm uses 4) */

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
void json_string(struct json *j, const char *key, const char *value);	/* NULL: null */
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

#endif
