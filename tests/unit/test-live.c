// SPDX-License-Identifier: MIT
/*
 * apply --live against the fake kernel: every reason to refuse (an open DRM, framebuffer,
 * nvidia or vfio node, by its number or its link's text; nvidia's unbindLock with clients;
 * enabled VFs), the group left whole, --wait with a holder that goes away (and one that does not),
 * a device that vanishes between the check and the unbind, a hanging unbind, the unbindLock
 * given back when the switch fails, and what the state file says.
 */
#include <errno.h>

#include "execute.h"
#include "fake-kernel.h"
#include "json.h"
#include "log.h"
#include "cmd/cmd.h"
#include "unit-log.h"
#include "unit.h"

#define GPU "0000:01:00.0"
#define AUD "0000:01:00.1"
#define PT "gpuvm.mode=vm-passthrough"
#define CT "gpuvm.mode=container"

static struct outcome out;

static void apply_live(const char *cmdline, unsigned wait_s)
{
	struct options o = { .cmdline = cmdline, .live = true, .wait_s = wait_s };

	log_close();
	log_setup(false, 0);
	memset(&out, 0, sizeof(out));
	cmd_apply.run(&o, &out);
}

static bool state_has(const char *needle)
{
	const char *st = fk_state();
	bool ok = st && strstr(st, needle);

	if (!ok)
		printf("#   state file lacks '%s'\n", needle);
	return ok;
}

/* A GPU on nouveau (card0) and its audio function in group 1; vfio-pci as a module. */
static void host(void)
{
	fk_reset(true);
	fk_add(GPU, 0x10de, 0x2204, 0x030000, 1, "nouveau", NULL);
	fk_add(AUD, 0x10de, 0x1aef, 0x040300, 1, "snd_hda_intel", NULL);
	fk_driver_loaded("nouveau");
	fk_driver_loaded("snd_hda_intel");
	fk_module("vfio-pci", "vfio-pci");
	fk_drm(GPU, "card0", 0);
}

/* The same GPU already on vfio-pci (a VM host), back to container. */
static void vm_host(int vfio_dev)
{
	host();
	fk_vfio(vfio_dev, true);
	fk_driver_loaded("vfio-pci");
	apply_live(PT, 0);
}

static void refused_whole(const char *what, const char *gpu_drv, const char *aud_drv, const char *needle)
{
	int writes = fk_writes();

	CHECK(out.in_use && !out.error, "%s: outcome in use (exit 7)", what);
	CHECK_STR(fk_driver(GPU), gpu_drv, "%s: GPU left on its driver", what);
	CHECK_STR(fk_driver(AUD), aud_drv, "%s: its group's audio function too", what);
	CHECK(unit_logged(needle), "%s: the error names the culprit", what);
	CHECK(state_has("\"result\": \"refused\"") && state_has("\"refused\": 1"),
	      "%s: the state file says refused", what);
	CHECK(fk_state() && json_valid(fk_state(), strlen(fk_state())), "%s: state is JSON", what);
	(void)writes;
}

static void free_switch(void)
{
	host();
	apply_live(PT, 0);
	CHECK(!out.in_use && out.ok == 1 && out.failed == 0, "free: switched");
	CHECK_STR(fk_driver(GPU), "vfio-pci", "free: GPU on vfio-pci");
	CHECK_STR(fk_driver(AUD), "vfio-pci", "free: audio on vfio-pci");
	CHECK(state_has("\"live\": {") && state_has("\"mode_requested\": \"vm-passthrough\"") &&
		      state_has("\"mode\": \"vm-passthrough\"") && state_has("\"holders\": []"),
	      "free: the state file has the live switch");

	/* And back: the mode before is the last state file's. */
	fk_load_driver("nouveau");
	apply_live(CT, 0);
	CHECK(!out.in_use && out.failed == 0, "back to container: switched");
	CHECK_STR(fk_driver(GPU), "nouveau", "back to container: nouveau again");
	CHECK(state_has("\"mode_before\": \"vm-passthrough\"") && state_has("\"mode\": \"container\""),
	      "back to container: before and after");
}

static void drm_holder(void)
{
	const int writes0 = 0;

	host();
	fk_proc(4242, "Xorg", "/dev/dri/card0", 226, 0);
	(void)writes0;
	{
		int before = fk_writes();

		apply_live(PT, 0);
		CHECK_INT(fk_writes() - before, 0, "drm holder: nothing written");
	}
	refused_whole("drm holder", "nouveau", "snd_hda_intel",
		      "in use: /dev/dri/card0 (0000:01:00.0) held by pid 4242 (Xorg)");
	CHECK(state_has("\"pid\": 4242") && state_has("\"comm\": \"Xorg\""),
	      "drm holder: pid and command in the state file");
	CHECK(state_has("\"mode\": null"), "drm holder: no mode claimed (no state before)");

	/* Another node, matched by its number though opened by another path (a container). */
	host();
	fk_proc(77, "python3", "/run/c/rootfs/dev/dri/card0", 226, 0);
	apply_live(PT, 0);
	refused_whole("drm by number", "nouveau", "snd_hda_intel", "held by pid 77 (python3)");

	/* A link that cannot be followed: matched by its text. */
	host();
	fk_proc(78, "glxgears", "/dev/dri/card0", 0, 0);
	apply_live(PT, 0);
	refused_whole("drm by text", "nouveau", "snd_hda_intel", "held by pid 78 (glxgears)");

	/* Its framebuffer (fbdev emulation: graphics/fb0), by its number, then by its text. */
	host();
	fk_fb(GPU, 0);
	fk_proc(80, "fbi", "/dev/fb0", 29, 0);
	apply_live(PT, 0);
	refused_whole("fb holder", "nouveau", "snd_hda_intel",
		      "in use: /dev/fb0 (0000:01:00.0) held by pid 80 (fbi)");
	host();
	fk_fb(GPU, 0);
	fk_proc(81, "plymouthd", "/dev/fb0", 0, 0);
	apply_live(PT, 0);
	refused_whole("fb by text", "nouveau", "snd_hda_intel", "held by pid 81 (plymouthd)");

	/* The same number on another node is another device: no refusal. */
	host();
	fk_proc(79, "other", "/dev/dri/card1", 226, 1);
	apply_live(PT, 0);
	CHECK(!out.in_use && out.ok == 1, "another card's holder: switched");
}

static void mode_kept_on_refusal(void)
{
	host();
	apply_live(CT, 0); /* as the boot left it: container */
	CHECK(state_has("\"mode\": \"container\""), "boot state: container");
	fk_proc(4242, "Xorg", "/dev/dri/card0", 226, 0);
	apply_live(PT, 0);
	CHECK(out.in_use, "refused after a container boot");
	CHECK(state_has("\"mode\": \"container\"") && state_has("\"mode_before\": \"container\"") &&
		      state_has("\"mode_requested\": \"vm-passthrough\""),
	      "a refused switch leaves the mode the host is in");
}

static void vfio_holders(void)
{
	vm_host(1);
	CHECK_STR(fk_driver(GPU), "vfio-pci", "vm host: on vfio-pci");
	fk_proc(900, "qemu-system-x86", "/dev/vfio/1", 243, 1);
	apply_live(CT, 0);
	refused_whole("vfio group", "vfio-pci", "vfio-pci",
		      "in use: /dev/vfio/1 (0000:01:00.0) held by pid 900 (qemu-system-x86)");
	CHECK_STR(fk_override(GPU), "vfio-pci", "vfio group: override kept");

	vm_host(2);
	fk_proc(901, "qemu-kvm", "/dev/vfio/devices/vfio0", 511, 0);
	apply_live(CT, 0);
	refused_whole("vfio cdev", "vfio-pci", "vfio-pci",
		      "in use: /dev/vfio/devices/vfio0 (0000:01:00.0) held by pid 901 (qemu-kvm)");
}

static void nvidia_holders(void)
{
	fk_reset(true);
	fk_add(GPU, 0x10de, 0x2204, 0x030000, 1, "nvidia", NULL);
	fk_driver_loaded("nvidia");
	fk_module("vfio-pci", "vfio-pci");
	fk_nvidia(GPU, 3, false);
	fk_proc(555, "nvidia-persiste", "/dev/nvidia3", 195, 3);
	apply_live(PT, 0);
	CHECK(out.in_use, "nvidia node: refused");
	CHECK(unit_logged("in use: /dev/nvidia3 (0000:01:00.0) held by pid 555 (nvidia-persiste)"),
	      "nvidia node: named");
	CHECK_STR(fk_driver(GPU), "nvidia", "nvidia node: still on nvidia");

	/* The vGPU host driver's unbindLock: clients without a descriptor we can see. */
	fk_proc_exit(555);
	fk_nvidia(GPU, 3, true);
	fk_nvidia_clients(GPU, 1);
	apply_live(PT, 0);
	CHECK(out.in_use, "unbindLock refused: refused");
	CHECK(unit_logged("the nvidia driver has clients (its unbindLock was not granted)"),
	      "unbindLock refused: said");
	CHECK(!fk_unbind_locked(GPU), "unbindLock refused: not held");

	/* Granted, and the switch fails after it: the lock is given back. */

	fk_nvidia_clients(GPU, 0);
	fk_fault("drivers/nvidia/unbind", 0, -EBUSY);
	apply_live(PT, 0);
	CHECK(!out.in_use && out.failed == 1, "unbindLock granted, unbind refused: failed");
	CHECK_STR(fk_driver(GPU), "nvidia", "still on nvidia");
	CHECK(!fk_unbind_locked(GPU), "the lock given back");

	/* Granted: switched. */
	fk_reset(true);
	fk_add(GPU, 0x10de, 0x2204, 0x030000, 1, "nvidia", NULL);
	fk_driver_loaded("nvidia");
	fk_module("vfio-pci", "vfio-pci");
	fk_nvidia(GPU, 3, true);
	apply_live(PT, 0);
	CHECK(!out.in_use && out.ok == 1, "unbindLock granted: switched");
	CHECK_STR(fk_driver(GPU), "vfio-pci", "unbindLock granted: on vfio-pci");
}

static void vfs_enabled(void)
{
	host();
	fk_set_sriov(GPU, 16);
	fk_numvfs(GPU, 4);
	apply_live(PT, 0);
	refused_whole("VFs", "nouveau", "snd_hda_intel", "4 virtual functions enabled");
}

/* A process whose descriptors cannot be read: nobody can say the device is free. */
static void unreadable(void)
{
	host();
	fk_proc(4242, "secret", "/dev/null", 1, 3);
	fk_fault("r:proc/4242/fd", 0, -EACCES);
	apply_live(PT, 0);
	refused_whole("unreadable", "nouveau", "snd_hda_intel",
		      "not known to be free: 0000:01:00.0: cannot read /proc/4242/fd (Permission denied)");
}

/*
 * Descriptors listed but not followed: stat and readlink of /proc/PID/fd/N both refused (a
 * security module denying ptrace access). Not known to be free, the pid and error named.
 * A descriptor closed meanwhile (ENOENT) holds nothing.
 */
static void unfollowable(void)
{
	host();
	fk_proc(4243, "confined", "/dev/dri/card0", 226, 0);
	fk_fault("r:proc/4243/fd/3", 0, -EACCES);
	apply_live(PT, 0);
	refused_whole("unfollowable", "nouveau", "snd_hda_intel",
		      "not known to be free: 0000:01:00.0: cannot follow /proc/4243/fd/3 (Permission denied)");

	host();
	fk_proc(4243, "confined", "/dev/dri/card0", 226, 0);
	fk_fault("r:proc/4243/fd/3", 0, -EIO);
	apply_live(PT, 0);
	refused_whole("unfollowable (EIO)", "nouveau", "snd_hda_intel",
		      "cannot follow /proc/4243/fd/3 (");

	host();
	fk_proc(4243, "closing", "/dev/dri/card0", 226, 0);
	fk_fault("r:proc/4243/fd/3", 0, -ENOENT);
	apply_live(PT, 0);
	CHECK(!out.in_use && out.ok == 1, "a descriptor closed meanwhile: switched");
}

static void exit_after(int scans)
{
	if (scans == 2)
		fk_proc_exit(4242);
}

static void wait_for_holder(void)
{
	host();
	fk_proc(4242, "Xorg", "/dev/dri/card0", 226, 0);
	fk_on_proc_scan(exit_after);
	apply_live(PT, 5);
	CHECK(!out.in_use && out.ok == 1, "wait: the holder went, switched");
	CHECK_STR(fk_driver(GPU), "vfio-pci", "wait: on vfio-pci");
	CHECK(fk_proc_scans() >= 3, "wait: looked again (%d scans)", fk_proc_scans());
	CHECK(state_has("\"wait_s\": 5") && !state_has("\"waited_ms\": 0,"),
	      "wait: the state file says it waited");

	/* It does not go: refused once the wait is over, with the same report. */
	host();
	fk_proc(4242, "Xorg", "/dev/dri/card0", 226, 0);
	apply_live(PT, 1);
	refused_whole("wait over", "nouveau", "snd_hda_intel", "held by pid 4242 (Xorg)");
	CHECK(fk_proc_scans() >= 4, "wait over: looked again until the end (%d)", fk_proc_scans());
}

static void vanish_after(int scans)
{
	if (scans == 1)
		fk_remove(GPU);
}

static void vanished(void)
{
	host();
	fk_on_proc_scan(vanish_after);
	apply_live(PT, 0);
	CHECK(!out.in_use && out.failed == 1 && !out.error, "vanished: failed, not refused");
	CHECK(unit_logged("0000:01:00.0"), "vanished: the device named");
	CHECK(fk_state() && json_valid(fk_state(), strlen(fk_state())), "vanished: state is JSON");
	CHECK(state_has("\"result\": \"failed\""), "vanished: result failed");
}

static void hanging_unbind(void)
{
	host();
	fk_fault("drivers/nouveau/unbind", 0, -ETIMEDOUT);
	apply_live(PT, 0);
	CHECK(!out.in_use && out.failed == 1, "hanging unbind: failed, not refused");
	CHECK(unit_logged("unbind from nouveau: no answer in time"), "hanging unbind: said");
	CHECK_STR(fk_override(GPU), "vfio-pci", "hanging unbind: held by its override");
}

int main(void)
{
	free_switch();
	drm_holder();
	mode_kept_on_refusal();
	vfio_holders();
	nvidia_holders();
	vfs_enabled();
	unreadable();
	unfollowable();
	wait_for_holder();
	vanished();
	hanging_unbind();
	printf("1..%d\n", unit_n);
	return unit_failed ? 1 : 0;
}
