// SPDX-License-Identifier: MIT
/*
 * Settings: each key is resolved on its own, highest source first: the kernel command
 * line (gpuvm.KEY= or rd.gpuvm.KEY=, the last occurrence wins), the host config, the
 * built-in default. A bad value is an error and falls back to the next source.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "cmdline.h"
#include "config.h"
#include "log.h"
#include "settings.h"
#include "tagspec.h"
#include "util.h"

#define WRITE_TIMEOUT_MS_DEFAULT 5000

struct key_def {
	const char *name;
	const char *expect;
	int (*parse)(struct settings *s, const char *v, char *bad, size_t badsize);
};

static int parse_mode(struct settings *s, const char *v, char *bad, size_t badsize)
{
	(void)bad;
	(void)badsize;
	return mode_parse(v, &s->mode);
}

static int parse_ids(struct settings *s, const char *v, char *bad, size_t badsize)
{
	return pci_id_list_parse(v, s->ids, SETTINGS_LIST_MAX, &s->n_ids, bad, badsize);
}

static int parse_exclude(struct settings *s, const char *v, char *bad, size_t badsize)
{
	return pci_addr_list_parse(v, s->exclude, SETTINGS_LIST_MAX, &s->n_exclude, bad, badsize);
}

/* One entry of gpus=: an address as exclude= takes it, or numa:N. */
static int gpu_pick_parse(const char *item, struct gpu_pick *g)
{
	unsigned long n;
	char *end;

	if (strncmp(item, "numa:", 5) != 0) {
		g->numa = -1;
		return pci_addr_parse(item, &g->addr);
	}
	item += 5;
	if (*item < '0' || *item > '9')
		return -EINVAL;
	errno = 0;
	n = strtoul(item, &end, 10);
	if (errno || *end || n >= GPUS_NUMA_MAX)
		return -ERANGE;
	memset(&g->addr, 0, sizeof(g->addr));
	g->numa = (int)n;
	return 0;
}

static bool gpu_pick_same(const struct gpu_pick *a, const struct gpu_pick *b)
{
	if (a->numa >= 0 || b->numa >= 0)
		return a->numa == b->numa;
	return pci_addr_cmp(&a->addr, &b->addr) == 0;
}

/* gpus=: a list as exclude= is one (commas or blanks), each entry once. */
static int parse_gpus(struct settings *s, const char *v, char *bad, size_t badsize)
{
	char item[64];
	size_t n = 0, i;
	int r;

	while (*v) {
		size_t len = strcspn(v, ", \t");

		if (len == 0) {
			v++;
			continue;
		}
		snprintf(item, sizeof(item), "%.*s", (int)(len < sizeof(item) ? len : 16), v);
		v += len;
		if (len >= sizeof(item)) {
			snprintf(bad, badsize, "%s...", item);
			return -EINVAL;
		}
		if (n == SETTINGS_LIST_MAX) {
			strscpy(bad, item, badsize);
			return -E2BIG;
		}
		r = gpu_pick_parse(item, &s->gpus[n]);
		if (r == -ERANGE) {
			snprintf(bad, badsize, "%s: NUMA nodes are 0 to %d", item, GPUS_NUMA_MAX - 1);
			return -EINVAL;
		}
		if (r < 0) {
			snprintf(bad, badsize, "%s", item);
			return -EINVAL;
		}
		for (i = 0; i < n; i++)
			if (gpu_pick_same(&s->gpus[i], &s->gpus[n])) {
				snprintf(bad, badsize, "%s: named twice", item);
				return -EINVAL;
			}
		n++;
	}
	if (n == 0) {
		strscpy(bad, "(empty list)", badsize);
		return -EINVAL;
	}
	s->n_gpus = n;
	return 0;
}

static int parse_nvswitch(struct settings *s, const char *v, char *bad, size_t badsize)
{
	(void)bad;
	(void)badsize;
	if (streq(v, "host"))
		s->nvswitch_vm = false;
	else if (streq(v, "vm"))
		s->nvswitch_vm = true;
	else
		return -EINVAL;
	return 0;
}

static int parse_host_driver(struct settings *s, const char *v, char *bad, size_t badsize)
{
	if (!valid_driver_name(v))
		return -EINVAL;
	/*
	 * The host's driver, by definition not vfio-pci or a variant of it (plan.c's
	 * driver_is_vfio): container mode would otherwise reserve the GPUs for vfio-pci, a VM
	 * mode under another name. nvidia_vgpu_vfio, a host-side vGPU driver, is fine.
	 */
	if (strstr(v, "vfio-pci") || strstr(v, "vfio_pci")) {
		strscpy(bad, "a vfio driver is not a host driver (vm-passthrough binds vfio-pci)",
			badsize);
		return -EINVAL;
	}
	return strscpy(s->host_driver, v, sizeof(s->host_driver));
}

static int parse_on_error(struct settings *s, const char *v, char *bad, size_t badsize)
{
	(void)bad;
	(void)badsize;
	if (streq(v, "hold"))
		s->on_error = ON_ERROR_HOLD;
	else if (streq(v, "release"))
		s->on_error = ON_ERROR_RELEASE;
	else
		return -EINVAL;
	return 0;
}

static int parse_config(struct settings *s, const char *v, char *bad, size_t badsize)
{
	struct tag_spec t;
	const char *why;

	if (tag_parse(v, &t, &why) < 0) {
		strscpy(bad, why, badsize);
		return -EINVAL;
	}
	return strscpy(s->config, v, sizeof(s->config));
}

static int parse_seconds(const char *v, unsigned long max, unsigned long *out)
{
	char *end;

	if (*v < '0' || *v > '9')
		return -EINVAL;
	errno = 0;
	*out = strtoul(v, &end, 10);
	if (errno || *end || *out > max)
		return -EINVAL;
	return 0;
}

static int parse_config_timeout(struct settings *s, const char *v, char *bad, size_t badsize)
{
	unsigned long sec;

	(void)bad;
	(void)badsize;
	if (parse_seconds(v, CONFIG_TIMEOUT_MAX, &sec) < 0)
		return -EINVAL;
	s->config_timeout_s = (unsigned)sec;
	return 0;
}

static int parse_write_timeout(struct settings *s, const char *v, char *bad, size_t badsize)
{
	unsigned long ms;
	char *end;

	(void)bad;
	(void)badsize;
	if (*v < '0' || *v > '9')
		return -EINVAL;
	errno = 0;
	ms = strtoul(v, &end, 10);
	if (errno || *end || ms < 100 || ms > 600000)
		return -EINVAL;
	s->write_timeout_ms = (unsigned)ms;
	return 0;
}

static const struct key_def keys[KEY__MAX] = {
	[KEY_MODE] = { "mode", "container, vm-passthrough or vm-vgpu", parse_mode },
	[KEY_IDS] = { "ids", "VVVV:DDDD or VVVV:* entries, comma-separated", parse_ids },
	[KEY_EXCLUDE] = { "exclude", "PCI addresses DDDD:BB:DD.F, comma-separated", parse_exclude },
	[KEY_NVSWITCH] = { "nvswitch", "host or vm", parse_nvswitch },
	[KEY_HOST_DRIVER] = { "host_driver", "a driver name of [A-Za-z0-9_-]", parse_host_driver },
	[KEY_ON_ERROR] = { "on_error", "hold or release", parse_on_error },
	[KEY_CONFIG] = { "config", "LABEL=, UUID=, PARTUUID=, PARTLABEL= or /dev/… [:/path]",
			 parse_config },
	[KEY_CONFIG_TIMEOUT] = { "config_timeout", "seconds, 0 to 3600", parse_config_timeout },
	[KEY_WRITE_TIMEOUT_MS] = { "write_timeout_ms", "milliseconds, 100 to 600000",
				   parse_write_timeout },
	[KEY_GPUS] = { "gpus", "PCI addresses DDDD:BB:DD.F or numa:N entries, comma-separated",
		       parse_gpus },
};

const char *key_name(enum setting_key k)
{
	return keys[k].name;
}

void settings_default(struct settings *s)
{
	size_t k;

	memset(s, 0, sizeof(*s));
	s->mode = MODE_CONTAINER;
	s->on_error = ON_ERROR_HOLD;
	s->write_timeout_ms = WRITE_TIMEOUT_MS_DEFAULT;
	s->config_timeout_s = CONFIG_TIMEOUT_DEFAULT;
	for (k = 0; k < KEY__MAX; k++)
		s->from[k] = FROM_DEFAULT;
}

const char *settings_source(const struct settings *s, enum setting_key k)
{
	switch (s->from[k]) {
	case FROM_CONFIG:
		return s->where[k];
	case FROM_CMDLINE:
		return "cmdline";
	case FROM_OPTION:
		return "--mode"; /* the one key an option sets */
	case FROM_DEFAULT:
		break;
	}
	return "default";
}

void settings_set_from(struct settings *s, enum setting_key k, enum set_from from, const char *where)
{
	s->from[k] = from;
	strscpy(s->where[k], from == FROM_CONFIG ? where : "", SOURCE_LEN);
}

bool settings_mode_pinned(const struct settings *s)
{
	return s->from[KEY_MODE] == FROM_CMDLINE;
}

/* The last value each source gave for each key, before validation. */
struct raw {
	char *value[KEY__MAX];
	char where[KEY__MAX][SOURCE_LEN];
};

static int lookup_key(const char *name)
{
	char norm[64];
	size_t i;

	if (streq(name, LABEL_KEY))
		return KEY_MODE;
	for (i = 0; name[i] && i + 1 < sizeof(norm); i++)
		norm[i] = name[i] == '-' ? '_' : name[i];
	norm[i] = '\0';
	for (i = 0; i < KEY__MAX; i++)
		if (streq(norm, keys[i].name))
			return (int)i;
	return -ENOENT;
}

int settings_check(const char *key, const char *value, const char **expect)
{
	struct settings tmp;
	char bad[80];
	int k = lookup_key(key);

	*expect = NULL;
	if (k < 0)
		return -ENOENT;
	*expect = keys[k].expect;
	settings_default(&tmp);
	if (*value == '\0' || keys[k].parse(&tmp, value, bad, sizeof(bad)) < 0)
		return -EINVAL;
	return k;
}

bool settings_same_key(const char *a, const char *b)
{
	int ka = lookup_key(a);

	return ka >= 0 && ka == lookup_key(b);
}

/* A message of the parse, kept for the caller; dropped (not counted twice) when memory runs out. */
static void say(struct settings_msgs *m, enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* gcc 12's -fanalyzer loses the array realloc() returns once it is stored in m (see raw_set). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wanalyzer-malloc-leak"
#endif
static void say(struct settings_msgs *m, enum log_level level, const char *fmt, ...)
{
	struct settings_msg *v;
	char text[SETTINGS_MSG_LEN];
	va_list ap;

	if (!m)
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	v = realloc(m->v, (m->n + 1) * sizeof(*v));
	if (!v)
		return;
	m->v = v;
	v[m->n].level = level;
	strscpy(v[m->n].text, text, sizeof(v[m->n].text));
	m->n++;
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

void settings_msgs_log(const struct settings_msgs *m)
{
	size_t i;

	for (i = 0; m && i < m->n; i++)
		log_msg(m->v[i].level, "%s", m->v[i].text);
}

void settings_msgs_free(struct settings_msgs *m)
{
	free(m->v);
	m->v = NULL;
	m->n = 0;
}

/*
 * gcc 12's -fanalyzer loses a pointer stored into an array member at a computed index and
 * reports it leaked (settings_load frees every r->value[k]); the same in log.c's keep().
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wanalyzer-malloc-leak"
#endif
static void raw_set(struct raw *r, int k, const char *value, const char *where, struct settings_msgs *m)
{
	char *copy;

	if (k < 0 || k >= KEY__MAX)
		return;
	copy = strdup(value);
	if (!copy) {
		say(m, LOG_ERR, "%s: %s: out of memory", where, keys[k].name);
		return;
	}
	strscpy(r->where[k], where, SOURCE_LEN);
	free(r->value[k]);
	r->value[k] = copy;
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

/*
 * Messages about lines (a config's) or words (the command line's) are said for the first
 * SOURCE_MSG_MAX of a source; the rest are counted and said in one line each for errors and
 * unknown keys, so that a config of garbage cannot flood the console.
 */
#define SOURCE_MSG_MAX 10

struct msg_cap {
	unsigned shown, more_err, more_warn;
};

/* May the source say one more message? If not, it is counted. */
static bool cap_say(struct msg_cap *m, bool error)
{
	if (m->shown < SOURCE_MSG_MAX) {
		m->shown++;
		return true;
	}
	if (error)
		m->more_err++;
	else
		m->more_warn++;
	return false;
}

static void cap_close(const struct msg_cap *m, const char *where, const char *what,
		      struct settings_msgs *msgs)
{
	if (m->more_err)
		say(msgs, LOG_ERR, "%s: %u more %s with errors not shown", where, m->more_err, what);
	if (m->more_warn)
		say(msgs, LOG_WARNING, "%s: %u more %s with unknown keys not shown", where,
		    m->more_warn, what);
}

struct config_ctx {
	struct raw *raw;
	const char *path;
	int errors;
	struct msg_cap cap;
	struct settings_msgs *msgs;
};

static void on_config_item(const struct config_item *it, void *data)
{
	struct config_ctx *c = data;
	char where[SOURCE_LEN];
	int k;

	snprintf(where, sizeof(where), "%s:%u", c->path, it->line);
	if (it->error) {
		if (cap_say(&c->cap, true))
			say(c->msgs, LOG_ERR, "%s: %s; line ignored", where, it->error);
		c->errors++;
		return;
	}
	k = lookup_key(it->key);
	if (k < 0) {
		char shown[72];

		term_safe(it->key, shown, sizeof(shown));
		if (cap_say(&c->cap, false))
			say(c->msgs, LOG_WARNING, "%s: unknown key '%s' ignored", where, shown);
		return;
	}
	raw_set(c->raw, k, it->value, where, c->msgs);
}

struct cmdline_ctx {
	struct raw *raw;
	int errors;
	struct msg_cap cap;
	struct settings_msgs *msgs;
};

static int on_cmdline_word(const char *key, const char *value, void *data)
{
	struct cmdline_ctx *c = data;
	char name[64];
	int k;

	char shown[72];

	if (!cmdline_key(key, "gpuvm", name, sizeof(name)))
		return 0;
	term_safe(key, shown, sizeof(shown));
	k = lookup_key(name);
	if (k < 0) {
		if (cap_say(&c->cap, false))
			say(c->msgs, LOG_WARNING, "cmdline: unknown key '%s' ignored", shown);
		return 0;
	}
	if (!value) {
		if (cap_say(&c->cap, true))
			say(c->msgs, LOG_ERR, "cmdline: %s: no value (expected %s=VALUE); ignored",
			    shown, shown);
		c->errors++;
		return 0;
	}
	raw_set(c->raw, k, value, "cmdline", c->msgs);
	return 0;
}

/* The entries of a list as pci.c's list parsers count them: split at commas and blanks. */
static size_t count_entries(const char *v)
{
	size_t n = 0;

	while (*v) {
		size_t len = strcspn(v, ", \t");

		n += len > 0;
		v += len ? len : 1;
	}
	return n;
}

/* Take one source's value for key k if it is valid; otherwise say why and keep the lower one. */
static int resolve(struct settings *s, int k, const char *value, enum set_from from,
		   const char *where, struct settings_msgs *m)
{
	struct settings tmp = *s;
	char bad[80] = "";
	int r;

	if (!value)
		return 0;
	if (*value == '\0')
		r = -EINVAL;
	else
		r = keys[k].parse(&tmp, value, bad, sizeof(bad));
	if (r == -E2BIG) {
		say(m, LOG_ERR, "%s: %s: %zu entries, more than the %d gpuvm takes; using the %s value",
		    where, keys[k].name, count_entries(value), SETTINGS_LIST_MAX,
		    settings_source(s, (enum setting_key)k));
		return 1;
	}
	if (r < 0) {
		char shown[52], badp[84];

		if (streq(bad, value))
			bad[0] = '\0'; /* the whole value is the bad entry: say it once */
		term_safe(value, shown, sizeof(shown));
		term_safe(bad, badp, sizeof(badp));
		say(m, LOG_ERR, "%s: %s: invalid value '%s'%s%s%s (expected %s); using the %s value",
		    where, keys[k].name, shown, badp[0] ? " at '" : "", badp, badp[0] ? "'" : "",
		    keys[k].expect, settings_source(s, (enum setting_key)k));
		return 1;
	}
	memcpy(s, &tmp, sizeof(tmp));
	settings_set_from(s, (enum setting_key)k, from, where);
	return 0;
}

int settings_load(struct settings *s, const struct settings_input *in, struct settings_msgs *m)
{
	struct raw file = { 0 }, cmd = { 0 };
	struct config_ctx cc = { .raw = &file, .path = in->config_path, .msgs = m };
	struct cmdline_ctx kc = { .raw = &cmd, .msgs = m };
	int errors = 0, k;

	settings_default(s);
	if (in->config) {
		config_parse(in->config, in->config_len, on_config_item, &cc);
		cap_close(&cc.cap, in->config_path, "lines", m);
	}
	if (in->cmdline && cmdline_parse(in->cmdline, on_cmdline_word, &kc) < 0) {
		say(m, LOG_ERR, "cmdline: out of memory; command line ignored");
		errors++;
	}
	cap_close(&kc.cap, "cmdline", "words", m);
	errors += cc.errors + kc.errors;
	for (k = 0; k < KEY__MAX; k++) {
		errors += resolve(s, k, file.value[k], FROM_CONFIG, file.where[k], m);
		errors += resolve(s, k, cmd.value[k], FROM_CMDLINE, cmd.where[k], m);
		free(file.value[k]);
		free(cmd.value[k]);
	}
	return errors;
}

/* A whole key's value fits SETTINGS_VALUE_MAX, and a whole list fits a config line. */
_Static_assert(sizeof("DDDDDDDD:BB:DD.F") <= SETTINGS_ENTRY_TEXT_MAX, "an address and a comma");
_Static_assert(sizeof("VVVV:DDDD") <= SETTINGS_ENTRY_TEXT_MAX, "an id and a comma");
_Static_assert(sizeof(((struct settings *)0)->config) <= SETTINGS_VALUE_MAX, "config=");
_Static_assert(sizeof(((struct settings *)0)->host_driver) <= SETTINGS_VALUE_MAX, "host_driver=");
_Static_assert(CONFIG_LINE_MAX > sizeof("exclude=\"\"") +
			       (size_t)SETTINGS_LIST_MAX * (SETTINGS_ENTRY_TEXT_MAX + 1),
	       "a config line holds a whole list, with \", \" between its entries");

/* Add entry to the list in buf (a comma before all but the first), if it fits whole. */
static bool add_entry(char *buf, size_t size, size_t *off, const char *entry)
{
	size_t n = strlen(entry);

	if (*off + (*off ? 1 : 0) + n >= size)
		return false;
	if (*off)
		buf[(*off)++] = ',';
	memcpy(buf + *off, entry, n + 1);
	*off += n;
	return true;
}

void settings_value(const struct settings *s, enum setting_key k, char *buf, size_t size)
{
	char e[SETTINGS_ENTRY_TEXT_MAX];
	size_t i, off = 0;

	if (size == 0)
		return;
	buf[0] = '\0';
	switch (k) {
	case KEY_MODE:
		snprintf(buf, size, "%s", mode_name(s->mode));
		break;
	case KEY_IDS:
		for (i = 0; i < s->n_ids; i++) {
			if (s->ids[i].any_device)
				snprintf(e, sizeof(e), "%04x:*", s->ids[i].vendor);
			else
				snprintf(e, sizeof(e), "%04x:%04x", s->ids[i].vendor, s->ids[i].device);
			if (!add_entry(buf, size, &off, e))
				break;
		}
		break;
	case KEY_EXCLUDE:
		for (i = 0; i < s->n_exclude; i++) {
			pci_addr_format(&s->exclude[i], e, sizeof(e));
			if (!add_entry(buf, size, &off, e))
				break;
		}
		break;
	case KEY_NVSWITCH:
		snprintf(buf, size, "%s", s->nvswitch_vm ? "vm" : "host");
		break;
	case KEY_HOST_DRIVER:
		snprintf(buf, size, "%s", s->host_driver);
		break;
	case KEY_ON_ERROR:
		snprintf(buf, size, "%s", s->on_error == ON_ERROR_HOLD ? "hold" : "release");
		break;
	case KEY_CONFIG:
		snprintf(buf, size, "%s", s->config);
		break;
	case KEY_WRITE_TIMEOUT_MS:
		snprintf(buf, size, "%u", s->write_timeout_ms);
		break;
	case KEY_CONFIG_TIMEOUT:
		snprintf(buf, size, "%u", s->config_timeout_s);
		break;
	case KEY_GPUS:
		for (i = 0; i < s->n_gpus; i++) {
			if (s->gpus[i].numa >= 0)
				snprintf(e, sizeof(e), "numa:%d", s->gpus[i].numa);
			else
				pci_addr_format(&s->gpus[i].addr, e, sizeof(e));
			if (!add_entry(buf, size, &off, e))
				break;
		}
		break;
	case KEY__MAX:
		break;
	}
}

bool settings_same_value(const char *key, const char *a, const char *b)
{
	struct settings sa, sb;
	char bad[80];
	size_t i, j;

	if (lookup_key(key) != KEY_GPUS)
		return streq(a, b);
	settings_default(&sa);
	settings_default(&sb);
	if (parse_gpus(&sa, a, bad, sizeof(bad)) < 0 || parse_gpus(&sb, b, bad, sizeof(bad)) < 0 ||
	    sa.n_gpus != sb.n_gpus)
		return streq(a, b);
	for (i = 0; i < sa.n_gpus; i++) {
		for (j = 0; j < sb.n_gpus && !gpu_pick_same(&sa.gpus[i], &sb.gpus[j]); j++)
			;
		if (j == sb.n_gpus)
			return false;
	}
	return true;
}

bool settings_gpus_numa(const struct settings *s)
{
	size_t i;

	for (i = 0; i < s->n_gpus; i++)
		if (s->gpus[i].numa >= 0)
			return true;
	return false;
}

bool settings_gpus_pick(const struct settings *s, const struct pci_addr *addr, int numa)
{
	size_t i;

	if (s->n_gpus == 0)
		return true;
	for (i = 0; i < s->n_gpus; i++) {
		if (s->gpus[i].numa >= 0 ? numa >= 0 && s->gpus[i].numa == numa :
					   pci_addr_cmp(&s->gpus[i].addr, addr) == 0)
			return true;
	}
	return false;
}
