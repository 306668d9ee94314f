/* SPDX-License-Identifier: MIT */
#ifndef GPUVM_HOSTREPORT_H
#define GPUVM_HOSTREPORT_H

#include <stdio.h>

#include "check.h"
#include "live.h"
#include "nextboot.h"
#include "report.h"

/*
 * What a command on a running host adds to report.c's documents (report.h's struct
 * report_more): apply --live's switch and the holders of each device, plan --in-use's look,
 * status's next-boot judgement; and the next boot's words for the metrics file. The boot
 * never has any of it: the boot's report links no call here.
 */
struct host_report {
	struct report_more more; /* give the report &hr.more */
	const struct live_report *live;
	const struct nextboot *nb;
	const struct nb_judgement *v;
	/* status: the next boot's judgement of the host config's gpus= (NULL: not judged) */
	const struct nb_judgement *vg;
};

/* live: apply --live's or plan --in-use's (NULL: none); nb, v: status's judgement (NULL: none). */
void host_report_init(struct host_report *h, const struct live_report *live,
		      const struct nextboot *nb, const struct nb_judgement *v);
/* The metrics file's next-boot words (report_run's next_verdict, next_mode), from nb and v. */
void host_report_run(struct report_run *run, const struct nextboot *nb, const struct nb_judgement *v);
/* "next boot: SAY" (nextboot_say's words, masked): the one line status, check and config set print. */
void report_next_boot_line(FILE *f, const char *say);
/* "next boot (gpus=): SAY": the same for the selection, where it is judged. */
void report_next_boot_gpus_line(FILE *f, const char *say);

/* check's document: the mode checked, its findings, the next boot's verdict in words. */
struct check_report {
	const struct settings *s;
	enum cpu_vendor cpu;
	const char *kver;
	const struct finding *f;
	size_t n, errors, warnings;
	const struct nb_judgement *v;
	const char *say;
	const char *gpus_say; /* the next boot's gpus=, where judged; else NULL */
};
void report_check(FILE *f, const struct check_report *c, bool json);

/* cmdline's: the parameters a mode needs, what the running line lacks and contradicts. */
struct cmdline_report {
	const char *mode; /* NULL: the host config's to decide (the label) */
	enum cpu_vendor cpu;
	const char *params;
	const char *missing;
	const char *const *conflicts;
	size_t n_conflicts;
};
/* JSON to out; else the parameters to out and what is not right to err (a script's $(...)). */
void report_cmdline(FILE *out, FILE *err, const struct cmdline_report *c, bool json);

#endif
