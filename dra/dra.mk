# gpuvm-dra (dra/): the DRA kubelet plugin, built for the host (glibc, dynamic) against
# Debian's libnghttp2, libprotobuf-c, libcurl and json-c; its messages generated from
# dra/proto by Debian's protoc-c into $(B)/dra/gen. Not in the initramfs: the mirror's image.
# Included from the Makefile; doc/dra.md says how it is built and tested.

# gpuvm's units it reads the host through (their glibc objects, as the unit tests link them):
# units of src/boot/ only (what the boot itself reads), none of tools/. plan: driver_is_vfio(), which
# pulls mode, cmdline, vgpu and (for a source's words) settings, config and tagspec in.
DRA_GPUVM_UNITS := util strpool log pci rootio writefile iommu inventory pciproc plan mode cmdline vgpu \
	settings config tagspec
DRA_GPUVM_OBJS = $(DRA_GPUVM_UNITS:%=$(B)/host/boot/%.o)
# Where their headers are.
DRA_GPUVM_INC := -Isrc/boot

DRA_PROTOS := pluginregistration dra
DRA_GEN := $(B)/dra/gen
DRA_SRCS := main.c alive.c dralog.c grpcframe.c h2srv.c claim.c kapi.c vfiodev.c cdi.c drasvc.c \
	slices.c promfile.c drareq.c
DRA_OBJS := $(DRA_SRCS:%.c=$(B)/dra/%.o) $(DRA_PROTOS:%=$(B)/dra/%.pb-c.o)
DRA_CFLAGS = $(CFLAGS_HOST) -Idra -I$(DRA_GEN) $(DRA_GPUVM_INC)
DRA_LIBS := -lnghttp2 -lprotobuf-c -lcurl -ljson-c

.PHONY: dra dra-unit
dra: $(B)/gpuvm-dra

$(DRA_GEN)/%.pb-c.c $(DRA_GEN)/%.pb-c.h: dra/proto/%.proto
	@mkdir -p $(DRA_GEN)
	@$(if $(Q),echo "  PROTOC  $<")
	$(Q)protoc-c --c_out=$(DRA_GEN) -Idra/proto $<

# Generated code is protoc-c's: compiled without -Werror's extra warnings of ours.
$(B)/dra/%.pb-c.o: $(DRA_GEN)/%.pb-c.c $(DRA_GEN)/%.pb-c.h
	$(call compile,$(CC),-O1 -g -std=gnu11 -I$(DRA_GEN) $(EXTRA_CFLAGS))

$(B)/dra/%.o: dra/%.c $(DRA_PROTOS:%=$(DRA_GEN)/%.pb-c.h)
	$(call compile,$(CC),$(DRA_CFLAGS))

$(B)/gpuvm-dra: $(DRA_OBJS) $(DRA_GPUVM_OBJS)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS_HOST) -o $@ $(DRA_OBJS) $(DRA_GPUVM_OBJS) $(EXTRA_LDFLAGS) $(DRA_LIBS)

# Unit tests of the pure parts (dra/tests/test-*.c, tests/unit/unit.h's TAP).
DRA_UNIT_TESTS := $(patsubst dra/tests/%.c,$(B)/dra/unit/%,$(wildcard dra/tests/test-*.c))
$(B)/dra/unit/test-grpcframe: DRA_UNIT_OBJS = $(B)/dra/grpcframe.o
$(B)/dra/unit/test-claim: DRA_UNIT_OBJS = $(B)/dra/claim.o
$(B)/dra/unit/test-claim: DRA_UNIT_LIBS = -ljson-c
$(B)/dra/unit/%: dra/tests/%.c tests/unit/unit.h $(DRA_OBJS)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) $(DRA_CFLAGS) -Itests/unit -o $@ $< $(DRA_UNIT_OBJS) $(EXTRA_LDFLAGS) $(DRA_UNIT_LIBS)
dra-unit: $(DRA_UNIT_TESTS)
	$(PROVE) $(DRA_UNIT_TESTS)
# The Makefile's memcheck runs these too; its prerequisites were read before this file set them.
memcheck: $(DRA_UNIT_TESTS)

-include $(DRA_OBJS:.o=.d)

# make lint's analyses of dra/ (the Makefile's lint runs this): gcc -fanalyzer, clang-tidy
# (.clang-tidy) and cppcheck, zero findings. drasvc.c's replies are built in an arena that
# keeps every allocation and frees them at once, which -fanalyzer cannot follow: its leak
# check is off for that file alone.
DRA_LINT_DEFS = -D_GNU_SOURCE -DGPUVM_VERSION='"x"' $(DRA_GPUVM_INC) -Idra -I$(DRA_GEN) -Itests/unit
DRA_LINT_FLAGS = -std=gnu11 $(DRA_LINT_DEFS)
DRA_LINT_FILES := $(DRA_SRCS:%=dra/%) $(wildcard dra/tests/test-*.c)
.PHONY: lint-dra
lint-dra: $(DRA_PROTOS:%=$(DRA_GEN)/%.pb-c.h)
	$(Q)for f in $(DRA_LINT_FILES); do \
		gcc -fanalyzer -Werror $(WARN) $(DRA_LINT_FLAGS) \
			$$([ $$f = dra/drasvc.c ] && echo -Wno-analyzer-malloc-leak) -c -o /dev/null $$f || exit 1; \
		clang-tidy --quiet $$f -- $(DRA_LINT_FLAGS) >$(B)/dra/tidy.log 2>&1 || \
			{ grep -E 'warning:|error:' $(B)/dra/tidy.log; exit 1; }; \
	done
	$(Q)cppcheck --enable=warning,portability --std=c11 --quiet --error-exitcode=1 --inline-suppr \
		--suppress=missingIncludeSystem -DPROTOBUF_C_VERSION_NUMBER=1004001 \
		-DPROTOBUF_C_MIN_COMPILER_VERSION=1000000 $(DRA_LINT_DEFS) $(DRA_LINT_FILES)

# libFuzzer harnesses of the framing decoder and the claim reader (dra/fuzz/fuzz-*.c, built
# with clang, ASan and UBSan; json-c as Debian builds it): each replays its seed corpus
# (dra/fuzz/corpus/NAME) with its dictionary (dra/fuzz/NAME.dict), then mutates for FUZZ_SECONDS on a copy that grows in
# $(B)/dra/fuzz/corpus. make fuzz runs them after the tree's own.
DRA_FUZZ := $(patsubst dra/fuzz/fuzz-%.c,%,$(wildcard dra/fuzz/fuzz-*.c))
DRA_FUZZ_CFLAGS := -g -O1 -std=gnu11 -fno-omit-frame-pointer $(WARN) -D_GNU_SOURCE -Idra \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
$(B)/dra/fuzz/grpcframe: DRA_FUZZ_SRCS = dra/grpcframe.c
$(B)/dra/fuzz/claim: DRA_FUZZ_SRCS = dra/claim.c
$(B)/dra/fuzz/claim: DRA_FUZZ_LIBS = -ljson-c
# drareq: protobuf-c's unpack of the four requests (the generated code of dra/proto) and
# the plugin's check of each decoded claim (dra/drareq.c, with cdi.c's uid_ok).
$(B)/dra/fuzz/drareq: DRA_FUZZ_SRCS = dra/drareq.c dra/cdi.c $(DRA_PROTOS:%=$(DRA_GEN)/%.pb-c.c)
$(B)/dra/fuzz/drareq: DRA_FUZZ_LIBS = -lprotobuf-c -ljson-c
$(B)/dra/fuzz/drareq: DRA_FUZZ_INC = -I$(DRA_GEN)
$(B)/dra/fuzz/drareq: dra/drareq.c dra/drareq.h dra/cdi.c $(DRA_PROTOS:%=$(DRA_GEN)/%.pb-c.c)
$(B)/dra/fuzz/%: dra/fuzz/fuzz-%.c dra/grpcframe.c dra/claim.c dra/grpcframe.h dra/claim.h
	@mkdir -p $(@D)
	@$(if $(Q),echo "  FUZZ    $@")
	$(Q)clang $(DRA_FUZZ_CFLAGS) $(DRA_FUZZ_INC) -o $@ $< $(DRA_FUZZ_SRCS) $(DRA_FUZZ_LIBS)
.PHONY: dra-fuzz
dra-fuzz: $(DRA_FUZZ:%=$(B)/dra/fuzz/%)
	$(Q)for h in $(DRA_FUZZ); do \
		mkdir -p $(B)/dra/fuzz/corpus/$$h $(B)/dra/fuzz/crashes/$$h && \
		cp dra/fuzz/corpus/$$h/* $(B)/dra/fuzz/corpus/$$h/ && \
		$(B)/dra/fuzz/$$h $$([ "$(FUZZ_SECONDS)" = 0 ] && echo -runs=0 || echo -max_total_time=$(FUZZ_SECONDS)) \
			-timeout=10 -rss_limit_mb=2048 -artifact_prefix=$(B)/dra/fuzz/crashes/$$h/ \
			$$([ -f dra/fuzz/$$h.dict ] && echo -dict=dra/fuzz/$$h.dict) \
			$(B)/dra/fuzz/corpus/$$h >$(B)/dra/fuzz/$$h.log 2>&1 || \
			{ tail -n 30 $(B)/dra/fuzz/$$h.log; echo "dra-fuzz: $$h FAILED"; exit 1; }; \
		echo "  FUZZ    $$h: $$(grep -o 'cov: [0-9]* ft: [0-9]* corp: [0-9]*' $(B)/dra/fuzz/$$h.log | tail -n 1)"; \
	done

# gpuvm-dra for arm64 (the mirror's arm64 image): build/arm64/gpuvm-dra, cross-compiled with
# Debian's aarch64-linux-gnu-gcc --sysroot $(A64_DRA_SR): glibc's and its libraries' arm64
# -dev packages and their dependencies, which dra/sysroot.sh unpacks there without installing
# them; gpuvm's units compiled again for aarch64. The messages' C is the same
# generated code ($(DRA_GEN)).
A64_DRA := $(A64)/dra
A64_DRA_SR := $(A64_DRA)/sysroot/root
A64_DRA_CC := aarch64-linux-gnu-gcc --sysroot=$(A64_DRA_SR)
A64_DRA_LIBDIR := $(A64_DRA_SR)/usr/lib/aarch64-linux-gnu
A64_DRA_CFLAGS = $(DRA_CFLAGS)
A64_DRA_OBJS := $(DRA_SRCS:%.c=$(A64_DRA)/%.o) $(DRA_PROTOS:%=$(A64_DRA)/%.pb-c.o)
A64_DRA_GPUVM_OBJS := $(DRA_GPUVM_UNITS:%=$(A64_DRA)/boot/%.o)

$(A64_DRA)/sysroot/SYSROOT: dra/sysroot.sh scripts/apt-private.sh
	rm -f $@
	sh dra/sysroot.sh arm64 $(A64_DRA)/sysroot

$(A64_DRA)/%.pb-c.o: $(DRA_GEN)/%.pb-c.c $(DRA_GEN)/%.pb-c.h $(A64_DRA)/sysroot/SYSROOT
	$(call compile,$(A64_DRA_CC),-O1 -g -std=gnu11 -I$(DRA_GEN) $(EXTRA_CFLAGS))

$(A64_DRA)/%.o: dra/%.c $(DRA_PROTOS:%=$(DRA_GEN)/%.pb-c.h) $(A64_DRA)/sysroot/SYSROOT
	$(call compile,$(A64_DRA_CC),$(A64_DRA_CFLAGS))

$(A64_DRA)/boot/%.o: src/boot/%.c $(A64_DRA)/sysroot/SYSROOT
	$(call compile,$(A64_DRA_CC),$(CFLAGS_HOST))

$(A64)/gpuvm-dra: $(A64_DRA_OBJS) $(A64_DRA_GPUVM_OBJS)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(A64_DRA_CC) $(CFLAGS_HOST) -o $@ $(A64_DRA_OBJS) $(A64_DRA_GPUVM_OBJS) \
		-Wl,-rpath-link,$(A64_DRA_LIBDIR) -Wl,-rpath-link,$(A64_DRA_SR)/lib/aarch64-linux-gnu \
		$(DRA_LIBS)
	$(Q)file $@ | grep -q 'ARM aarch64.*dynamically linked' || { file $@ >&2; exit 1; }

.PHONY: dra-arm64
dra-arm64: $(A64)/gpuvm-dra

-include $(A64_DRA_OBJS:.o=.d) $(A64_DRA_GPUVM_OBJS:.o=.d)
