// SPDX-License-Identifier: MIT
/*
 * gpuvm check: is this host ready for a mode, and if not, the exact fix for each problem,
 * before anyone reboots. Pure: the caller reads sysfs, /proc/iomem and the module index.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "util.h"

struct out {
	struct finding *f;
	size_t n, max;
};

static void add(struct out *o, enum severity sev, const char *fix, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void add(struct out *o, enum severity sev, const char *fix, const char *fmt, ...)
{
	struct finding *f;
	va_list ap;

	if (o->n == o->max)
		return;
	f = &o->f[o->n++];
	f->sev = sev;
	va_start(ap, fmt);
	vsnprintf(f->what, sizeof(f->what), fmt, ap);
	va_end(ap);
	strscpy(f->fix, fix, sizeof(f->fix));
}

const char *severity_name(enum severity s)
{
	static const char *const names[] = {
		[SEV_ERROR] = "error",
		[SEV_WARNING] = "warning",
		[SEV_INFO] = "info",
	};

	return (size_t)s < ARRAY_SIZE(names) && names[s] ? names[s] : "info";
}

/* A selected GPU whose vGPU method is SR-IOV: its VFs go to VMs through VFIO. */
static bool vgpu_needs_vfio(const struct check_input *in)
{
	size_t i;

	for (i = 0; i < in->inv->n; i++)
		if (in->plan->dev[i].selected && in->plan->dev[i].vgpu == VGPU_SRIOV)
			return true;
	return false;
}

static void iommu_findings(const struct check_input *in, struct out *o)
{
	const struct iommu_state *io = &in->inv->iommu;
	const struct iommu_params *p = &io->params;
	bool vm = in->s->mode != MODE_CONTAINER;
	enum severity need = in->s->mode == MODE_VM_PASSTHROUGH ? SEV_ERROR : SEV_WARNING;
	const char *why = "";

	if (in->s->mode == MODE_VM_VGPU && vgpu_needs_vfio(in)) {
		need = SEV_ERROR;
		why = "; vGPU on Ampere and later hands SR-IOV VFs to VMs through VFIO";
	} else if (in->s->mode == MODE_VM_VGPU) {
		why = "; mediated devices (vGPU before Ampere) work without it, VFs and passthrough do not";
	}
	if (vm && !io->active) {
		if (p->intel_iommu == 0 || p->iommu_off || p->amd_iommu_off == 1)
			add(o, need,
			    "remove intel_iommu=off, amd_iommu=off or iommu=off from the kernel command line",
			    "the IOMMU is not active: the kernel command line turns it off%s", why);
		else if (io->cpu == CPU_AMD)
			add(o, need,
			    "enable the IOMMU (AMD-Vi; 'IOMMU' or 'SVM' in the firmware setup); do not add amd_iommu=on: it is not a value the kernel knows",
			    "the IOMMU is not active (no unit in /sys/class/iommu): vfio-pci's probe fails with error -22%s",
			    why);
		else if (io->cpu == CPU_INTEL)
			add(o, need,
			    "add intel_iommu=on to the kernel command line and enable VT-d in the firmware setup",
			    "the IOMMU is not active (no unit in /sys/class/iommu): vfio-pci's probe fails with error -22%s",
			    why);
		else
			add(o, need,
			    "enable the IOMMU in the firmware setup and on the kernel command line",
			    "the IOMMU is not active (no unit in /sys/class/iommu)%s", why);
	}
	if (vm && io->active && p->iommu_pt != 1 && p->passthrough != 1 && io->cpu != CPU_ARM)
		add(o, SEV_INFO, "add iommu=pt to the kernel command line (host DMA performance)",
		    "iommu=pt is not set: the host's own devices are translated too");
	if (vm && io->active && (p->intel_iommu == 0 || p->iommu_off || p->amd_iommu_off == 1))
		add(o, SEV_WARNING, "remove intel_iommu=off, amd_iommu=off or iommu=off",
		    "the kernel command line asks for the IOMMU off although it is active now");
	if (vm && p->vfio_blacklisted)
		add(o, SEV_ERROR, "remove vfio modules from modprobe.blacklist= and module_blacklist=",
		    "the kernel command line blacklists a vfio module");
	if (!vm && p->vfio_ids)
		add(o, SEV_WARNING,
		    "remove vfio-pci.ids= (and vfio_pci.ids=) from the kernel command line",
		    "vfio-pci.ids= hands devices to vfio-pci although the mode is container");
	if (p->amd_iommu_on)
		add(o, SEV_WARNING, "remove amd_iommu=on; AMD-Vi is on by default",
		    "amd_iommu=on is not a value the kernel knows (\"Unknown option\")");
}

static void module_findings(const struct check_input *in, struct out *o)
{
	/*
	 * The vGPU Manager's module: a host may have no file of it, as the GPU Operator's
	 * vGPU Manager DaemonSet builds and loads it from its container (NVIDIA's
	 * gpu-driver-container, vgpu-manager: modprobe nvidia, then nvidia_vgpu_vfio).
	 */
	if (in->s->mode == MODE_VM_VGPU && in->vgpu_mgr == MOD_MISSING)
		add(o, SEV_WARNING,
		    "install NVIDIA's vGPU Manager (the -vgpu-kvm.run) for this kernel, or let the GPU Operator's vGPU Manager DaemonSet load it (sandboxWorkloads.enabled, vgpuManager.enabled)",
		    "the vGPU Manager's module nvidia_vgpu_vfio is neither loaded nor installed for kernel %s",
		    in->kver);
	if (in->s->mode != MODE_VM_PASSTHROUGH)
		return;
	if (in->vfio == MOD_MISSING)
		add(o, SEV_ERROR,
		    "install the kernel's modules package: it ships vfio-pci's module, or modules.builtin where the kernel has it built in (CONFIG_VFIO_PCI=y, as Ubuntu's generic kernels do); or build the kernel with CONFIG_VFIO_PCI",
		    "vfio-pci is not available for kernel %s: neither a module of it nor a modules.builtin that names it",
		    in->kver);
	else if (in->vfio == MOD_BUILTIN)
		add(o, SEV_INFO,
		    "give vfio-pci options on the kernel command line (vfio-pci.disable_vga=1)",
		    "vfio-pci is built into kernel %s: its modprobe.d options are ignored", in->kver);
}

static bool overlaps(const struct mem_range *a, const struct mem_range *b)
{
	return a->start <= b->end && b->start <= a->end;
}

static void device_findings(const struct check_input *in, struct out *o)
{
	const struct plan *p = in->plan;
	size_t i, j, k;

	for (i = 0; i < in->inv->n; i++) {
		const struct pci_dev *d = &in->inv->dev[i];
		const struct plan_dev *pd = &p->dev[i];
		struct mem_range bars[6];
		const char *res;
		size_t nb;

		/* The boot's hold (plan_build_hold): no driver takes the device until an apply. */
		if (streq(d->override, HOLD_OVERRIDE) && !d->driver[0])
			add(o, SEV_ERROR,
			    "gpuvm apply --live releases it to the host driver or binds it as the mode asks; gpuvm status says why the boot held it",
			    "%s is held (driver_override " HOLD_OVERRIDE "): no driver can take it",
			    d->name);
		if (!pd->selected || pd->role != ROLE_GPU)
			continue;
		if (d->boot_vga == 1 && in->s->mode != MODE_CONTAINER)
			add(o, SEV_WARNING,
			    "make the BMC or integrated graphics the primary display in the firmware setup",
			    "%s is the boot VGA device: the firmware console runs on it", d->name);
		if (in->s->mode != MODE_VM_PASSTHROUGH || !in->n_fb || !in->resource)
			continue;
		res = in->resource(i, in->data);
		nb = res ? resource_mem_bars(res, bars, ARRAY_SIZE(bars)) : 0;
		for (j = 0; j < nb; j++)
			for (k = 0; k < in->n_fb; k++)
				if (overlaps(&bars[j], &in->fb[k]))
					add(o, SEV_ERROR,
					    "add video=efifb:off (initcall_blacklist=sysfb_init where simpledrm or sysfb claim it), or make another GPU the boot display",
					    "a firmware framebuffer (%s, %llx-%llx) sits in %s of %s: the VM will fail with \"can't reserve\"",
					    in->fb[k].name, (unsigned long long)in->fb[k].start,
					    (unsigned long long)in->fb[k].end, bars[j].name, d->name);
	}
	for (i = 0; i < p->n_groups; i++) {
		const struct plan_group *g = &p->group[i];

		if (plan_group_shared(g))
			add(o, SEV_WARNING,
			    "give all of the group's GPUs to one VM (one VM that requests every GPU of the group), or move a GPU to a slot with its own IOMMU group (ACS on the switch's ports)",
			    PLAN_SHARED_GROUP_FMT, g->id, g->n_gpus);
		for (k = 0; k < g->n_blocked; k++) {
			const struct pci_dev *b = &in->inv->dev[g->blocked_by[k]];

			if (p->dev[g->blocked_by[k]].role == ROLE_EXCLUDED)
				add(o, SEV_ERROR, "exclude every GPU of the group, or none of them",
				    "%s is excluded but shares IOMMU group %d with a selected GPU",
				    b->name, g->id);
			else
				add(o, SEV_ERROR,
				    "move the GPU to a slot with its own IOMMU group (ACS), or enable ACS in the firmware; gpuvm never takes a foreign device",
				    "IOMMU group %d is not viable: %s (%04x:%04x, %s) shares it",
				    g->id, b->name, b->vendor, b->device,
				    b->driver[0] ? b->driver : "no driver");
		}
	}
	/* A VM mode with nothing selected gives VMs nothing: not ready. */
	if (p->n_selected == 0)
		add(o, in->s->mode == MODE_CONTAINER ? SEV_WARNING : SEV_ERROR,
		    "check ids= and exclude=, or the PCI IDs with lspci -nn",
		    "no device is selected (NVIDIA display or 3D controllers, or ids=)%s",
		    in->s->mode == MODE_CONTAINER ? "" : ": the VM mode has no GPU to give");
}

/* Why a GPU's vGPU support is unknown, into why. */
static const char *unknown_why(const struct gpu_models *ms, const struct gpu_model *m, char *why,
			       size_t size)
{
	if (!ms || !ms->source)
		snprintf(why, size, "no pci.ids to name it");
	else if (m && m->name[0])
		snprintf(why, size, "its name in /%s, '%.60s', has no chip code gpuvm knows",
			 ms->source, m->name);
	else
		snprintf(why, size, "/%s does not name it", ms->source);
	return why;
}

/*
 * The selected GPUs of dev i's ID: into more, " and N more" when others share it. False
 * when one before i does (its finding says them all).
 */
static bool first_of_id(const struct check_input *in, size_t i, char *more, size_t size)
{
	const struct pci_dev *d = &in->inv->dev[i];
	size_t j, n = 0;

	for (j = 0; j < in->inv->n; j++) {
		const struct pci_dev *e = &in->inv->dev[j];

		if (j == i || !in->plan->dev[j].selected || in->plan->dev[j].role != ROLE_GPU ||
		    e->vendor != d->vendor || e->device != d->device)
			continue;
		if (j < i)
			return false;
		n++;
	}
	if (n)
		snprintf(more, size, " and %zu more", n);
	else
		more[0] = '\0';
	return true;
}

/*
 * vm-vgpu: the GPUs no vGPU release supports and those gpuvm cannot tell (once an ID), each
 * GPU of Ampere or later without SR-IOV.
 */
static void vgpu_findings(const struct check_input *in, struct out *o)
{
	const struct gpu_models *ms = in->inv->models;
	size_t i;

	if (in->s->mode != MODE_VM_VGPU)
		return;
	for (i = 0; i < in->inv->n; i++) {
		const struct pci_dev *d = &in->inv->dev[i];
		const struct plan_dev *pd = &in->plan->dev[i];
		const struct gpu_model *m = gpu_model_find(ms, d->vendor, d->device);
		char why[160], more[32];

		/* NVIDIA's vGPU is for NVIDIA's GPUs: one ids= selects of another vendor has none. */
		if (!pd->selected || pd->role != ROLE_GPU || d->vendor != 0x10de)
			continue;
		if ((!m || m->support != VGPU_SUP_YES) && !first_of_id(in, i, more, sizeof(more)))
			continue;
		if (!m || m->support == VGPU_SUP_UNKNOWN)
			add(o, SEV_WARNING,
			    "install a current pci.ids (/usr/share/gpuvm/pci.ids, or the distribution's), or check NVIDIA's list of GPUs its vGPU release supports",
			    "cannot tell whether a vGPU release supports %s%s (%04x:%04x): %s",
			    d->name, more, d->vendor, d->device, unknown_why(ms, m, why, sizeof(why)));
		else if (m->support == VGPU_SUP_NO)
			add(o, SEV_ERROR,
			    "use a data-center or professional GPU that NVIDIA's vGPU release lists, or give this one to a VM whole (mode vm-passthrough)",
			    "no vGPU release supports %s%s (%04x:%04x, %s, %s): %s", d->name, more,
			    d->vendor, d->device, m->name, gpu_arch_name(m->arch), m->why);
		else if (m->method == VGPU_SRIOV && d->sriov_totalvfs <= 0)
			add(o, SEV_ERROR,
			    "enable SR-IOV in the firmware setup (with Above 4G Decoding); vGPU on Ampere and later runs on the GPU's VFs",
			    "SR-IOV expected but the device shows no SR-IOV capability: %s (%04x:%04x, %s, %s) has no sriov_totalvfs",
			    d->name, d->vendor, d->device, m->name, gpu_arch_name(m->arch));
	}
}

/* The release and the kernel the matrix was asked about, in words, into buf. */
static const char *host_words(const struct check_input *in, char *buf, size_t size)
{
	char rel[80];

	if (in->vhost.release)
		snprintf(rel, sizeof(rel), "vGPU %d (%s)", in->vhost.release,
			 in->release_from ? in->release_from : "given");
	else
		snprintf(rel, sizeof(rel), "vGPU release unknown");
	snprintf(buf, size, "%s, kernel %s", rel, in->kver ? in->kver : "unknown");
	return buf;
}

/*
 * vm-vgpu: which framework each supported GPU's vGPUs take on this host (vgpu.c's matrix),
 * once an ID; where it is NVIDIA's vendor-specific VFIO, that the GPU Operator's vGPU stack
 * makes no such devices yet.
 */
static void vgpu_method_findings(const struct check_input *in, struct out *o)
{
	const struct gpu_models *ms = in->inv->models;
	size_t i;

	if (in->s->mode != MODE_VM_VGPU)
		return;
	for (i = 0; i < in->inv->n; i++) {
		const struct pci_dev *d = &in->inv->dev[i];
		const struct plan_dev *pd = &in->plan->dev[i];
		const struct gpu_model *m = gpu_model_find(ms, d->vendor, d->device);
		enum vgpu_framework fw;
		char host[160], more[32];

		if (!pd->selected || pd->role != ROLE_GPU || d->vendor != 0x10de || !m ||
		    m->support != VGPU_SUP_YES || !first_of_id(in, i, more, sizeof(more)))
			continue;
		fw = vgpu_framework(m->arch, &in->vhost);
		host_words(in, host, sizeof(host));
		if (fw == VGPU_FW_VENDOR_VFIO)
			add(o, SEV_WARNING,
			    "create the vGPUs yourself (sriov-manage -e, then a type id into each VF's nvidia/current_vgpu_type) and let KubeVirt 1.9's own PCI plugin advertise them (gpuvm kubevirt --kubevirt-plugin --kubevirt-version 1.9); see doc/vgpu.md",
			    "vGPU method of %s%s (%s, %s): vendor-vfio, %s (%s): the GPU Operator's vGPU stack (vgpu-device-manager, sandbox device plugin) handles mediated devices only and does not yet create these, so no vGPU resource will appear",
			    d->name, more, m->name, gpu_arch_name(m->arch),
			    vgpu_framework_words(fw), host);
		else if (fw == VGPU_FW_UNKNOWN)
			add(o, SEV_INFO,
			    "give the vGPU release (gpuvm check --vgpu-release N), or load the vGPU Manager so that its driver version tells it",
			    "vGPU method of %s%s (%s, %s) cannot be told (%s): vendor-vfio with vGPU 17 or later on kernel 6.8 or later, else mediated devices on its SR-IOV VFs",
			    d->name, more, m->name, gpu_arch_name(m->arch), host);
		else
			add(o, SEV_INFO, "nothing to do", "vGPU method of %s%s (%s, %s): %s, %s (%s)",
			    d->name, more, m->name, gpu_arch_name(m->arch), vgpu_framework_name(fw),
			    vgpu_framework_words(fw), host);
	}
}

/*
 * vm-vgpu under Secure Boot: the GPU Operator's vGPU Manager builds its kernel modules on the
 * node, unsigned, and a kernel that enforces signatures refuses them. Passthrough is not
 * concerned: vfio-pci is the distribution's signed module, gpuvm runs in userspace.
 */
static void secure_boot_findings(const struct check_input *in, struct out *o)
{
	if (in->s->mode != MODE_VM_VGPU || in->secure_boot != 1)
		return;
	add(o, SEV_WARNING,
	    "turn Secure Boot off for vm-vgpu, or install the vGPU Manager on the host with its modules signed by a key the firmware or MOK trusts; vm-passthrough needs neither",
	    "Secure Boot is on (the SecureBoot EFI variable): the GPU Operator's vGPU Manager builds its kernel modules on the node, unsigned, and the kernel refuses to load them");
}

int check_fabric_mode(const char *text)
{
	const char *p = text;
	int mode = -1;

	while (p && *p) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);

		while (len && (*p == ' ' || *p == '\t')) {
			p++;
			len--;
		}
		/* The last line wins, as Fabric Manager's own reader takes them in turn. */
		if (len >= 13 && !strncmp(p, "FABRIC_MODE=", 12) && p[12] >= '0' && p[12] <= '2' &&
		    (len == 13 || p[13] == ' ' || p[13] == '\t' || p[13] == '\r' || p[13] == '#'))
			mode = p[12] - '0';
		p = e ? e + 1 : NULL;
	}
	return mode;
}

/*
 * An NVSwitch board (HGX, DGX): which of NVIDIA's virtualization models the settings give,
 * and what the node still needs for NVLink. Nothing without NVSwitches.
 */
static void nvswitch_findings(const struct check_input *in, struct out *o)
{
	const struct settings *s = in->s;
	char cfg[96] = "";
	size_t i, n = 0;

	for (i = 0; i < in->inv->n; i++)
		n += in->inv->dev[i].vendor == PCI_VENDOR_NVIDIA &&
			pci_class_is_nvswitch(in->inv->dev[i].class);
	if (!n)
		return;
	if (in->fabric_mode >= 0)
		snprintf(cfg, sizeof(cfg), "; /%s says FABRIC_MODE=%d", FABRIC_MANAGER_CFG,
			 in->fabric_mode);
	if (s->mode == MODE_CONTAINER) {
		add(o, SEV_INFO,
		    "run nvidia-fabricmanager on the host (FABRIC_MODE=0), or the GPU Operator's driver container, which starts it",
		    "HGX: %zu NVSwitches, container: bare metal, the GPUs and NVSwitches stay with the host driver; NVLink needs Fabric Manager on the host%s",
		    n, cfg);
	} else if (s->mode == MODE_VM_VGPU) {
		add(o, SEV_INFO,
		    "run nvidia-fabricmanager on the host with FABRIC_MODE=2 in its fabricmanager.cfg",
		    "HGX: %zu NVSwitches, vm-vgpu: the NVSwitches stay on the host (nvswitch= is not used); NVLink between a VM's vGPUs needs Fabric Manager on the host in vGPU multitenancy mode (FABRIC_MODE=2)%s",
		    n, cfg);
	} else if (s->nvswitch_vm) {
		add(o, SEV_INFO,
		    "give one VM every GPU and NVSwitch and run nvidia-fabricmanager (FABRIC_MODE=0) in it; Fabric Manager on the host has no NVSwitch left",
		    "HGX: nvswitch=vm, vm-passthrough: full passthrough, the GPUs and %zu NVSwitches on vfio-pci; NVLink works in the VM that gets the NVSwitches with its GPUs, with Fabric Manager in that guest%s",
		    n, cfg);
	} else if (in->fabric_mode == 1) {
		add(o, SEV_INFO,
		    "activate each VM's partition with Fabric Manager's API before the VM starts, and give the VM exactly that partition's GPUs; gpuvm does neither",
		    "HGX: nvswitch=host, vm-passthrough: shared NVSwitch multitenancy, the %zu NVSwitches stay on the host for Fabric Manager%s",
		    n, cfg);
	} else {
		add(o, SEV_WARNING,
		    "for VMs of one GPU, nothing; for more, either run Fabric Manager on the host with FABRIC_MODE=1 and activate each VM's partition (shared NVSwitch multitenancy), or set nvswitch=vm and give one VM every GPU and NVSwitch (full passthrough, Fabric Manager in the guest)",
		    "HGX: nvswitch=host, vm-passthrough: single-GPU VMs only unless Fabric Manager runs on the host; the %zu NVSwitches stay on the host, and without a partition activated a VM of two or more GPUs fails CUDA init (error 802) or runs without NVLink%s",
		    n, cfg);
	}
}

/*
 * NVIDIA's DRA driver beside gpuvm's pins: with its passthrough support on (its
 * PassthroughSupport feature gate) it moves GPUs between nvidia and vfio-pci as its claims
 * come and go, and would unbind the GPUs gpuvm keeps on vfio. Off, it leaves vfio GPUs alone:
 * its claims get the GPUs on the host driver, gpuvm-dra's the pinned ones.
 */
static void nvidia_dra_findings(const struct check_input *in, struct out *o)
{
	unsigned r = in->nvidia_dra;

	if (!r || in->s->mode != MODE_VM_PASSTHROUGH || !in->plan->n_selected)
		return;
	add(o, SEV_WARNING,
	    "keep its passthrough support off (its PassthroughSupport feature gate, set through the chart's feature gates) so that it leaves vfio GPUs alone, and give VMs the pinned GPUs through gpuvm-dra (driver vfio.gpuvm.dev; doc/dra.md)",
	    "NVIDIA's DRA driver is registered with the kubelet (%s%s%s): with its passthrough support on it rebinds GPUs between nvidia and vfio-pci as its claims come and go, and would undo gpuvm's pins of %zu devices",
	    r & CHECK_NVDRA_GPU ? NVDRA_GPU : "", r == (CHECK_NVDRA_GPU | CHECK_NVDRA_CD) ? ", " : "",
	    r & CHECK_NVDRA_CD ? NVDRA_CD : "", in->plan->n_selected);
}

size_t check_findings(const struct check_input *in, struct finding *f, size_t max)
{
	struct out o = { f, 0, max };

	iommu_findings(in, &o);
	module_findings(in, &o);
	vgpu_findings(in, &o);
	device_findings(in, &o);
	vgpu_method_findings(in, &o);
	secure_boot_findings(in, &o);
	nvswitch_findings(in, &o);
	nvidia_dra_findings(in, &o);
	return o.n;
}
