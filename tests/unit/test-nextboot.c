// SPDX-License-Identifier: MIT
/*
 * The pure readers of the next-boot judgement (src/tools/nextboot.c): a grubenv block's values
 * (escapes, the '#' padding, a name that is a prefix of another) and a BLS line's $NAME and
 * ${NAME} resolved from one or several grubenv files, or refused with the reason.
 */
#include <errno.h>

#include "nextboot.h"
#include "unit.h"

static const char env1[] = "# GRUB Environment Block\n"
			   "saved_entry=abc-5.14.0\n"
			   "kernelopts_old=root=/dev/old\n"
			   "kernelopts=root=/dev/mapper/rhel-root ro gpuvm.mode=vm-vgpu\n"
			   "tuned_params=\n"
			   "esc=a\\\\b\\\nc\n"
			   "###############################################";

static void grubenv(void)
{
	char *v = NULL;

	CHECK_INT(nextboot_grubenv_get(env1, sizeof(env1) - 1, "kernelopts", &v), 0,
		  "kernelopts found");
	CHECK_STR(v, "root=/dev/mapper/rhel-root ro gpuvm.mode=vm-vgpu",
		  "not kernelopts_old, its prefix");
	free(v);
	CHECK_INT(nextboot_grubenv_get(env1, sizeof(env1) - 1, "tuned_params", &v), 0,
		  "an empty value");
	CHECK_STR(v, "", "is empty");
	free(v);
	CHECK_INT(nextboot_grubenv_get(env1, sizeof(env1) - 1, "esc", &v), 0, "an escaped value");
	CHECK_STR(v, "a\\b\nc", "\\\\ and \\newline unescaped");
	free(v);
	v = (char *)1;
	CHECK_INT(nextboot_grubenv_get(env1, sizeof(env1) - 1, "tuned_initrd", &v), -ENOENT,
		  "an absent name");
	CHECK(v == NULL, "no value for it");
	CHECK_INT(nextboot_grubenv_get(env1, sizeof(env1) - 1, "GRUB", &v), -ENOENT,
		  "a comment is not a variable");
	CHECK_INT(nextboot_grubenv_get("=x\n", 3, "", &v), -ENOENT, "an empty name is none");
	/* the length bounds it: a value cut at len */
	CHECK_INT(nextboot_grubenv_get("a=xyz\n", 4, "a", &v), 0, "cut by len");
	CHECK_STR(v, "xy", "what len holds");
	free(v);
	CHECK_INT(nextboot_grubenv_get("a=x\\", 4, "a", &v), 0, "a trailing backslash");
	CHECK_STR(v, "x\\", "kept");
	free(v);
}

static void expand(void)
{
	static const char env2[] = "kernelopts=root=/dev/sda1 quiet\ntuned_initrd=\n";
	static const char env3[] = "kernelopts=root=/dev/sdb1\n";
	struct nb_env e[3] = { { "/boot/grub2/grubenv", env1, sizeof(env1) - 1 },
			       { "/boot/efi/EFI/a/grubenv", env2, sizeof(env2) - 1 },
			       { "/boot/efi/EFI/b/grubenv", env3, sizeof(env3) - 1 } };
	char *out = NULL, via[NB_TEXT], why[NB_TEXT];

	CHECK_INT(nextboot_expand("options $kernelopts ${tuned_params}x", e, 1, &out, via,
				  sizeof(via), why, sizeof(why)),
		  0, "$NAME and ${NAME}");
	CHECK_STR(out, "options root=/dev/mapper/rhel-root ro gpuvm.mode=vm-vgpu x", "resolved");
	CHECK_STR(via, "$kernelopts from /boot/grub2/grubenv", "the variable that brought gpuvm words");
	free(out);
	CHECK_INT(nextboot_expand("initrd /a.img $tuned_initrd", e, 1, &out, via, sizeof(via), why,
				  sizeof(why)),
		  -EINVAL, "a name in no grubenv");
	CHECK(out == NULL, "no line");
	CHECK_STR(why, "$tuned_initrd is not in /boot/grub2/grubenv", "named");
	CHECK_INT(nextboot_expand("$tuned_initrd", e, 0, &out, via, sizeof(via), why, sizeof(why)),
		  -EINVAL, "no grubenv at all");
	CHECK_STR(why, "$tuned_initrd: no grubenv gpuvm reads (/boot/grub2/grubenv)", "said");
	CHECK_INT(nextboot_expand("$tuned_initrd $kernelopts", e + 1, 1, &out, via, sizeof(via),
				  why, sizeof(why)),
		  0, "another file");
	CHECK_STR(out, " root=/dev/sda1 quiet", "its values");
	CHECK_STR(via, "", "no gpuvm words: no via");
	free(out);
	CHECK_INT(nextboot_expand("$kernelopts", e + 1, 2, &out, via, sizeof(via), why, sizeof(why)),
		  -EINVAL, "two files that differ");
	CHECK_STR(why,
		  "$kernelopts differs between /boot/efi/EFI/a/grubenv and /boot/efi/EFI/b/grubenv",
		  "both named");
	CHECK_INT(nextboot_expand("$tuned_initrd", e + 1, 2, &out, via, sizeof(via), why, sizeof(why)),
		  0, "a name only one of two has");
	free(out);
	CHECK_INT(nextboot_expand("$xyz", e, 3, &out, via, sizeof(via), why, sizeof(why)), -EINVAL,
		  "in none of three");
	CHECK_STR(why, "$xyz is in none of /boot/grub2/grubenv and 2 more grubenv", "said");
	CHECK_INT(nextboot_expand("$esc", e, 1, &out, via, sizeof(via), why, sizeof(why)), -EINVAL,
		  "a value with a backslash");
	CHECK_INT(nextboot_expand("a\\b", e, 1, &out, via, sizeof(via), why, sizeof(why)), -EINVAL,
		  "a backslash in the line");
	CHECK_INT(nextboot_expand("'$x'", e, 1, &out, via, sizeof(via), why, sizeof(why)), -EINVAL,
		  "single quotes");
	CHECK_INT(nextboot_expand("a $ b", e, 1, &out, via, sizeof(via), why, sizeof(why)), -EINVAL,
		  "a lone $");
	CHECK_INT(nextboot_expand("$1", e, 1, &out, via, sizeof(via), why, sizeof(why)), -EINVAL,
		  "a positional $1");
	CHECK_INT(nextboot_expand("${kernelopts", e, 1, &out, via, sizeof(via), why, sizeof(why)),
		  -EINVAL, "an open ${");
	CHECK_INT(nextboot_expand("no variables \"q\"", e, 0, &out, via, sizeof(via), why, sizeof(why)),
		  0, "a plain line");
	CHECK_STR(out, "no variables \"q\"", "as it is");
	free(out);
}

int main(void)
{
	grubenv();
	expand();
	return unit_done();
}
