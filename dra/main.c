// SPDX-License-Identifier: MIT
/*
 * gpuvm-dra: the DRA kubelet plugin of the GPUs gpuvm pinned to vfio at boot (driver
 * vfio.gpuvm.dev). It serves the kubelet's registration and DRA sockets, prepares claims
 * as CDI specs and device metadata, and publishes the node's GPUs as ResourceSlices. It
 * never binds or unbinds a driver (rootio's writes are denied at its start): a GPU that is not
 * on vfio is not offered nor prepared.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>

#include "log.h"
#include "rootio.h"
#include "util.h"

#include "alive.h"
#include "cdi.h"
#include "dralog.h"
#include "drasvc.h"
#include "h2srv.h"
#include "promfile.h"
#include "slices.h"

#define REG_SOCK "/var/lib/kubelet/plugins_registry/" DRA_DRIVER "-reg.sock"
#define DRA_SOCK "/var/lib/kubelet/plugins/" DRA_DRIVER "/dra.sock"
#define STATE_DIR "/var/lib/kubelet/plugins/" DRA_DRIVER

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gpuvm-dra [OPTION...]\n"
		"The DRA kubelet plugin (driver " DRA_DRIVER ") of the GPUs gpuvm keeps on vfio.\n\n"
		"  --node NAME              this node (default: $NODE_NAME); the pool's name\n"
		"  --root DIR               read /sys, /proc and /dev under DIR (tests)\n"
		"  --registration-socket P  default " REG_SOCK "\n"
		"  --plugin-socket P        the DRA service, default " DRA_SOCK "\n"
		"  --cdi-dir DIR            the CDI specs, default /var/run/cdi\n"
		"  --state-dir DIR          the device metadata, default " STATE_DIR "\n"
		"  --vfio-backend B         auto (default: legacy where /dev/vfio/GROUP exists,\n"
		"                           else iommufd), legacy or iommufd\n"
		"  --slices auto|never      publish the node's ResourceSlices (default auto)\n"
		"  --slice-interval S       seconds between checks of the slices (default 30)\n"
		"  --slice-devices N        devices a slice, 1 to 128 (default 128)\n"
		"  --metrics-dir DIR        where " PROM_FILE " goes at every look at the GPUs\n"
		"                           (default: the state dir's metrics/; \"\": none)\n"
		"  --events auto|never      a Warning Event on the Node for each GPU of gpuvm's\n"
		"                           left out of the slices (default auto)\n"
		"  --alive                  exit 0 if the plugin on --plugin-socket answers within\n"
		"                           5 s (the liveness probe), 1 if not\n"
		"  --version, --help\n\n"
		"The API server: GPUVM_API_SERVER (default https://$KUBERNETES_SERVICE_HOST:\n"
		"$KUBERNETES_SERVICE_PORT), GPUVM_API_TOKEN_FILE, GPUVM_API_CA_FILE,\n"
		"GPUVM_API_TIMEOUT, as the label mirror reads them.\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "node", required_argument, NULL, 'n' },
		{ "root", required_argument, NULL, 'r' },
		{ "registration-socket", required_argument, NULL, 'R' },
		{ "plugin-socket", required_argument, NULL, 'P' },
		{ "cdi-dir", required_argument, NULL, 'c' },
		{ "state-dir", required_argument, NULL, 's' },
		{ "vfio-backend", required_argument, NULL, 'b' },
		{ "slices", required_argument, NULL, 'S' },
		{ "slice-interval", required_argument, NULL, 'i' },
		{ "slice-devices", required_argument, NULL, 'd' },
		{ "metrics-dir", required_argument, NULL, 'm' },
		{ "events", required_argument, NULL, 'E' },
		{ "alive", no_argument, NULL, 'A' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct dra_cfg cfg = { .node = getenv("NODE_NAME"),
			       .dra_sock = DRA_SOCK,
			       .cdi_dir = "/var/run/cdi",
			       .state_dir = STATE_DIR };
	const char *root = NULL, *reg_sock = REG_SOCK;
	struct slices sl = { .cfg = &cfg, .enabled = true, .per_slice = SLICE_DEVICES_MAX, .events = true };
	struct h2_listener l[2];
	struct sigaction sa = { .sa_handler = on_signal };
	long interval = 30, per;
	bool alive = false;
	bool metrics_set = false;
	char *end, metrics_default[PATH_MAX];
	int o, r;

	while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (o) {
		case 'n':
			cfg.node = optarg;
			break;
		case 'r':
			root = optarg;
			break;
		case 'R':
			reg_sock = optarg;
			break;
		case 'P':
			cfg.dra_sock = optarg;
			break;
		case 'c':
			cfg.cdi_dir = optarg;
			break;
		case 's':
			cfg.state_dir = optarg;
			break;
		case 'E':
			if (!streq(optarg, "auto") && !streq(optarg, "never")) {
				fprintf(stderr, "gpuvm-dra: --events %s: auto or never\n", optarg);
				return 2;
			}
			sl.events = streq(optarg, "auto");
			break;
		case 'm':
			sl.metrics_dir = optarg[0] ? optarg : NULL;
			metrics_set = true;
			break;
		case 'b':
			if (streq(optarg, "auto"))
				cfg.backend = VFIO_AUTO;
			else if (streq(optarg, "legacy"))
				cfg.backend = VFIO_LEGACY;
			else if (streq(optarg, "iommufd"))
				cfg.backend = VFIO_IOMMUFD;
			else {
				fprintf(stderr,
					"gpuvm-dra: --vfio-backend %s: auto, legacy or iommufd\n",
					optarg);
				return 2;
			}
			break;
		case 'S':
			if (!streq(optarg, "auto") && !streq(optarg, "never")) {
				fprintf(stderr, "gpuvm-dra: --slices %s: auto or never\n", optarg);
				return 2;
			}
			sl.enabled = streq(optarg, "auto");
			break;
		case 'i':
			errno = 0;
			interval = strtol(optarg, &end, 10);
			if (errno || *end || interval < 1 || interval > 86400) {
				fprintf(stderr, "gpuvm-dra: --slice-interval %s: seconds, 1 to 86400\n",
					optarg);
				return 2;
			}
			break;
		case 'd':
			errno = 0;
			per = strtol(optarg, &end, 10);
			if (errno || *end || per < 1 || per > SLICE_DEVICES_MAX) {
				fprintf(stderr, "gpuvm-dra: --slice-devices %s: 1 to %d\n", optarg,
					SLICE_DEVICES_MAX);
				return 2;
			}
			sl.per_slice = (size_t)per;
			break;
		case 'A':
			alive = true;
			break;
		case 'V':
			printf("gpuvm-dra %s\n", GPUVM_VERSION);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}
	if (alive) {
		r = alive_probe(cfg.dra_sock, 5000);
		if (r < 0)
			fprintf(stderr, "gpuvm-dra: %s: %s\n", cfg.dra_sock, strerror(-r));
		return r < 0 ? 1 : 0;
	}
	if (!cfg.node || !dns_subdomain(cfg.node)) {
		fprintf(stderr,
			"gpuvm-dra: no node name, or not a DNS subdomain: --node or NODE_NAME\n");
		return 2;
	}
	/*
	 * Nothing of the host is changed through rootio, whatever code of gpuvm's the plugin
	 * reaches: every root_write* fails from here on, before the first read. The plugin's own
	 * files (CDI specs, metadata, metrics: file_put) and sockets are written with their own
	 * calls into their own folders, never through rootio.
	 */
	root_deny_writes();
	if (root_init(root) < 0) {
		fprintf(stderr, "gpuvm-dra: cannot open the root %s\n", root ? root : "/");
		return 1;
	}
	log_setup(false, LOG_WARNING);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	cfg.api_ok = kapi_from_env(&cfg.api, cfg.api_why, sizeof(cfg.api_why)) == 0;
	if (!cfg.api_ok)
		dra_log("%s: no claim can be prepared", cfg.api_why);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* The DRA socket first: the kubelet calls it as soon as the registration is seen. */
	l[1] = (struct h2_listener){ .fd = h2srv_listen(cfg.dra_sock),
				     .name = "dra",
				     .methods = dra_methods,
				     .n_methods = n_dra_methods,
				     .data = &cfg };
	if (l[1].fd < 0) {
		dra_log("cannot listen on %s: %s", cfg.dra_sock, strerror(-l[1].fd));
		return 1;
	}
	l[0] = (struct h2_listener){ .fd = h2srv_listen(reg_sock),
				     .name = "registration",
				     .methods = reg_methods,
				     .n_methods = n_reg_methods,
				     .data = &cfg };
	if (l[0].fd < 0) {
		dra_log("cannot listen on %s: %s", reg_sock, strerror(-l[0].fd));
		unlink(cfg.dra_sock);
		return 1;
	}
	dra_log("node %s: serving %s and %s (CDI specs in %s)", cfg.node, reg_sock, cfg.dra_sock,
		cfg.cdi_dir);
	/* The slices are published at the first tick, a second in: the sockets serve already. */
	sl.interval_s = interval;
	snprintf(metrics_default, sizeof(metrics_default), "%s/metrics", cfg.state_dir);
	if (!metrics_set)
		sl.metrics_dir = metrics_default;
	r = h2srv_run(l, 2, &stop, slices_tick, &sl, sl.enabled ? 1000 : 0);
	/* A plugin that is gone takes its registration socket with it: the kubelet sees it go. */
	unlink(reg_sock);
	unlink(cfg.dra_sock);
	close(l[0].fd);
	close(l[1].fd);
	slices_fini(&sl);
	curl_global_cleanup();
	root_fini();
	dra_log("stopped");
	return r < 0 ? 1 : 0;
}
