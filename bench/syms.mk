# SPDX-License-Identifier: MIT
# Read after the project's Makefile (make -f Makefile -f bench/syms.mk ...): the same
# objects, flags and libraries as build/gpuvm, linked without -s, so that callgrind can
# name functions. The code is the one build/gpuvm runs; only the symbol table differs.
# The linker's map beside it (gpuvm.syms.map) is what bench/sizemap.sh reads.
$(B)/bench/gpuvm.syms: $(OBJS) $(DEPS)/VERSIONS bench/syms.mk
	@mkdir -p $(@D)
	$(Q)$(MUSL_CC) $(CFLAGS_STATIC) $(filter-out -s,$(LDFLAGS_STATIC)) -Wl,-Map=$@.map -o $@ $(OBJS) $(DEPS_LIBS)
