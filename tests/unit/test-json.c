// SPDX-License-Identifier: MIT
/* The JSON writer's escaping and structure, checked by the validator, and the validator itself. */
#include "json.h"
#include "unit.h"

static char *render(void (*fn)(struct json *j))
{
	static char buf[4096];
	FILE *f = fmemopen(buf, sizeof(buf), "w");
	struct json j;

	json_init(&j, f);
	fn(&j);
	fclose(f);
	return buf;
}

static void doc(struct json *j)
{
	json_object_begin(j, NULL);
	json_string(j, "plain", "vfio-pci");
	json_string(j, "quote", "a\"b\\c");
	json_string(j, "control", "tab\there\nnl\x01\x7f");
	json_string(j, "utf8", "caf\xc3\xa9 \xe2\x82\xac");
	json_string(j, "bad_utf8", "x\xc3\x28y\xff\xed\xa0\x80");
	json_string(j, "null", NULL);
	json_int(j, "int", -42);
	json_bool(j, "yes", true);
	json_array_begin(j, "empty");
	json_array_end(j);
	json_object_begin(j, "nested");
	json_array_begin(j, "list");
	json_string(j, NULL, "a");
	json_int(j, NULL, 1);
	json_array_end(j);
	json_object_end(j);
	json_raw(j, "raw", "{\"x\": [1, 2]}");
	json_object_end(j);
	json_finish(j);
}

int main(void)
{
	static const char *const good[] = {
		"{}", "[]", "0", "-0.5e+3", "\"\\u00e9\"", "  {\"a\": [true, false, null]}  ",
		"[1,2,{\"x\":\"\xc3\xa9\"}]", "\"\\/\"",
	};
	static const char *const bad[] = {
		"", "{", "}", "[1,]", "{\"a\"}", "{\"a\":}", "{a:1}", "01", "1.", "-", "tru",
		"\"unterminated", "\"ctrl\x01\"", "\"\\x\"", "\"\\u12\"", "[1] [2]", "\"\xc3\x28\"",
		"{\"a\":1,}", "nul",
	};
	char deep[300];
	const char *out = render(doc);
	size_t i;

	CHECK(json_valid(out, strlen(out)), "the writer's document is valid JSON");
	CHECK(strstr(out, "\"quote\": \"a\\\"b\\\\c\"") != NULL, "quotes and backslashes escaped");
	CHECK(strstr(out, "\"tab\\there\\nnl\\u0001\\u007f\"") != NULL, "control characters escaped");
	CHECK(strstr(out, "\"caf\xc3\xa9 \xe2\x82\xac\"") != NULL, "valid UTF-8 kept");
	CHECK(strstr(out, "\"x\\ufffd(y\\ufffd\\ufffd\\ufffd\\ufffd\"") != NULL,
	      "invalid UTF-8 and surrogates replaced byte by byte");
	CHECK(strstr(out, "\"null\": null") != NULL, "NULL string is null");
	CHECK(strstr(out, "\"empty\": []") != NULL, "empty array");
	CHECK(strstr(out, "\"raw\": {\"x\": [1, 2]}") != NULL, "raw value inserted");
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		CHECK(json_valid(good[i], strlen(good[i])), "valid: %zu", i);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(!json_valid(bad[i], strlen(bad[i])), "invalid: %zu", i);
	memset(deep, '[', sizeof(deep));
	CHECK(!json_valid(deep, sizeof(deep)), "deep nesting refused, no stack overflow");
	CHECK(!json_valid("{\"a\":1}\0x", 9), "bytes after the value");
	return unit_done();
}
