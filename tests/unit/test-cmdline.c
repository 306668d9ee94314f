// SPDX-License-Identifier: MIT
/* The kernel command line tokenizer and key matching. */
#include "cmdline.h"
#include "unit.h"

struct collect {
	char out[512];
};

static int collect(const char *key, const char *value, void *data)
{
	struct collect *c = data;
	size_t n = strlen(c->out);

	snprintf(c->out + n, sizeof(c->out) - n, "[%s%s%s]", key, value ? "=" : "", value ? value : "");
	return 0;
}

static int stop_at_b(const char *key, const char *value, void *data)
{
	(void)value;
	collect(key, NULL, data);
	return strcmp(key, "b") == 0;
}

int main(void)
{
	static const struct {
		const char *in, *want;
	} words[] = {
		{ "", "" },
		{ "   \t  ", "" },
		{ "ro", "[ro]" },
		{ "root=/dev/sda1 ro quiet", "[root=/dev/sda1][ro][quiet]" },
		{ "  a=1   b=2\t", "[a=1][b=2]" },
		{ "gpuvm.ids=\"10de:2204 10de:1aef\" x", "[gpuvm.ids=10de:2204 10de:1aef][x]" },
		{ "\"gpuvm.mode=vm-passthrough\"", "[gpuvm.mode=vm-passthrough]" },
		{ "a=\"unterminated value", "[a=unterminated value]" },
		{ "a==b", "[a==b]" },
		{ "=x", "[=x]" },
		{ "\"\" y", "[y]" },
		{ "k=", "[k=]" },
		{ "dyndbg=\"file x.c +p\" z", "[dyndbg=file x.c +p][z]" },
	};
	static const struct {
		const char *key;
		bool ok;
		const char *name;
	} keys[] = {
		{ "gpuvm.mode", true, "mode" },
		{ "rd.gpuvm.mode", true, "mode" },
		{ "gpuvm.host-driver", true, "host_driver" },
		{ "rd.gpuvm.on-error", true, "on_error" },
		{ "gpuvm.", false, NULL },
		{ "gpuvm", false, NULL },
		{ "gpuvmx.mode", false, NULL },
		{ "rd.gpuvm", false, NULL },
		{ "xrd.gpuvm.mode", false, NULL },
		{ "rd.rd.gpuvm.mode", false, NULL },
		{ "gpuvm.a-very-long-key-name-that-does-not-fit-in-the-buffer-at-all", false, NULL },
	};
	struct collect c;
	size_t i;

	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		memset(&c, 0, sizeof(c));
		CHECK_INT(cmdline_parse(words[i].in, collect, &c), 0, "parse '%s' returns 0",
			  words[i].in);
		CHECK_STR(c.out, words[i].want, "parse '%s'", words[i].in);
	}
	memset(&c, 0, sizeof(c));
	CHECK_INT(cmdline_parse("a b c", stop_at_b, &c), 1, "a callback's return stops the walk");
	CHECK_STR(c.out, "[a][b]", "nothing after the stop");

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		char name[32] = "";
		bool ok = cmdline_key(keys[i].key, "gpuvm", name, sizeof(name));

		CHECK(ok == keys[i].ok, "key '%s' %s", keys[i].key,
		      keys[i].ok ? "matches" : "does not match");
		if (ok)
			CHECK_STR(name, keys[i].name, "key '%s' normalised", keys[i].key);
	}
	return unit_done();
}
