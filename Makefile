# gpuvm — see README.md. The shipped artefact is build/gpuvm: static, musl, stripped.
VERSION := 0.1.0
B := build
DEPS := $(B)/deps

MUSL_CC ?= musl-gcc
CC ?= cc
# -Wformat-truncation is on (in -Wall): a message cut to its buffer on purpose says so
# (util.h's fmt_cut); any other cut is a warning.
WARN := -Wall -Wextra -Werror -Wshadow -Wformat=2
DEFS := -DGPUVM_VERSION='"$(VERSION)"' -D_GNU_SOURCE
# No unwind tables in the static binary: C with no exceptions, stripped, run where no debugger
# unwinds it (busybox builds so too); gpuvm's own .eh_frame was some 24 KiB of its 512 KiB.
# The tests' glibc build (CFLAGS_HOST) keeps them, for the sanitizers' stack traces.
CFLAGS_STATIC := -Os -ffunction-sections -fdata-sections -fno-asynchronous-unwind-tables \
	-fno-unwind-tables $(WARN) $(DEFS) -std=gnu11
LDFLAGS_STATIC := -static -Wl,--gc-sections -s

# The sources of the binary, by where they run (doc/HACKING.md, "The tree"): boot/, every unit
# the boot can reach; tools/, what only a command on a running host runs; cmd/ and main.c, the
# commands. A file includes a header by its name alone (SRC_INC), so a unit moves by a rename.
# The tests link the same objects (but main.o) into test programs.
BOOT_SRCS := util.c strpool.c log.c mode.c cmdline.c kcmdline.c config.c settings.c pci.c \
	rootio.c iommu.c metrics.c inventory.c pciproc.c plan.c json.c report.c state.c execute.c \
	kmod.c vgpu.c pciids.c tagspec.c blkdev.c hostdev.c confsource.c pending.c writefile.c \
	prepare.c bootrun.c pinned.c names.c
TOOLS_SRCS := nextboot.c inuse.c live.c iomem.c check.c kvsnippet.c tarw.c modindex.c \
	hostreport.c dumpcollect.c
CMD_SRCS := cmd/apply.c cmd/applyhost.c cmd/plan.c cmd/status.c cmd/check.c cmd/cmdline.c \
	cmd/config.c cmd/kubevirt.c cmd/dump.c main.c
SRCS := $(BOOT_SRCS:%=boot/%) $(TOOLS_SRCS:%=tools/%) $(CMD_SRCS)
SRC_INC := -Isrc -Isrc/boot -Isrc/tools
OBJS := $(SRCS:%.c=$(B)/obj/%.o)
HOST_OBJS := $(SRCS:%.c=$(B)/host/%.o)

UNIT_TESTS := $(patsubst tests/unit/%.c,$(B)/unit/%,$(filter-out tests/unit/unit.c,$(wildcard tests/unit/test-*.c)))

.SECONDARY:
.PHONY: all setup setup-build deps test unit bats e2e image clean demo lint sanitize memcheck fuzz bench bench-boot bench-mirror bench-mirror-quiet install uninstall
all: $(B)/gpuvm

# make setup: every Debian package make test needs; make setup-build: only what the build needs
# (make all, arm64, deb, rpm, packages, sbom), some twenty-five of the seventy-five.
setup:
	@sh scripts/install-packages.sh
setup-build:
	@sh scripts/install-packages.sh --build

deps:
	sh scripts/deps.sh $(DEPS)

# Static libkmod, liblzma and libzstd from Debian's sources (scripts/deps.sh, 2-3 minutes once),
# each from the newest version the archive lists: one it lists but does not serve stops the
# build, unless DEPS_ALLOW_OLDER=1 (make DEPS_ALLOW_OLDER=1 …) lets an older one stand in, which
# VERSIONS and the SBOM then say.
DEPS_LIBS := -L$(DEPS)/lib -lkmod -lblkid -lzstd -llzma
# Re-run when the script changes (a flag, the notices): it rebuilds only what differs.
$(DEPS)/VERSIONS: scripts/deps.sh
	sh scripts/deps.sh $(DEPS)

# make V=1 shows the commands.
Q := $(if $(V),,@)

# compile CC FLAGS: the one compile rule of every build of the sources (the static binary,
# the host's glibc objects of the tests and the sanitizers, the arm64 binary). -MMD writes
# beside each object the headers it included (.d, read at the end of this file), so that a
# header's change rebuilds what includes it, and only that.
define compile
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(1) $(2) -MMD -MP -c -o $@ $<
endef

$(B)/obj/%.o: src/%.c | $(B)/obj $(DEPS)/VERSIONS
	$(call compile,$(MUSL_CC),$(CFLAGS_STATIC) $(SRC_INC) -I$(DEPS)/include -isystem $(DEPS)/uapi)

# The size budget of the static binary: 512 KiB for x86_64, 544 KiB for aarch64 (its fixed
# 4-byte instructions make the same code some 4 % larger). The host-side readers, the metrics
# file and dump had taken the x86_64 binary to 583 KiB; libzstd and liblzma built smaller
# (scripts/deps.sh says how, and what it costs) and no strftime brought it back under.
SIZE_BUDGET := 524288
A64_SIZE_BUDGET := 557056
$(B)/gpuvm: $(OBJS) $(DEPS)/VERSIONS
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(MUSL_CC) $(CFLAGS_STATIC) $(LDFLAGS_STATIC) -o $@ $(OBJS) $(DEPS_LIBS)
	@size=$$(stat -c %s $@); echo "gpuvm: $$size bytes, static"; \
	  [ $$size -le $(SIZE_BUDGET) ] || { echo "gpuvm: over the $(SIZE_BUDGET)-byte budget" >&2; exit 1; }

# Unit tests: the same sources, built for the host with glibc, with debug info.
CFLAGS_HOST := -O1 -g $(WARN) $(DEFS) -std=gnu11 $(SRC_INC) $(EXTRA_CFLAGS)
$(B)/host/%.o: src/%.c | $(B)/host
	$(call compile,$(CC),$(CFLAGS_HOST))

# Unit tests link the fake kernel in place of the two files that reach the real one.
UNIT_OBJS := $(filter-out $(B)/host/main.o $(B)/host/boot/rootio.o $(B)/host/boot/kmod.o,$(HOST_OBJS)) \
	$(B)/host/fake-kernel.o
$(B)/host/fake-kernel.o: tests/unit/fake-kernel.c | $(B)/host
	$(call compile,$(CC),$(CFLAGS_HOST) -Itests/unit)

# test-alloc fails gpuvm's own allocations through the linker (not a make variable that a
# command line such as sanitize's EXTRA_LDFLAGS= would override).
$(B)/unit/test-alloc: WRAP := -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup
$(B)/unit/%: tests/unit/%.c tests/unit/unit.h tests/unit/unit-log.h $(UNIT_OBJS) | $(B)/unit
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) $(CFLAGS_HOST) -Itests/unit -o $@ $< $(UNIT_OBJS) $(EXTRA_LDFLAGS) $(WRAP) -lblkid

# The unit test of src/boot/blkdev.c links the real src/boot/rootio.c (a root of image files, not the
# fake kernel) and the host's libblkid, each of whose calls it fails through the linker
# (fault injection), and syscall() for a kernel without openat2 (tests/unit/test-blkdev.c).
BLKDEV_TEST_OBJS = $(addprefix $(B)/host/boot/,blkdev.o rootio.o writefile.o tagspec.o util.o log.o)
BLKDEV_TEST_WRAP := -Wl,--wrap=blkid_new_probe,--wrap=blkid_free_probe,--wrap=blkid_probe_set_device \
	-Wl,--wrap=blkid_do_safeprobe,--wrap=blkid_probe_lookup_value,--wrap=blkid_probe_get_partitions \
	-Wl,--wrap=blkid_partlist_numof_partitions,--wrap=blkid_partlist_get_partition \
	-Wl,--wrap=blkid_partition_get_uuid,--wrap=blkid_partition_get_name,--wrap=syscall
$(B)/unit/test-blkdev: tests/unit/test-blkdev.c tests/unit/unit.h $(BLKDEV_TEST_OBJS) | $(B)/unit
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) $(CFLAGS_HOST) -Itests/unit -o $@ $< $(BLKDEV_TEST_OBJS) $(EXTRA_LDFLAGS) \
		$(BLKDEV_TEST_WRAP) -lblkid

# The unit test of the door to whole files links the real src/boot/rootio.c too, with syscall()
# wrapped for a kernel without openat2 (tests/unit/test-rootio.c).
ROOTIO_TEST_OBJS = $(addprefix $(B)/host/boot/,rootio.o writefile.o util.o log.o)
$(B)/unit/test-rootio: tests/unit/test-rootio.c tests/unit/unit.h $(ROOTIO_TEST_OBJS) | $(B)/unit
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) $(CFLAGS_HOST) -Itests/unit -o $@ $< $(ROOTIO_TEST_OBJS) $(EXTRA_LDFLAGS) \
		-Wl,--wrap=syscall

# A glibc build of the binary (system libkmod), for the sanitizers.
$(B)/host/gpuvm: $(HOST_OBJS)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS_HOST) -o $@ $(HOST_OBJS) $(EXTRA_LDFLAGS) -lkmod -lblkid

# libFuzzer harnesses (tests/fuzz/README.md): FUZZ_SECONDS per harness, 0 replays the corpus.
FUZZ_SECONDS ?= 10
# make test: each harness replays its corpus, then mutates for this long (0: replay only).
CI_FUZZ_SECONDS ?= 5
fuzz:
	FUZZ_JOBS=2 tests/fuzz/run.sh $(FUZZ_SECONDS)
	$(MAKE) -s dra-fuzz FUZZ_SECONDS=$(FUZZ_SECONDS)

# The cost of gpuvm on the boot path (bench/run.sh): the fixtures, with Debian's driverctl
# in the same interleaved run, and the boot ratio in QEMU (bench/boot.sh, also alone:
# make bench-boot, BOOT_BIN=FILE for an A/B); not part of make test.
bench: setup all $(B)/gpuvm-dra
	sh bench/run.sh
	sh bench/dra.sh
	sh bench/mirror.sh hour

# The label mirror at fleet scale alone (bench/mirror.sh hour: 100 mirrors, a time-scaled hour,
# an API restart), and its CPU at rest over a real window of 15 minutes (not in make bench).
bench-mirror: all
	sh bench/mirror.sh hour

bench-mirror-quiet: all
	sh bench/mirror.sh quiet

bench-boot: setup all
	sh bench/boot.sh

# valgrind memcheck on the unit tests: no invalid access, no definite or indirect leak.
memcheck: $(UNIT_TESTS) $(DRA_UNIT_TESTS)
	$(Q)for t in $(UNIT_TESTS) $(DRA_UNIT_TESTS); do \
		valgrind -q --error-exitcode=9 --leak-check=full --suppressions=tests/unit/valgrind.supp \
			--errors-for-leak-kinds=definite,indirect $$t >/dev/null || exit 1; \
		echo "  MEMCHECK $$t: clean"; done

# The bats suites, and those of them that test the binary's behaviour: all but the suites of
# the tree's other parts (bench's size map, the docs, the end-to-end harness's reading of the
# console, the fixture library, make install's layout, the label mirror's shell and its
# fleet patch, the packages, the provisioning recipes, the reproducible build, the API
# stand-in's watches and DRA resources, the DRA kubelet plugin gpuvm-dra, a glibc program of
# its own), each of which runs the binary only through commands
# the binary's own suites cover, or not at all. Those run once, on the shipped binary; the
# binary's suites run again under ASan+UBSan and on aarch64.
# The suites that take longest come first (prove --timer, scratch on tmpfs: mirror 104 s,
# mirror-guard 85, fixture 28, dra 25-35, plan 24, standin 23, kubeapi 14, check 13 of some
# 450 s), so that prove -j2 does not end on one long suite and an idle CPU.
SLOW_BATS := $(wildcard tests/bats/mirror.bats tests/bats/mirror-guard.bats tests/bats/fixture.bats \
	tests/bats/dra.bats tests/bats/plan.bats tests/bats/standin.bats tests/bats/kubeapi.bats \
	tests/bats/check.bats tests/bats/config.bats)
BATS := $(SLOW_BATS) $(filter-out $(SLOW_BATS),$(sort $(wildcard tests/bats/*.bats)))
TREE_SUITES := bench deploy docs dra dra-deploy e2elib fixture image install kubevirt-patch mirror mirror-guard nfd packages provisioning release repo rollout standin tree
BIN_BATS := $(filter-out $(TREE_SUITES:%=tests/bats/%.bats),$(BATS))

# ASan + UBSan over the same sources: every unit test and the binary's bats suites.
SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
# gpuvm-dra too: its unit tests, and dra.bats on its sanitized build (a report fails a test).
sanitize:
	$(MAKE) B=$(B)/san EXTRA_CFLAGS="$(SAN)" EXTRA_LDFLAGS="$(SAN)" \
		$(B)/san/host/gpuvm $(UNIT_TESTS:$(B)/%=$(B)/san/%) $(B)/san/gpuvm-dra \
		$(DRA_UNIT_TESTS:$(B)/%=$(B)/san/%)
	$(PROVE) $(UNIT_TESTS:$(B)/%=$(B)/san/%) $(DRA_UNIT_TESTS:$(B)/%=$(B)/san/%)
	GPUVM=$(CURDIR)/$(B)/san/host/gpuvm $(PROVE) $(BIN_BATS)
	GPUVM_DRA=$(CURDIR)/$(B)/san/gpuvm-dra $(PROVE) tests/bats/dra.bats

$(B)/obj $(B)/host $(B)/unit:
	mkdir -p $@

# Every test speaks TAP; prove runs them all and ends on one summary that CI reads.
# Two suites at a time (TEST_JOBS): many bats tests wait (a lock's 5 s, a write's timeout, a
# hang), and the waits of one leave the CPU to the other.
TEST_JOBS ?= 2
PROVE := prove -j$(TEST_JOBS) -e tests/tap-run
unit: $(UNIT_TESTS)
	$(PROVE) $(UNIT_TESTS)

bats: $(B)/gpuvm $(B)/gpuvm-dra
	$(PROVE) $(BATS)

# Static analysis, gating CI: zero findings, or a justified suppression at the line.
ANALYZE_FLAGS := $(SRC_INC) -std=gnu11 -D_GNU_SOURCE -DGPUVM_VERSION='"$(VERSION)"' -I$(DEPS)/include \
	-isystem $(DEPS)/uapi
C_FILES = $(shell git ls-files '*.c' '*.h' 2>/dev/null)
SHELL_FILES = init tests/tap-run tests/fixture/mkfixture \
	$(shell git ls-files '*.sh' '*.bash' '*.bats' 'mirror/gpuvm-label-mirror' 'mirror/gpuvm-kubevirt-patch' 'initramfs-tools/*' 'packaging/deb/post*' 2>/dev/null)
# The per-file analyses run LINT_JOBS at a time (make -j: one gcc or clang-tidy a file, each
# failing on its own file's findings); the whole-tree checks after them.
LINT_JOBS ?= 2
ANALYZE_T := $(SRCS:%=analyze/%)
TIDY_T := $(SRCS:%=tidy/%)
.PHONY: lint lint-files $(ANALYZE_T) $(TIDY_T)
$(ANALYZE_T): analyze/%: $(DEPS)/VERSIONS
	$(Q)gcc -fanalyzer -Werror $(WARN) $(ANALYZE_FLAGS) -c -o /dev/null src/$*
$(TIDY_T): tidy/%: $(DEPS)/VERSIONS
	$(Q)mkdir -p $(B)/clang-tidy/$(dir $*)
	$(Q)clang-tidy --quiet src/$* -- $(ANALYZE_FLAGS) >$(B)/clang-tidy/$*.log 2>&1 || \
		{ grep -E 'warning:|error:' $(B)/clang-tidy/$*.log; exit 1; }
lint-files: $(ANALYZE_T) $(TIDY_T)
lint: $(DEPS)/VERSIONS
	@echo "  ANALYZE gcc -fanalyzer, CLANG-TIDY (.clang-tidy): $(words $(SRCS)) files, $(LINT_JOBS) at a time"
	$(Q)$(MAKE) -s --no-print-directory -j$(LINT_JOBS) lint-files
	@echo "  CPPCHECK"
	$(Q)cppcheck -j$(LINT_JOBS) --enable=warning,portability --std=c11 --quiet --error-exitcode=1 \
		--inline-suppr --suppress=missingIncludeSystem -D_GNU_SOURCE -DGPUVM_VERSION='"x"' $(SRC_INC) src/
	@echo "  ANALYZE, CLANG-TIDY, CPPCHECK dra/ (dra/dra.mk)"
	$(Q)$(MAKE) -s --no-print-directory lint-dra
	@echo "  SHELLCHECK $(words $(SHELL_FILES)) files"
	$(Q)shellcheck -x -P SCRIPTDIR $(SHELL_FILES)
	@echo "  STYLE (.editorconfig)"
	$(Q)sh scripts/style.sh
	@echo "  LAYERS (scripts/layers.sh: no include reaches up)"
	$(Q)sh scripts/layers.sh
	@echo "  DOOR (scripts/door.sh: every file beneath the root opened by rootio.c)"
	$(Q)sh scripts/door.sh
	@echo "  SUBJECTS (scripts/subjects.sh: area: what changed, 72 at most)"
	$(Q)sh scripts/subjects.sh
	@echo "  CLANG-FORMAT (.clang-format) $(words $(C_FILES)) files"
	$(Q)clang-format --dry-run --Werror $(C_FILES)


# The main job: Debian's kernel boots the image in QEMU with an Intel IOMMU and a stand-in
# GPU whose own driver is in the image too; the console shows gpuvm binding it to vfio-pci.
demo: setup all
	tests/e2e/demo.sh

# The standalone busybox initramfs: `make image KVER=… [MODULES="…"]` (KVER: a kernel under
# /lib/modules, or the one scripts/fetch-kernel.sh unpacks into build/kernel with KDIR=build/kernel).
KDIR ?= /
image: all
	sh scripts/mkimage.sh --kernel-dir $(KDIR) $(if $(KVER),--kver $(KVER)) \
		$(if $(MODULES),--modules "$(MODULES)") --out $(B)/initrd.img

# End-to-end: Debian's kernel booted in QEMU (TCG) with the image and dracut.
e2e: all
	tests/e2e/run.sh

# Install: make install [DESTDIR=…] [PREFIX=/usr] [PCI_IDS=FILE]. The example config never
# replaces one. PCI_IDS: a pci.ids (the sandbox device plugin's, gpuvm(8) kubevirt) whose
# header and NVIDIA block become /usr/share/gpuvm/pci.ids (scripts/pciids-nvidia.sh; a file
# it or scripts/pciids-ship.sh made goes in as it is); without it none is installed. The
# packages and the mirror's image give build/pciids/pci.ids (make pciids, below).
PREFIX ?= /usr
SBINDIR := $(PREFIX)/sbin
DRACUTDIR := $(PREFIX)/lib/dracut/modules.d/90gpuvm
# initramfs-tools looks in /usr/share/initramfs-tools only, whatever the PREFIX.
ITOOLSDIR := /usr/share/initramfs-tools
# One boot script, installed into each stage it acts in (initramfs-tools/scripts/gpuvm).
ITOOLS_STAGES := init-top init-premount local-block init-bottom
MANDIR := $(PREFIX)/share/man/man8
SHAREDIR := $(PREFIX)/share/gpuvm
UNITDIR := $(PREFIX)/lib/systemd/system
TMPFILESDIR := $(PREFIX)/lib/tmpfiles.d
CMDLINE_SETS := $(notdir $(wildcard kernel-cmdline/*-*))

install: all
	install -D -m 0755 $(B)/gpuvm $(DESTDIR)$(SBINDIR)/gpuvm
	install -D -m 0755 dracut/90gpuvm/module-setup.sh $(DESTDIR)$(DRACUTDIR)/module-setup.sh
	install -D -m 0755 dracut/90gpuvm/gpuvm-pre-udev.sh $(DESTDIR)$(DRACUTDIR)/gpuvm-pre-udev.sh
	install -D -m 0755 dracut/90gpuvm/gpuvm-pre-pivot.sh $(DESTDIR)$(DRACUTDIR)/gpuvm-pre-pivot.sh
	install -D -m 0755 dracut/90gpuvm/gpuvm-resume.sh $(DESTDIR)$(DRACUTDIR)/gpuvm-resume.sh
	install -D -m 0755 initramfs-tools/hooks/gpuvm $(DESTDIR)$(ITOOLSDIR)/hooks/gpuvm
	for s in $(ITOOLS_STAGES); do install -D -m 0755 initramfs-tools/scripts/gpuvm \
		$(DESTDIR)$(ITOOLSDIR)/scripts/$$s/gpuvm || exit 1; done
	install -D -m 0644 doc/gpuvm.8 $(DESTDIR)$(MANDIR)/gpuvm.8
	install -D -m 0644 doc/gpuvm.conf.5 $(DESTDIR)$(MANDIR)/../man5/gpuvm.conf.5
	install -D -m 0644 systemd/gpuvm-nfd.service $(DESTDIR)$(UNITDIR)/gpuvm-nfd.service
	install -D -m 0644 systemd/gpuvm-nfd.timer $(DESTDIR)$(UNITDIR)/gpuvm-nfd.timer
	install -D -m 0644 systemd/gpuvm-nfd.path $(DESTDIR)$(UNITDIR)/gpuvm-nfd.path
	install -D -m 0644 systemd/gpuvm.tmpfiles $(DESTDIR)$(TMPFILESDIR)/gpuvm.conf
	[ -z "$(PCI_IDS)" ] || { sh scripts/pciids-nvidia.sh "$(PCI_IDS)" >$(B)/pci.ids && \
		install -D -m 0644 $(B)/pci.ids $(DESTDIR)$(SHAREDIR)/pci.ids; }
	install -D -m 0755 mirror/gpuvm-label-mirror $(DESTDIR)$(SHAREDIR)/mirror/gpuvm-label-mirror
	install -D -m 0755 mirror/gpuvm-kubevirt-patch $(DESTDIR)$(SHAREDIR)/mirror/gpuvm-kubevirt-patch
	for f in $$(find mirror/deploy -name '*.yaml' | LC_ALL=C sort); do \
		install -D -m 0644 $$f $(DESTDIR)$(SHAREDIR)/$$f || exit 1; done
	install -D -m 0644 mirror/README.md $(DESTDIR)$(SHAREDIR)/mirror/README.md
	for f in $$(find dra/deploy -name '*.yaml' | LC_ALL=C sort); do \
		install -D -m 0644 $$f $(DESTDIR)$(SHAREDIR)/$$f || exit 1; done
	install -D -m 0644 doc/gpuvm.conf.example $(DESTDIR)$(SHAREDIR)/gpuvm.conf.example
	install -D -m 0644 kernel-cmdline/README.md $(DESTDIR)$(SHAREDIR)/kernel-cmdline/README.md
	for d in $(CMDLINE_SETS); do \
		for f in kernel-cmdline/$$d/*; do \
			install -D -m $$([ -x $$f ] && echo 0755 || echo 0644) $$f \
				$(DESTDIR)$(SHAREDIR)/kernel-cmdline/$$d/$$(basename $$f) || exit 1; \
		done; \
	done
	[ -e $(DESTDIR)/etc/gpuvm/gpuvm.conf ] || \
		install -D -m 0644 doc/gpuvm.conf.example $(DESTDIR)/etc/gpuvm/gpuvm.conf

# Leaves /etc/gpuvm/gpuvm.conf: it is the operator's.
uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/gpuvm $(DESTDIR)$(MANDIR)/gpuvm.8 $(DESTDIR)$(UNITDIR)/gpuvm-nfd.service \
		$(DESTDIR)$(UNITDIR)/gpuvm-nfd.timer $(DESTDIR)$(UNITDIR)/gpuvm-nfd.path \
		$(DESTDIR)$(TMPFILESDIR)/gpuvm.conf
	rm -f $(DESTDIR)$(MANDIR)/../man5/gpuvm.conf.5
	rm -f $(DESTDIR)$(ITOOLSDIR)/hooks/gpuvm $(ITOOLS_STAGES:%=$(DESTDIR)$(ITOOLSDIR)/scripts/%/gpuvm)
	rm -rf $(DESTDIR)$(DRACUTDIR) $(DESTDIR)$(SHAREDIR)


# --- arm64 ----------------------------------------------------------------------------------
# `make arm64` (or `make ARCH=arm64`): build/arm64/gpuvm, static for aarch64, from the same
# sources and libraries: musl from Debian's musl-dev:arm64 and a static busybox:arm64 for the
# boot images (scripts/sysroot.sh, private apt, nothing installed), libkmod, libblkid, liblzma
# and libzstd cross-built by scripts/deps.sh --arch arm64 into build/arm64/deps.
# `make test-arm64` runs the bats suites on it under qemu-user (qemu-aarch64-static).
A64 := $(B)/arm64
A64_CC := $(A64)/bin/musl-gcc
A64_OBJS := $(SRCS:%.c=$(A64)/obj/%.o)
A64_LIBS = $(subst -L$(DEPS)/lib,-L$(A64)/deps/lib,$(DEPS_LIBS))
# aarch64 segments align to 64 KiB pages (kernels with 64 KiB pages, as on Grace, must load it):
# the RELRO boundary would pad the file by up to 64 KiB. A static musl binary never applies
# PT_GNU_RELRO (only musl's dynamic linker does), so it costs nothing to drop it.
A64_LDFLAGS := -Wl,-z,norelro
.PHONY: arm64 test-arm64 clean-arm64
ifeq ($(ARCH),arm64)
.DEFAULT_GOAL := arm64
endif
arm64: $(A64)/gpuvm

$(A64)/deps/VERSIONS: scripts/deps.sh
	sh scripts/deps.sh --arch arm64 $(A64)/deps

$(A64)/obj/%.o: src/%.c | $(A64)/deps/VERSIONS
	$(call compile,$(A64_CC),$(CFLAGS_STATIC) $(SRC_INC) -I$(A64)/deps/include -isystem $(A64)/deps/uapi)

$(A64)/gpuvm: $(A64_OBJS) $(A64)/deps/VERSIONS
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(A64_CC) $(CFLAGS_STATIC) $(LDFLAGS_STATIC) $(A64_LDFLAGS) -o $@ $(A64_OBJS) $(A64_LIBS)
	@size=$$(stat -c %s $@); echo "gpuvm (arm64): $$size bytes, static"; \
	  file $@ | grep -q 'ARM aarch64.*statically linked' || { file $@ >&2; exit 1; }; \
	  [ $$size -le $(A64_SIZE_BUDGET) ] || { echo "gpuvm (arm64): over the $(A64_SIZE_BUDGET)-byte budget" >&2; exit 1; }

# The unit test of src/boot/kmod.c links it, not the fake kernel, with the host's libkmod: variant
# drivers looked up in a real modules.alias (tests/unit/test-kmod.c).
$(B)/unit/test-kmod: tests/unit/test-kmod.c tests/unit/unit.h $(B)/host/boot/kmod.o $(B)/host/boot/util.o $(B)/host/boot/log.o | $(B)/unit
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) $(CFLAGS_HOST) -Itests/unit -o $@ $< $(B)/host/boot/kmod.o $(B)/host/boot/util.o \
		$(B)/host/boot/log.o $(EXTRA_LDFLAGS) -lkmod

# Every libkmod call of src/boot/kmod.c failing in turn (--wrap; the module insert is never real).
KMOD_WRAP := -Wl,--wrap=kmod_new,--wrap=kmod_load_resources,--wrap=kmod_module_new_from_lookup \
	-Wl,--wrap=kmod_module_get_initstate,--wrap=kmod_module_get_path \
	-Wl,--wrap=kmod_module_probe_insert_module,--wrap=kmod_set_log_fn
$(B)/unit/test-kmod-faults: tests/unit/test-kmod-faults.c tests/unit/unit.h $(B)/host/boot/kmod.o $(B)/host/boot/util.o $(B)/host/boot/log.o | $(B)/unit
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) $(CFLAGS_HOST) -Itests/unit -o $@ $< $(B)/host/boot/kmod.o $(B)/host/boot/util.o \
		$(B)/host/boot/log.o $(EXTRA_LDFLAGS) $(KMOD_WRAP) -lkmod

# The binary's bats suites on the aarch64 binary, each run through qemu-user.
test-arm64: $(A64)/gpuvm
	GPUVM=$(CURDIR)/tests/arm64/gpuvm-qemu.sh $(PROVE) $(BIN_BATS)

clean-arm64:
	rm -rf $(A64)/obj $(A64)/gpuvm

# --- the pci.ids the packages ship (scripts/pciids-ship.sh) ---------------------------------
# `make pciids`: build/pciids/pci.ids, NVIDIA's block of Debian trixie's pci.ids with the IDs
# whose name the sandbox device plugin's pci.ids (2025.07.11) may give otherwise, against
# sid's: the pinned packages are downloaded once (apt-get download, a private apt state; kept
# in build/pciids/debs), the file is made again from them when a script changes.
PCIIDS := $(B)/pciids/pci.ids
.PHONY: pciids
pciids: $(PCIIDS)
$(PCIIDS): scripts/pciids-ship.sh scripts/pciids-nvidia.sh
	sh scripts/pciids-ship.sh $(B)/pciids

# --- packages (packaging/README.md) ------------------------------------------------------------
# `make deb` / `make rpm` [ARCH=arm64]: build/deb/gpuvm_$(VERSION)_amd64.deb (arm64) and
# build/rpm/gpuvm-$(VERSION)-1.x86_64.rpm (aarch64), from a staged `make install`.
PKG_ARCH := $(if $(filter arm64,$(ARCH)),arm64,amd64)
.PHONY: deb rpm packages
deb rpm: all $(if $(filter arm64,$(PKG_ARCH)),$(A64)/gpuvm) $(PCIIDS)
	sh packaging/$@.sh $(VERSION) $(PKG_ARCH)
# The bill of materials of the static binary and the pci.ids beside it (SPDX 2.3 JSON; the
# packages carry it too).
.PHONY: sbom
sbom: all $(if $(filter arm64,$(PKG_ARCH)),$(A64)/gpuvm) $(PCIIDS)
	sh packaging/sbom.sh $(VERSION) $(PKG_ARCH) >$(B)/gpuvm$(if $(filter arm64,$(PKG_ARCH)),-arm64).spdx.json
	@echo "sbom: $(B)/gpuvm$(if $(filter arm64,$(PKG_ARCH)),-arm64).spdx.json"
packages: all arm64
	$(MAKE) deb rpm
	$(MAKE) deb rpm ARCH=arm64
# The apt and dnf repositories of the packages built (the four, or amd64's two alone), signed,
# in build/repo (packaging/README.md, "The repositories"): make repo REPO_URL=https://…
# REPO_GPG_KEY=FINGERPRINT (or
# REPO_GPG_KEY_FILE=FILE; REPO_UNSIGNED=1 with a file:/// URL for a local test).
.PHONY: repo
repo:
	sh packaging/repo.sh $(VERSION)

# --- the label mirror's image (mirror/README.md, "The image") --------------------------------
# `make mirror-image`: build/mirror-image/gpuvm-mirror-$(VERSION).tar, the OCI archive of the
# mirror's image for amd64 and arm64 (and build/mirror-image/oci, the layout it packs), from
# Debian's archive with umoci, no container daemon (packaging/mirror-image.sh). The Debian
# layers are kept (root-ARCH.tar; their .debs and apt's lists in apt-ARCH/) and follow Debian's
# updates: versions-ARCH, the layer's packages and versions as the archive has them, is
# resolved again at each make (apt-get update) and rewritten only when a version differs, and
# the layer is made again when it is rewritten or the script changes; the image is put
# together again when a layer, gpuvm or the mirror changes.
MIRROR_IMG := $(B)/mirror-image
# MIRROR_IMAGE_RESOLVE= (empty) keeps versions-ARCH as they are: no apt-get update, the layers
# made again only when the script changes. (The prerequisite is phony: .SECONDARY makes every
# file target secondary, and a missing secondary file forces nothing.)
MIRROR_IMAGE_RESOLVE ?= mirror-image-resolve
.PHONY: mirror-image mirror-image-resolve
mirror-image: $(MIRROR_IMG)/gpuvm-mirror-$(VERSION).tar
$(MIRROR_IMG)/versions-%: $(MIRROR_IMAGE_RESOLVE)
	MIRROR_IMAGE_DIR=$(MIRROR_IMG) sh packaging/mirror-image.sh versions $*
$(MIRROR_IMG)/root-%.tar: $(MIRROR_IMG)/versions-% packaging/mirror-image.sh scripts/apt-private.sh
	MIRROR_IMAGE_DIR=$(MIRROR_IMG) sh packaging/mirror-image.sh root $*
$(MIRROR_IMG)/gpuvm-mirror-$(VERSION).tar: $(MIRROR_IMG)/root-amd64.tar $(MIRROR_IMG)/root-arm64.tar \
		$(B)/gpuvm $(A64)/gpuvm $(B)/gpuvm-dra $(A64)/gpuvm-dra $(DEPS)/VERSIONS $(A64)/deps/VERSIONS \
		$(PCIIDS) mirror/gpuvm-label-mirror \
		mirror/gpuvm-kubevirt-patch packaging/mirror-image.sh packaging/stage.sh packaging/sbom.sh \
		packaging/changelog packaging/deb/copyright LICENSE
	MIRROR_IMAGE_DIR=$(MIRROR_IMG) sh packaging/mirror-image.sh image $(VERSION)

include dra/dra.mk

# --- the whole ----------------------------------------------------------------------------
# Everything CI runs, in this order: the packages and the mirror's image; the aarch64 binary and the bats suites on
# it under qemu-user; static analysis; the unit and bats suites under prove (TAP), again
# under ASan+UBSan and memcheck; the fuzzers; then the QEMU boots (the e2e suite's arm64-*
# scenarios boot the aarch64 binary), which end on the line "N passed, N failed"; then the
# time of each stage (scripts/stagetime.sh, build/stages.tsv). From setup on, the kernels
# and debootstrapped roots the QEMU suite needs are fetched in the background
# (scripts/e2e-prefetch.sh), overlapping the stages that keep the CPU busy.
STAGE := sh scripts/stagetime.sh
# CI=true: a tool the tests need that is missing fails them rather than skipping (need,
# built in tests/bats/helpers.bash): under make test nothing may pass by not running.
test: export CI = true
# make test and make demo test the tree, they ship nothing: where the archive lists a library's
# newest source (a security update) but does not serve it, they build from the newest it serves,
# which VERSIONS, the SBOM and the build's last lines say. A build that ships (make, make
# packages, make repo) stops there instead, unless DEPS_ALLOW_OLDER=1 (scripts/deps.sh).
test demo: export DEPS_ALLOW_OLDER = 1
test:
	@$(STAGE) --start
	$(STAGE) setup $(MAKE) -s setup
	@$(STAGE) --background prefetch sh scripts/e2e-prefetch.sh
	$(STAGE) arm64 $(MAKE) arm64
	$(STAGE) packages $(MAKE) packages
	$(STAGE) mirror-image $(MAKE) mirror-image
	$(STAGE) test-arm64 $(MAKE) test-arm64
	$(STAGE) build $(MAKE) all $(UNIT_TESTS) $(B)/gpuvm-dra $(DRA_UNIT_TESTS)
	$(STAGE) lint $(MAKE) lint
	$(STAGE) unit+bats $(PROVE) $(BATS) $(UNIT_TESTS) $(DRA_UNIT_TESTS)
	$(STAGE) sanitize $(MAKE) sanitize
	$(STAGE) memcheck $(MAKE) memcheck
	$(STAGE) fuzz $(MAKE) fuzz FUZZ_SECONDS=$(CI_FUZZ_SECONDS)
	$(STAGE) prefetch-wait $(STAGE) --wait prefetch
	$(STAGE) e2e tests/e2e/run.sh
	@$(STAGE) --report

clean: clean-arm64
	rm -rf $(B)/obj $(B)/host $(B)/unit $(B)/gpuvm $(B)/dra $(B)/gpuvm-dra

# The headers each object included (-MMD, the compile rule above).
-include $(OBJS:.o=.d) $(HOST_OBJS:.o=.d) $(A64_OBJS:.o=.d) $(B)/host/fake-kernel.d
