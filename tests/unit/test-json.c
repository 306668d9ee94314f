// SPDX-License-Identifier: MIT
/* The JSON writer's escaping and structure, checked by the validator, and the validator itself. */
#include <errno.h>

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

/* One lookup: its return value, and what it gave in out. */
static int get(const char *text, const char *a, const char *b, char *out, size_t size)
{
	const char *path[] = { a, b };

	out[0] = '\0';
	return json_get_string(text, strlen(text), path, b ? 2 : a ? 1 : 0, out, size);
}

static void reader(void)
{
	/* The state file as report_json writes it, with a quoted label in config=. */
	static const char state[] =
		"{\n  \"mode\": \"vm-passthrough\",\n"
		"  \"config_disk\": {\n    \"spec\": \"LABEL=\\\"my disk\\\":/etc/other.conf\",\n"
		"    \"status\": \"disk\",\n    \"device\": \"/dev/vdb\"\n  },\n"
		"  \"devices\": [{\"mode\": \"inner\"}],\n  \"result\": \"ok\"\n}\n";
	char out[64], small[4];

	CHECK_INT(get(state, "mode", NULL, out, sizeof(out)), 0, "reader: top-level string");
	CHECK_STR(out, "vm-passthrough", "reader: its value");
	CHECK_INT(get(state, "config_disk", "spec", out, sizeof(out)), 0, "reader: nested string");
	CHECK_STR(out, "LABEL=\"my disk\":/etc/other.conf", "reader: \\\" unescaped, read past it");
	CHECK_INT(get(state, "config_disk", "device", out, sizeof(out)), 0,
		  "reader: after an escaped quote");
	CHECK_STR(out, "/dev/vdb", "reader: the member after it");
	CHECK_INT(get(state, "result", NULL, out, sizeof(out)), 0, "reader: after an array of objects");
	CHECK_STR(out, "ok", "reader: the last member");
	CHECK_INT(get(state, "status", NULL, out, sizeof(out)), -ENOENT,
		  "reader: a key of a nested object is not a top-level one");
	CHECK_INT(get(state, "devices", "mode", out, sizeof(out)), -ENOENT,
		  "reader: an array on the way is not an object");
	CHECK_INT(get(state, "config_disk", NULL, out, sizeof(out)), -EINVAL,
		  "reader: an object is not a string");
	CHECK_INT(get("{\"a\": \"x \\\"mode\\\": \\\"evil\\\"\", \"mode\": \"good\"}", "mode", NULL,
		      out, sizeof(out)),
		  0, "reader: a key inside a string value is not a key");
	CHECK_STR(out, "good", "reader: the real member's value");
	CHECK_INT(get("{\"a\": {\"mode\": \"inner\"}, \"b\": [\"mode\", \"x\"]}", "mode", NULL, out,
		      sizeof(out)),
		  -ENOENT, "reader: keys of nested objects and strings of arrays are not members");
	CHECK_INT(get("{\"mode\": \"a\", \"mode\": \"b\"}", "mode", NULL, out, sizeof(out)),
		  -EINVAL, "reader: a duplicate key is ambiguous");
	CHECK_INT(get("{\"m\\u006fde\": \"x\", \"mode\": \"y\"}", "mode", NULL, out, sizeof(out)),
		  -EINVAL, "reader: a key spelled with \\u is the same key (twice)");
	CHECK_INT(get("{\"x\": {\"mode\": 1}, \"mode\": \"top\"}", "mode", NULL, out, sizeof(out)),
		  0, "reader: a key in a nested object does not count twice");
	CHECK_STR(out, "top", "reader: the top one");
	CHECK_INT(get("{\"s\": \"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\"}", "s", NULL, out, sizeof(out)),
		  0, "reader: every two-character escape");
	CHECK_STR(out, "a\"b\\c/d\b\f\n\r\t", "reader: each decoded");
	CHECK_INT(get("{\"s\": \"\\u00e9\\u20ac\\ud83d\\ude00\\u0041\"}", "s", NULL, out, sizeof(out)),
		  0, "reader: \\u escapes and a surrogate pair");
	CHECK_STR(out,
		  "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"
		  "A",
		  "reader: as UTF-8");
	CHECK_INT(get("{\"s\": \"caf\xc3\xa9\"}", "s", NULL, out, sizeof(out)), 0, "reader: raw UTF-8");
	CHECK_STR(out, "caf\xc3\xa9", "reader: kept");
	CHECK_INT(get("{\"s\": \"a\\u0000b\"}", "s", NULL, out, sizeof(out)), -EINVAL,
		  "reader: \\u0000 refused (it would cut the string)");
	CHECK_INT(get("{\"s\": \"\\ud800x\"}", "s", NULL, out, sizeof(out)), -EINVAL,
		  "reader: a lone high surrogate refused");
	CHECK_INT(get("{\"s\": \"\\udc00\"}", "s", NULL, out, sizeof(out)), -EINVAL,
		  "reader: a lone low surrogate refused");
	CHECK_INT(get("{\"mode\": \"vm-passthrough\"", "mode", NULL, out, sizeof(out)), -EINVAL,
		  "reader: truncated input refused");
	CHECK_INT(get("{\"mode\": \"vm-pass", "mode", NULL, out, sizeof(out)), -EINVAL,
		  "reader: input cut inside a string refused");
	CHECK_INT(get("", "mode", NULL, out, sizeof(out)), -EINVAL, "reader: empty input refused");
	CHECK_INT(get("{\"mode\": \"vm-passthrough\"}", "mode", NULL, small, sizeof(small)), -E2BIG,
		  "reader: a value larger than the buffer");
	CHECK_STR(small, "vm-", "reader: cut, terminated");
	CHECK_INT(get("{\"n\": 12, \"t\": true, \"z\": null, \"a\": [1, {\"b\": \"]}\"}], \"s\": \"ok\"}",
		      "s", NULL, out, sizeof(out)),
		  0, "reader: past numbers, literals, brackets in strings");
	CHECK_STR(out, "ok", "reader: found");
	CHECK_INT(get("{\"z\": null}", "z", NULL, out, sizeof(out)), -EINVAL,
		  "reader: null is not a string");
	CHECK_INT(get("\"top\"", NULL, NULL, out, sizeof(out)), 0, "reader: depth 0, the text itself");
	CHECK_STR(out, "top", "reader: top string");
	CHECK_INT(get("{}", "mode", NULL, out, sizeof(out)), -ENOENT, "reader: empty object");
}

int main(void)
{
	static const char *const good[] = {
		"{}",
		"[]",
		"0",
		"-0.5e+3",
		"\"\\u00e9\"",
		"  {\"a\": [true, false, null]}  ",
		"[1,2,{\"x\":\"\xc3\xa9\"}]",
		"\"\\/\"",
	};
	static const char *const bad[] = {
		"",
		"{",
		"}",
		"[1,]",
		"{\"a\"}",
		"{\"a\":}",
		"{a:1}",
		"01",
		"1.",
		"-",
		"tru",
		"\"unterminated",
		"\"ctrl\x01\"",
		"\"\\x\"",
		"\"\\u12\"",
		"[1] [2]",
		"\"\xc3\x28\"",
		"{\"a\":1,}",
		"nul",
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
	reader();
	return unit_done();
}
