# SPDX-License-Identifier: MIT
# Read after the project's Makefile (make -f Makefile -f bench/syms.mk ...): the same
# objects, flags and libraries as build/gpuvm, linked without -s, so that callgrind can
# name functions. The code is the one build/gpuvm runs; only the symbol table differs.
$(B)/bench/gpuvm.syms: $(OBJS)
	@mkdir -p $(@D)
	$(Q)$(MUSL_CC) $(CFLAGS_STATIC) $(filter-out -s,$(LDFLAGS_STATIC)) -o $@ $(OBJS) $(DEPS_LIBS)
