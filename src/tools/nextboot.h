/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_NEXTBOOT_H
#define GPUVM_NEXTBOOT_H

#include <stdbool.h>
#include <stddef.h>

#include "settings.h"

/*
 * What the next boot will make of the host config. gpuvm's initramfs reads
 * /etc/gpuvm/gpuvm.conf from the real root, and every image built while gpuvm is installed
 * carries gpuvm; so a change of the file takes effect at the next boot, with no rebuild,
 * when /run/gpuvm/boot.json says that gpuvm ran in this boot's initramfs (its boot_id is
 * this boot's) and read the root's file (not config='s disk), and no boot-loader file gpuvm
 * can read puts the key on the kernel command line (gpuvm.KEY=). What cannot be read makes
 * the judgement "unknown", never a yes. Nothing here logs: the callers (config set, status,
 * check) word it with nextboot_say, the one place that does.
 */
#define NB_TEXT 320
#define NB_MODE 24

/* A gpuvm word of a kernel command line: gpuvm.KEY=VALUE or rd.gpuvm.KEY=VALUE. */
struct nb_word {
	char *key;    /* the setting's name, '-' as '_' ("mode", "config") */
	char *value;  /* as the line gives it */
	char *source; /* "/etc/default/grub:4", "/boot/loader/entries/NAME.conf", ... */
};

struct nb_words {
	struct nb_word *w;
	size_t n, cap;
};

struct nextboot {
	struct nb_words line; /* what the boot-loader files put on the next boot's line */
	struct nb_words now;  /* this boot's /proc/cmdline */
	char *unknown;	      /* the first boot-loader file that could not be read whole: why */
	size_t n_entries;     /* BLS entries read */
	/* this boot, by /run/gpuvm/boot.json */
	int boot_json; /* 1: of this boot; 0: none; -1: unreadable, or of another boot */
	char boot_why[NB_TEXT];
	char host_config[16]; /* its boot.host_config: "read", "missing", "disk", ... */
	char host_config_why[NB_TEXT];
	char boot_mode_source[NB_TEXT];
	/* the host config file, read alone (no command line) */
	const char *other_file; /* --config FILE: not the file the boot reads; NULL */
	char file_mode[NB_MODE];
	char file_mode_source[NB_TEXT];
	char file_config[256];		    /* the file's config=, "" when none */
	char file_gpus[SETTINGS_VALUE_MAX]; /* the file's gpus=, "" when none */
};

enum nb_verdict {
	NB_READS,  /* the next boot reads the file for the key */
	NB_PINNED, /* a boot-loader file sets the key on the kernel command line */
	NB_UNKNOWN
};

struct nb_judgement {
	enum nb_verdict verdict;
	const struct nb_word *pin; /* NB_PINNED: the word */
	bool conflict;		   /* NB_PINNED: with another value than the file's */
	bool no_boot;		   /* NB_UNKNOWN: gpuvm's run at this boot is not proven */
	char why[NB_TEXT];	   /* NB_READS, NB_UNKNOWN: why */
};

/*
 * Read what the judgement needs, under the root: boot.json, the boot_id, the boot-loader
 * files, this boot's command line (cmdline: --cmdline's, NULL: /proc/cmdline) and the host
 * config (config_file: --config's, NULL: the root's). 0 or -ENOMEM; what cannot be read is
 * kept as a reason, not failed. nextboot_fini frees.
 */
int nextboot_judge(struct nextboot *nb, const char *config_file, const char *cmdline);
void nextboot_fini(struct nextboot *nb);

/* The judgement for one setting (its name, "mode") that the file now gives value. */
void nextboot_verdict(const struct nextboot *nb, const char *key, const char *value,
		      struct nb_judgement *j);

/* The first word of the boot-loader files that sets key ("mode"), or NULL. */
const struct nb_word *nextboot_line_word(const struct nextboot *nb, const char *key);

/*
 * What follows "next boot: " in config set, status and check: "reads the file: WHY",
 * "pinned: gpuvm.KEY=VALUE on the boot line (SOURCE)", "unknown: WHY". Not yet made safe
 * for a terminal (term_safe).
 */
void nextboot_say(const struct nb_judgement *j, char *buf, size_t size);

/* The name of a verdict for JSON: "reads", "pinned", "unknown". */
const char *nextboot_verdict_name(enum nb_verdict v);

/* A grubenv file's text (the path names it in reasons). */
struct nb_env {
	const char *path; /* "/boot/grub2/grubenv" */
	const char *text;
	size_t len;
};

/*
 * Pure: the value of name in a grubenv block (KEY=VALUE lines, '\' escaping the next byte,
 * '#' lines and padding skipped), unescaped, for the caller to free. 0, -ENOENT, -ENOMEM.
 */
int nextboot_grubenv_get(const char *text, size_t len, const char *name, char **value);

/*
 * Pure: a BLS line's $NAME and ${NAME} resolved from the grubenv files (a name every file
 * that has it agrees on) into *out, for the caller to free; via, when a resolved value
 * brought gpuvm words: "$NAME from PATH". -EINVAL, why saying it, when a name is in none,
 * differs between two, or the line or a value uses a form gpuvm does not read (\, ', $ in
 * a value, $ not followed by a name); -ENOMEM.
 */
int nextboot_expand(const char *line, const struct nb_env *env, size_t n_env, char **out, char *via,
		    size_t via_size, char *why, size_t why_size);

#endif
