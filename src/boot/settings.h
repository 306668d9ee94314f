/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_SETTINGS_H
#define GPUVM_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>

#include "log.h"
#include "mode.h"
#include "pci.h"

/* How long a boot waits for config='s disk when neither config_timeout nor rd.retry says. */
#define CONFIG_TIMEOUT_DEFAULT 90
/* The longest wait config_timeout (or half of rd.retry) may ask for; a deadline past it is none. */
#define CONFIG_TIMEOUT_MAX 3600

#define SETTINGS_LIST_MAX 64
#define SOURCE_LEN 160

/*
 * A key's value as text (settings_value), whole: the longest list, SETTINGS_LIST_MAX
 * entries of "DDDDDDDD:BB:DD.F" (an 8-digit domain) and a comma each, the last comma's room
 * holding the NUL. ids= entries ("VVVV:*", "VVVV:DDDD") are shorter; settings.c checks
 * the other keys fit at compile time.
 */
#define SETTINGS_ENTRY_TEXT_MAX 17
#define SETTINGS_VALUE_MAX ((size_t)SETTINGS_LIST_MAX * SETTINGS_ENTRY_TEXT_MAX)

enum on_error {
	ON_ERROR_HOLD,
	ON_ERROR_RELEASE
};

enum setting_key {
	KEY_MODE,
	KEY_IDS,
	KEY_EXCLUDE,
	KEY_NVSWITCH,
	KEY_HOST_DRIVER,
	KEY_ON_ERROR,
	KEY_CONFIG,
	KEY_WRITE_TIMEOUT_MS,
	KEY_CONFIG_TIMEOUT,
	KEY_GPUS,
	KEY__MAX
};

/*
 * Where a key's value came from: set where the settings are resolved (settings_load, and
 * prep_mode for --mode), asked as this type; settings_source() words it for display only.
 */
enum set_from {
	FROM_DEFAULT,
	FROM_CONFIG,  /* a host config's line: where[] says FILE:LINE */
	FROM_CMDLINE, /* the kernel command line, gpuvm.KEY= */
	FROM_OPTION,  /* a command's option (--mode) */
};

/* NUMA nodes gpus= may name (numa:N): 0 to GPUS_NUMA_MAX - 1. */
#define GPUS_NUMA_MAX 64

/* An entry of gpus=: a PCI address, or every GPU of a NUMA node (numa >= 0). */
struct gpu_pick {
	struct pci_addr addr; /* numa < 0 */
	int numa;	      /* numa:N; -1 for an address */
};

struct settings {
	enum mode mode;
	struct pci_id ids[SETTINGS_LIST_MAX];
	size_t n_ids; /* 0: the default match */
	struct pci_addr exclude[SETTINGS_LIST_MAX];
	size_t n_exclude;
	/*
	 * gpus=: in a VM mode, the GPUs the mode takes (with their groups' companions); the
	 * others stay with the host. 0: every GPU the selection (ids=) takes.
	 */
	struct gpu_pick gpus[SETTINGS_LIST_MAX];
	size_t n_gpus;
	bool nvswitch_vm;
	char host_driver[64]; /* "" when not set */
	enum on_error on_error;
	char config[256]; /* where the host config lives, "" when in the image */
	unsigned write_timeout_ms;
	unsigned config_timeout_s;	  /* how long a boot waits for the config's disk */
	enum set_from from[KEY__MAX];	  /* per key: where its value came from */
	char where[KEY__MAX][SOURCE_LEN]; /* FROM_CONFIG: "FILE:LINE"; else "" */
};

/* The sources of settings; config may be NULL (no file), config_path names it. */
struct settings_input {
	const char *cmdline;
	const char *config;
	size_t config_len;
	const char *config_path;
};

/* What a parse found wrong, as data: one place logs it (settings_msgs_log), tests read it. */
#define SETTINGS_MSG_LEN 512
struct settings_msg {
	enum log_level level;	     /* LOG_ERR or LOG_WARNING */
	char text[SETTINGS_MSG_LEN]; /* "WHERE: KEY: what" (WHERE: FILE:LINE or cmdline) */
};

struct settings_msgs {
	struct settings_msg *v;
	size_t n;
};

void settings_default(struct settings *s);
/*
 * Resolve every key: cmdline over host config over default. A bad value is an error that
 * names its source and key, an unknown key a warning, each a message added to m (NULL: a
 * quiet look, nothing kept); the key then falls back to the next source. A source says its
 * first ten messages and counts the rest in one more. Returns the number of errors, all of
 * them (never fails the boot).
 */
int settings_load(struct settings *s, const struct settings_input *in, struct settings_msgs *m);
/* Log the messages, in order, at their levels. */
void settings_msgs_log(const struct settings_msgs *m);
void settings_msgs_free(struct settings_msgs *m);

/*
 * Check one KEY=VALUE as the host config takes it (the label key counts as mode): the
 * key, -ENOENT for an unknown key, -EINVAL for a bad value; *expect says what it takes.
 */
int settings_check(const char *key, const char *value, const char **expect);
/* Do two spellings name the same key (dashes, the label key)? */
bool settings_same_key(const char *a, const char *b);

const char *key_name(enum setting_key k);
/*
 * Where key k came from, as the documents say it: "default", "cmdline", "--mode" or
 * FILE:LINE. For display only: a decision asks s->from[k] (and settings_mode_pinned).
 */
const char *settings_source(const struct settings *s, enum setting_key k);
/* Set where key k came from (where: FILE:LINE for FROM_CONFIG, else ignored). */
void settings_set_from(struct settings *s, enum setting_key k, enum set_from from, const char *where);
/*
 * Whether the kernel command line pins the mode (gpuvm.mode=): the boot's first call then
 * acts on it and holds nothing, and no host config can change it. The one place this is
 * decided; the boot (confsource, prepare, report) and cmdline's conflicts ask it.
 */
bool settings_mode_pinned(const struct settings *s);
/*
 * The value of a key as text, for the report: whole in SETTINGS_VALUE_MAX bytes; a smaller
 * buffer gets the entries that fit.
 */
void settings_value(const struct settings *s, enum setting_key k, char *buf, size_t size);
/*
 * Do two values of key name the same setting? gpus= by the entries it names (their order
 * and spelling aside); any other key as written.
 */
bool settings_same_value(const char *key, const char *a, const char *b);
/* Does gpus= name a NUMA node (numa:N), so that the scan must read numa_node? */
bool settings_gpus_numa(const struct settings *s);
/*
 * Does gpus= pick a GPU at addr on NUMA node numa (-1 unknown)? True when gpus= is not set.
 */
bool settings_gpus_pick(const struct settings *s, const struct pci_addr *addr, int numa);

#endif
