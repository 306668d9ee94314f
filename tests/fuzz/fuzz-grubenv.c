// SPDX-License-Identifier: MIT
/*
 * The next boot's pure readers of GRUB's environment (src/tools/nextboot.c):
 * nextboot_grubenv_get and nextboot_expand, over a grubenv block of the input.
 *
 * Input: NAME '\0' LINE '\0' ENV (the rest, an exact buffer). Invariants: the value of a
 * name is 0 or -ENOENT, never longer than the block, and "NAME=" then starts a line of it;
 * a line is resolved (0) or refused (-EINVAL with a reason, nothing out); what a resolved
 * line gives holds no $, `, \ or ' (each is expanded or refused), and a line without them is
 * given back as it is; "via" is empty or names a variable.
 */
#include <errno.h>

#include "fuzz.h"
#include "nextboot.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_log_quiet();
	return 0;
}

/* Does "name=" start a line of the block (the first, or one after a newline)? */
static bool at_line_start(const char *text, size_t len, const char *name)
{
	size_t n = strlen(name), i;

	for (i = 0; i + n < len; i++)
		if ((i == 0 || text[i - 1] == '\n') && !memcmp(text + i, name, n) && text[i + n] == '=')
			return true;
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *name = (const char *)data, *line, *end = (const char *)data + size;
	char *env, *value = NULL, *out = NULL, via[NB_TEXT], why[NB_TEXT];
	struct nb_env e;
	size_t len;
	int r;

	line = memchr(name, '\0', size);
	if (!line || !memchr(line + 1, '\0', (size_t)(end - line - 1)))
		return 0;
	line++;
	len = (size_t)(end - (line + strlen(line) + 1));
	env = malloc(len ? len : 1); /* exact: ASan sees a read past it */
	if (!env)
		abort();
	memcpy(env, line + strlen(line) + 1, len);
	r = nextboot_grubenv_get(env, len, name, &value);
	fuzz_assert(r == 0 || r == -ENOENT, "grubenv_get returned %d", r);
	if (r == 0) {
		fuzz_assert(value && strlen(value) <= len, "a value longer than the block");
		fuzz_assert(name[0] && at_line_start(env, len, name), "'%s' is no line's name", name);
		free(value);
	} else {
		fuzz_assert(!value, "a value with -ENOENT");
	}
	e = (struct nb_env){ "/boot/grub2/grubenv", env, len };
	why[0] = '\0';
	r = nextboot_expand(line, &e, 1, &out, via, sizeof(via), why, sizeof(why));
	fuzz_assert(r == 0 || r == -EINVAL, "expand returned %d", r);
	fuzz_assert(r == 0 || strpbrk(line, "$`\\'"), "a plain line refused: %s", why);
	if (r == 0) {
		fuzz_assert(out && !strpbrk(out, "$`\\'"), "'%s' keeps a $, `, \\ or '", out);
		fuzz_assert(strpbrk(line, "$") || !strcmp(out, line), "a plain line changed");
		fuzz_assert(!via[0] || via[0] == '$', "via '%s'", via);
		free(out);
	} else {
		fuzz_assert(!out && why[0], "refused without a reason, or with a line");
	}
	free(env);
	return 0;
}
