/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_KCMDLINE_H
#define GPUVM_KCMDLINE_H

/*
 * The kernel command line, as dracut's getcmdline sees it: the initramfs's
 * /etc/cmdline.d/NAME.conf files in name order, then /proc/cmdline, so that the latter wins;
 * or given (--cmdline) as it is. A string the caller frees; NULL when memory ran out.
 */
char *kcmdline_read(const char *given);

#endif
