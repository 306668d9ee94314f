/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_NEXTBOOT_H
#define GPUVM_NEXTBOOT_H

#include <stdbool.h>
#include <stddef.h>

/*
 * What the next boot will run: the initramfs image of every installed kernel (the boot
 * loader picks one; each is judged), whether it has gpuvm, the config baked in it against
 * the host's, and the kernel command line the boot loader will pass, where it can be read.
 */
#define NB_IMAGES_MAX 16
#define NB_TEXT 200
#define NB_MODE 24

/* Who builds the initramfs images: what the fix for a stale or gpuvm-less image is. */
enum nb_generator {
	NB_GEN_UNKNOWN,
	NB_GEN_DRACUT,
	NB_GEN_ITOOLS
};

struct nb_image {
	char path[128]; /* "/boot/initrd.img-VER" */
	char kernel[96];
	int gpuvm;		   /* 1, 0, or -1: unknown */
	char mode[NB_MODE];	   /* the mode its boot runs; "" when unknown */
	char mode_source[NB_TEXT]; /* where that mode comes from */
	char config_mode[NB_MODE]; /* the mode of the config baked in it; "" when none */
	bool stale;		   /* that config is not the host's */
	bool from_disk;		   /* its boot reads the host config from config='s disk */
	char why[NB_TEXT];	   /* what is wrong, or what could not be read */
	char line[512];		   /* the gpuvm words of its boot line, quoted */
	char line_mode[NB_MODE];   /* the boot line's gpuvm.mode=, "" when none */
	char line_source[NB_TEXT]; /* the file that sets it, or why the line is unknown */
	bool line_unknown;	   /* the boot line could not be read whole */
	enum nb_generator gen;	   /* who built it, by what it holds */
};

struct nextboot {
	struct nb_image img[NB_IMAGES_MAX];
	size_t n, more;	    /* images judged, and past NB_IMAGES_MAX */
	int gpuvm;	    /* 1: every image runs gpuvm; 0: one does not; -1: unknown */
	char mode[NB_MODE]; /* the mode every image runs; "" when unknown or differing */
	char mode_source[NB_TEXT];
	char cmdline_mode[NB_MODE]; /* a boot line's gpuvm.mode=, "" when none */
	char cmdline_source[NB_TEXT];
	bool cmdline_unknown;
	char why[NB_TEXT];     /* gpuvm != 1, or mode "": why */
	enum nb_generator gen; /* who builds the next images: the host's kernel hooks */
};

/*
 * Judge the next boot, under the root; the host config is conf_path under conf_dirfd
 * (AT_FDCWD or the root). 0, or -ENOMEM; what cannot be read is said in nb, not failed.
 */
int nextboot_judge(struct nextboot *nb, int conf_dirfd, const char *conf_path);

/*
 * The command that rebuilds the image of one kernel (all of them when kernel is NULL) the
 * way the host builds its images: "dracut -f --kver VER", "update-initramfs -u -k VER", or,
 * when the host says neither, both named.
 */
void nextboot_rebuild(const struct nextboot *nb, const char *kernel, char *buf, size_t size);

/* How gpuvm gets into that generator's images (a clause for a message). */
const char *nextboot_joins(const struct nextboot *nb);

#endif
