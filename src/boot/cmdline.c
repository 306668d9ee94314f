// SPDX-License-Identifier: MIT
/*
 * Kernel command line tokenizer. Words are separated by whitespace; a double quote
 * toggles quoting anywhere in a word and is itself dropped, so that both
 * "gpuvm.ids=a b" and gpuvm.ids="a b" give the key gpuvm.ids and the value "a b".
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

#include "cmdline.h"
#include "util.h"

int cmdline_parse(const char *line, cmdline_cb cb, void *data)
{
	size_t len = strlen(line);
	char *word = malloc(len + 1);
	const char *p = line;
	int r = 0;

	if (!word)
		return -ENOMEM;

	while (*p) {
		bool quoted = false;
		size_t n = 0;
		char *eq;

		while (*p && isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		for (; *p && (quoted || !isspace((unsigned char)*p)); p++) {
			if (*p == '"')
				quoted = !quoted;
			else
				word[n++] = *p;
		}
		word[n] = '\0';
		if (n == 0)
			continue;

		eq = strchr(word, '=');
		if (eq)
			*eq = '\0';
		r = cb(word, eq ? eq + 1 : NULL, data);
		if (r)
			break;
	}
	free(word);
	return r;
}

bool cmdline_key(const char *key, const char *prefix, char *out, size_t size)
{
	size_t plen = strlen(prefix), i;

	if (startswith(key, "rd."))
		key += 3;
	if (strncmp(key, prefix, plen) != 0 || key[plen] != '.' || key[plen + 1] == '\0')
		return false;
	key += plen + 1;
	for (i = 0; key[i] && i + 1 < size; i++)
		out[i] = key[i] == '-' ? '_' : key[i];
	if (key[i])
		return false;
	out[i] = '\0';
	return true;
}
