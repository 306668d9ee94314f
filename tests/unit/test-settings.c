// SPDX-License-Identifier: MIT
/* Host config parser, settings precedence and every bad input's outcome. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "settings.h"
#include "unit.h"

static struct settings s;
static struct settings_msgs msgs; /* what the last load found: data, nothing logged */

static int load(const char *cmdline, const char *config)
{
	struct settings_input in = {
		.cmdline = cmdline,
		.config = config,
		.config_len = config ? strlen(config) : 0,
		.config_path = "/etc/gpuvm/gpuvm.conf",
	};

	settings_msgs_free(&msgs);
	return settings_load(&s, &in, &msgs);
}

/* A message of that level containing needle among the last load's. */
static bool logged(enum log_level level, const char *needle)
{
	size_t i;

	for (i = 0; i < msgs.n; i++)
		if (msgs.v[i].level == level && strstr(msgs.v[i].text, needle))
			return true;
	printf("#   no %s containing '%s'; have:\n", level == LOG_ERR ? "error" : "warning", needle);
	for (i = 0; i < msgs.n; i++)
		printf("#     %d %s\n", (int)msgs.v[i].level, msgs.v[i].text);
	return false;
}

static void precedence(void)
{
	char v[128];

	CHECK_INT(load(NULL, NULL), 0, "no sources: no errors");
	CHECK_STR(mode_name(s.mode), "container", "default mode is container");
	CHECK_STR(settings_source(&s, KEY_MODE), "default", "default source");
	CHECK(s.on_error == ON_ERROR_HOLD && !s.nvswitch_vm && s.n_ids == 0, "defaults");

	load(NULL, "mode=vm-passthrough\n");
	CHECK_STR(mode_name(s.mode), "vm-passthrough", "config sets mode");
	CHECK_STR(settings_source(&s, KEY_MODE), "/etc/gpuvm/gpuvm.conf:1", "source is file:line");

	load("ro gpuvm.mode=vm-vgpu", "mode=vm-passthrough\n");
	CHECK_STR(mode_name(s.mode), "vm-vgpu", "cmdline beats config");
	CHECK_STR(settings_source(&s, KEY_MODE), "cmdline", "source is cmdline");

	load("gpuvm.mode=vm-vgpu rd.gpuvm.mode=container", NULL);
	CHECK_STR(mode_name(s.mode), "container", "rd.gpuvm. works and the last occurrence wins");

	load(NULL, "# mirror of the node label\n\nnvidia.com/gpu.workload.config=vm-passthrough\n");
	CHECK_STR(mode_name(s.mode), "vm-passthrough", "the label line is read as mode");
	CHECK_STR(settings_source(&s, KEY_MODE), "/etc/gpuvm/gpuvm.conf:3", "label line's source");

	load("gpuvm.on-error=release gpuvm.host-driver=nvidia", "on_error=hold\nhost-driver=nouveau\n");
	CHECK(s.on_error == ON_ERROR_RELEASE, "on-error with a dash on the cmdline");
	CHECK_STR(s.host_driver, "nvidia", "host-driver with a dash");

	load("gpuvm.mode=vm-passthrough",
	     "ids=10de:2204, 10de:1aef\nexclude=0000:41:00.0\nnvswitch=vm\n");
	CHECK_STR(mode_name(s.mode), "vm-passthrough", "per key: mode from cmdline");
	CHECK_INT(s.n_ids, 2, "per key: ids from the config");
	CHECK_STR(settings_source(&s, KEY_IDS), "/etc/gpuvm/gpuvm.conf:1", "ids source");
	CHECK_INT(s.n_exclude, 1, "exclude from the config");
	CHECK(s.nvswitch_vm, "nvswitch=vm");
	settings_value(&s, KEY_IDS, v, sizeof(v));
	CHECK_STR(v, "10de:2204,10de:1aef", "ids as text");
	settings_value(&s, KEY_EXCLUDE, v, sizeof(v));
	CHECK_STR(v, "0000:41:00.0", "exclude as text");

	load("gpuvm.write_timeout_ms=250", "mode='vm-vgpu'\n");
	CHECK_INT(s.write_timeout_ms, 250, "write_timeout_ms");
	CHECK_STR(mode_name(s.mode), "vm-vgpu", "single quotes around a value");
	load(NULL, "mode = \"vm-passthrough\"  \r\n");
	CHECK_STR(mode_name(s.mode), "vm-passthrough", "spaces, double quotes and CRLF");
}

static void bad_input(void)
{
	static const struct {
		const char *cmdline, *config, *mode, *needle;
		enum log_level level;
	} t[] = {
		{ "gpuvm.mode=garbage", "mode=vm-vgpu\n", "vm-vgpu",
		  "cmdline: mode: invalid value 'garbage'", LOG_ERR },
		{ "gpuvm.mode=garbage", NULL, "container", "using the default value", LOG_ERR },
		{ "gpuvm.mode=vm-vgpu gpuvm.mode=bad", "mode=vm-passthrough\n", "vm-passthrough",
		  "'bad'", LOG_ERR },
		{ "gpuvm.mode=", NULL, "container", "invalid value ''", LOG_ERR },
		{ "gpuvm.mode", NULL, "container", "gpuvm.mode: no value", LOG_ERR },
		{ "gpuvm.colour=blue", NULL, "container", "unknown key 'gpuvm.colour'", LOG_WARNING },
		{ NULL, "mode=VM-PASSTHROUGH\n", "container",
		  "gpuvm.conf:1: mode: invalid value 'VM-PASSTHROUGH'", LOG_ERR },
		{ NULL, "colour=blue\nmode=vm-vgpu\n", "vm-vgpu",
		  "gpuvm.conf:1: unknown key 'colour'", LOG_WARNING },
		{ NULL, "just words\nmode=vm-vgpu\n", "vm-vgpu", "gpuvm.conf:1: expected KEY=VALUE",
		  LOG_ERR },
		{ NULL, "mo de=vm-vgpu\n", "container", "gpuvm.conf:1: invalid key", LOG_ERR },
		{ NULL, "mode=vm-p\xc3\x28ssthrough\n", "container",
		  "invalid value 'vm-p?(ssthrough'", LOG_ERR },
		{ NULL, "ids=10de:2204,zzzz\n", "container", "at 'zzzz'", LOG_ERR },
		{ NULL, "exclude=../../etc\n", "container", "exclude: invalid value", LOG_ERR },
		{ NULL, "host_driver=../evil\n", "container", "host_driver: invalid value", LOG_ERR },
		{ NULL, "host_driver=vfio-pci\n", "container", "a vfio driver is not a host driver",
		  LOG_ERR },
		{ "gpuvm.host_driver=nvgrace_gpu_vfio_pci", NULL, "container",
		  "cmdline: host_driver: invalid value", LOG_ERR },
		{ NULL, "nvswitch=maybe\n", "container", "nvswitch: invalid value", LOG_ERR },
		{ NULL, "on_error=ignore\n", "container", "on_error: invalid value", LOG_ERR },
		{ NULL, "write_timeout_ms=5\n", "container", "write_timeout_ms: invalid value", LOG_ERR },
		{ NULL, "config=somewhere\n", "container", "config: invalid value", LOG_ERR },
		{ NULL, "config=LABEL=\"x\n", "container",
		  "an opening quote without its closing quote", LOG_ERR },
		{ "gpuvm.config_timeout=-1", NULL, "container",
		  "config_timeout: invalid value '-1' (expected seconds, 0 to 3600)", LOG_ERR },
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		load(t[i].cmdline, t[i].config);
		CHECK_STR(mode_name(s.mode), t[i].mode, "bad input %zu: mode falls back to %s", i,
			  t[i].mode);
		CHECK(logged(t[i].level, t[i].needle), "bad input %zu: says '%s'", i, t[i].needle);
	}

	/* Byte-level abuse of the file. */
	{
		static const char nul[] = "mode=vm-vgpu\0x\nnvswitch=vm\n";
		struct settings_input in = { .config = nul,
					     .config_len = sizeof(nul) - 1,
					     .config_path = "f" };
		char *big = malloc(CONFIG_LINE_MAX + 64);

		settings_msgs_free(&msgs);
		settings_load(&s, &in, &msgs);
		CHECK_STR(mode_name(s.mode), "container", "a line with a NUL byte is dropped");
		CHECK(s.nvswitch_vm, "the next line is still read");
		CHECK(logged(LOG_ERR, "f:1: NUL byte"), "the NUL byte is named with its line");

		memset(big, 'x', CONFIG_LINE_MAX + 10);
		memcpy(big, "ids=", 4);
		strcpy(big + CONFIG_LINE_MAX + 10, "\nmode=vm-vgpu\n");
		load(NULL, big);
		CHECK(logged(LOG_ERR, "gpuvm.conf:1: line too long"), "an overlong line is named");
		CHECK_STR(mode_name(s.mode), "vm-vgpu", "and the next line is read");
		free(big);
	}
	{
		/* Too many list entries. */
		char list[1024] = "ids=";
		int k;

		for (k = 0; k < 70; k++)
			strcat(list, "10de:2204,");
		strcat(list, "\n");
		load(NULL, list);
		CHECK_INT(s.n_ids, 0, "70 ids are refused (64 at most)");
		CHECK(logged(LOG_ERR, "gpuvm.conf:1: ids: 70 entries, more than the 64 gpuvm takes"),
		      "and the error names the line, the key, the count and the maximum");
	}
}

static void files(void)
{
	char dir[] = "/tmp/gpuvm-unit-XXXXXX", path[256];
	char *buf;
	size_t len;
	int fd;

	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp");
		return;
	}
	snprintf(path, sizeof(path), "%s/missing.conf", dir);
	CHECK_INT(config_read(path, &buf, &len), -ENOENT, "missing file: -ENOENT");
	CHECK_INT(config_read(dir, &buf, &len), -EISDIR, "a directory: -EISDIR");

	snprintf(path, sizeof(path), "%s/big.conf", dir);
	fd = open(path, O_CREAT | O_WRONLY, 0644);
	CHECK(fd >= 0 && ftruncate(fd, 1024 * 1024) == 0, "make a 1 MiB file");
	close(fd);
	CHECK_INT(config_read(path, &buf, &len), -EFBIG, "a 1 MiB file: -EFBIG");
	unlink(path);

	snprintf(path, sizeof(path), "%s/ok.conf", dir);
	fd = open(path, O_CREAT | O_WRONLY, 0644);
	CHECK(fd >= 0 && write(fd, "mode=vm-vgpu\n", 13) == 13, "write a config");
	close(fd);
	CHECK_INT(config_read(path, &buf, &len), 0, "read it");
	CHECK_INT(len, 13, "its length");
	CHECK_STR(buf, "mode=vm-vgpu\n", "its text, NUL-terminated");
	free(buf);
	if (geteuid() != 0) {
		chmod(path, 0);
		CHECK_INT(config_read(path, &buf, &len), -EACCES, "unreadable: -EACCES");
	} else {
		unit_n++;
		printf("ok %d - unreadable: -EACCES # SKIP root reads a file of mode 0\n", unit_n);
	}
	unlink(path);
	rmdir(dir);
}

/* Messages are data: a quiet look keeps none and logs none; the one place that logs says each. */
static void messages_as_data(void)
{
	struct settings_input in = { .cmdline = "gpuvm.mode=vm-passthru gpuvm.frob=1",
				     .config = "mode=vm-vgpu\nids=zz\n",
				     .config_len = 19,
				     .config_path = "f" };
	struct settings_msgs m = { 0 };

	log_close();
	log_setup(false, 0);
	CHECK_INT(settings_load(&s, &in, NULL), 2, "a quiet look counts the errors");
	CHECK_INT(log_count(LOG_ERR) + log_count(LOG_WARNING), 0, "and logs nothing");
	CHECK_STR(mode_name(s.mode), "vm-vgpu", "and resolves the same");
	CHECK_INT(settings_load(&s, &in, &m), 2, "a look that keeps them counts the same");
	CHECK_INT(m.n, 3, "two errors and a warning kept");
	CHECK_INT(log_count(LOG_ERR) + log_count(LOG_WARNING), 0, "still nothing logged");
	settings_msgs_log(&m);
	CHECK_INT(log_count(LOG_ERR), 2, "settings_msgs_log: the errors");
	CHECK_INT(log_count(LOG_WARNING), 1, "and the warning");
	CHECK(strstr(log_get(LOG_WARNING, 0), "cmdline: unknown key 'gpuvm.frob'") != NULL,
	      "the warning as the parse said it");
	CHECK(strstr(log_get(LOG_ERR, 0), "cmdline: mode: invalid value 'vm-passthru'") != NULL &&
		      strstr(log_get(LOG_ERR, 1), "f:2: ids: invalid value 'zz'") != NULL,
	      "the errors in key order, with source, line and key");
	settings_msgs_free(&m);
	CHECK(m.n == 0 && !m.v, "freed");
	log_close();
}

/* gpus=: addresses as exclude= takes them and numa:N, from the config and the line; bad input. */
static void gpus(void)
{
	struct pci_addr a = { 0, 0x41, 0, 0 }, b = { 0, 0x42, 0, 0 };
	char v[SETTINGS_VALUE_MAX], big[2048];
	size_t i, off = 0;

	CHECK_INT(load(NULL, NULL), 0, "gpus: no sources");
	CHECK(s.n_gpus == 0 && s.from[KEY_GPUS] == FROM_DEFAULT, "gpus: not set by default");
	CHECK(settings_gpus_pick(&s, &a, -1), "gpus: unset picks every GPU");

	CHECK_INT(load(NULL, "mode=vm-passthrough\ngpus=41:00.0, numa:1\n"), 0, "gpus: config");
	CHECK_INT(s.n_gpus, 2, "gpus: two entries");
	CHECK(s.from[KEY_GPUS] == FROM_CONFIG, "gpus: from the config");
	CHECK_STR(settings_source(&s, KEY_GPUS), "/etc/gpuvm/gpuvm.conf:2", "gpus: its line");
	settings_value(&s, KEY_GPUS, v, sizeof(v));
	CHECK_STR(v, "0000:41:00.0,numa:1", "gpus as text: the domain said, the order kept");
	CHECK(settings_gpus_pick(&s, &a, 0), "gpus: an address picks its GPU");
	CHECK(!settings_gpus_pick(&s, &b, 0), "gpus: another address on another node is not");
	CHECK(settings_gpus_pick(&s, &b, 1), "gpus: numa:1 picks a GPU of node 1");
	CHECK(!settings_gpus_pick(&s, &b, -1), "gpus: an unknown node is no node");
	CHECK(settings_gpus_numa(&s), "gpus: names a node");

	load("gpuvm.gpus=0000:42:00.0", "gpus=41:00.0\n");
	CHECK(s.from[KEY_GPUS] == FROM_CMDLINE, "gpus: the command line wins");
	CHECK(s.n_gpus == 1 && !settings_gpus_numa(&s), "gpus: the line's one address");
	CHECK(settings_gpus_pick(&s, &b, -1) && !settings_gpus_pick(&s, &a, -1), "gpus: the line's");

	static const struct {
		const char *config, *needle;
	} bad[] = {
		{ "gpus=0000:41:00.8\n", "gpus: invalid value '0000:41:00.8'" },
		{ "gpus=41:00.0,zz:00.0\n", "at 'zz:00.0'" },
		{ "gpus=41:00.0,0000:41:00.0\n", "at '0000:41:00.0: named twice'" },
		{ "gpus=numa:1 numa:1\n", "at 'numa:1: named twice'" },
		{ "gpus=numa:64\n", "at 'numa:64: NUMA nodes are 0 to 63'" },
		{ "gpus=numa:\n", "invalid value 'numa:'" },
		{ "gpus=numa:-1\n", "invalid value 'numa:-1'" },
		{ "gpus=numa:1x\n", "invalid value 'numa:1x'" },
		{ "gpus=,\n", "(empty list)" },
		{ "gpus=\n", "gpus: invalid value ''" },
	};
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_INT(load("gpuvm.mode=vm-passthrough", bad[i].config), 1,
			  "gpus: one error: %s", bad[i].config);
		CHECK(logged(LOG_ERR, bad[i].needle), "gpus: said: %s", bad[i].needle);
		CHECK(logged(LOG_ERR, "/etc/gpuvm/gpuvm.conf:1: gpus:"), "gpus: file:line and key");
		CHECK(s.n_gpus == 0 && s.from[KEY_GPUS] == FROM_DEFAULT,
		      "gpus: a bad value falls back to the default: %s", bad[i].config);
	}
	/* a bad line's value keeps the config's */
	CHECK_INT(load("gpuvm.gpus=41:00.0,bogus", "gpus=numa:0\n"), 1, "gpus: a bad line");
	CHECK(s.from[KEY_GPUS] == FROM_CONFIG && s.n_gpus == 1, "gpus: the config's stays");
	CHECK(logged(LOG_ERR, "cmdline: gpus: invalid value"), "gpus: the line named");

	/* too long: 65 entries */
	off = (size_t)snprintf(big, sizeof(big), "gpus=");
	for (i = 0; i <= SETTINGS_LIST_MAX; i++)
		off += (size_t)snprintf(big + off, sizeof(big) - off, "%s0000:%02zx:00.0",
					i ? "," : "", i);
	snprintf(big + off, sizeof(big) - off, "\n");
	CHECK_INT(load(NULL, big), 1, "gpus: 65 entries are an error");
	CHECK(logged(LOG_ERR, "gpus: 65 entries, more than the 64 gpuvm takes"), "gpus: too long");
	CHECK(s.n_gpus == 0, "gpus: too long falls back");
	/* 64 fit, and their text is whole */
	big[off - 13] = '\0';
	CHECK_INT(load(NULL, big), 0, "gpus: 64 entries");
	settings_value(&s, KEY_GPUS, v, sizeof(v));
	CHECK_INT(strlen(v), 64 * 12 + 63, "gpus: 64 addresses as text, whole");

	/* the same selection, spelled otherwise */
	CHECK(settings_same_value("gpus", "41:00.0,numa:1", "numa:1 0000:41:00.0"),
	      "gpus: same entries, another order and spelling");
	CHECK(!settings_same_value("gpus", "41:00.0", "41:00.0,numa:1"), "gpus: one more entry");
	CHECK(!settings_same_value("gpus", "41:00.0", "42:00.0"), "gpus: another address");
	CHECK(!settings_same_value("ids", "10de:*", "10DE:*"), "another key: as written");
	CHECK(settings_same_value("exclude", "41:00.0", "41:00.0"), "another key: the same text");
}

int main(void)
{
	precedence();
	bad_input();
	files();
	messages_as_data();
	gpus();
	settings_msgs_free(&msgs);
	log_close();
	return unit_done();
}
