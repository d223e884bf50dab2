# GWB - GPU workbench. `make` builds build/gwb; `make demo`, `make test`, `make bench`, `make rooms`,
# `make gpu-check` (on the lent GPU), `make install PREFIX=...`. The first build picks CUDA only
# when an NVIDIA GPU device is present and nvcc is found, and remembers the choice in
# $(BUILD)/config.mk; `make CUDA=1` / `make CUDA=0` chooses (and is remembered from then on).
# Builds run on every CPU unless -j says otherwise. `make DEBUG=1` synchronizes after each launch.

VERSION := 0.1.0
PREFIX ?= /usr/local
BUILD ?= build

# Parallel by default: nproc jobs at the top level (a -j on the command line wins; sub-makes
# share the top level's jobserver).
ifeq ($(MAKELEVEL),0)
MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 2)
endif

NVCC ?= $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
# The build mode. CUDA=0/1 given on the command line or in the environment wins (and the link
# rule below records it); else the mode recorded by an earlier build of $(BUILD); else CUDA
# only where both a GPU device (/dev/nvidia0, or nvidia-smi -L lists one) and nvcc exist:
# nvcc alone is no reason to compile kernels that nothing here can run.
MODE_FILE := $(BUILD)/config.mk
ifeq ($(filter command line environment override,$(origin CUDA)),)
ifneq ($(wildcard $(MODE_FILE)),)
include $(MODE_FILE)
else
HAVE_GPU := $(shell { [ -e /dev/nvidia0 ] || nvidia-smi -L 2>/dev/null | grep -q '^GPU'; } && echo 1)
CUDA := $(if $(and $(NVCC),$(HAVE_GPU)),1,0)
endif
endif
# sm_90 (H100/H200) and sm_80 (A100) machine code, plus compute_90 PTX for newer parts.
CUDA_ARCH ?= -gencode arch=compute_90,code=sm_90 -gencode arch=compute_80,code=sm_80 \
             -gencode arch=compute_90,code=compute_90

# The device machine gets a copy without .git: pass COMMIT=... there.
COMMIT ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
# DEPS_ROOT: a folder with Debian -dev packages unpacked into it (scripts/fetch-device-deps),
# for building on a machine that lacks the headers (the lent GPU machine).
ifneq ($(DEPS_ROOT),)
DEPS_INC := -I$(DEPS_ROOT)/usr/include -I$(DEPS_ROOT)/usr/include/lua5.4 \
            -I$(DEPS_ROOT)/usr/include/x86_64-linux-gnu
DEPS_LIB := -L$(DEPS_ROOT)/usr/lib/x86_64-linux-gnu -Wl,-rpath,$(abspath $(DEPS_ROOT))/usr/lib/x86_64-linux-gnu
LUA_CFLAGS := $(DEPS_INC)
else
LUA_CFLAGS := $(shell pkg-config --cflags lua5.4 2>/dev/null || echo -I/usr/include/lua5.4)
endif

WARN := -Wall -Wextra -Werror -Wmissing-prototypes -Wvla -Wshadow
OPT ?= -O2
CFLAGS ?= $(OPT) -g
ALL_CFLAGS := -std=c11 $(CFLAGS) $(WARN) -pthread -fno-strict-aliasing $(LUA_CFLAGS) \
              -DGWB_VERSION='"$(VERSION)"' -MMD -MP \
              -DGWB_SRCDIR='"$(CURDIR)"'
# Shared libraries by soname, so linking needs no -dev symlinks (true on the GPU machine too).
# LAPACK/BLAS are not linked: src/lapack.c loads liblapack.so.3 on first use (faster start).
# Linked statically, so the binary runs where only their runtime package is missing:
# libpng16.a: p:save("x.png") (src/plot_png.c); libsnappy.a: Parquet's snappy pages
# (src/parquet_enc.c; its C++ needs libstdc++.so.6, which every gcc system has); libzstd.a,
# libz.a: gzip/zstd CSV (src/zio.c), Parquet's zstd/gzip pages and PNG's deflate;
# libjansson.a: the .npy sidecar (src/npy.c). ISA-L (igzip: the gzip inflate of src/zio.c):
# libisal.a where one is installed, else Debian's libisal.so.2 by soname (Debian ships no .a;
# scripts/fetch-device-deps unpacks libisal2 for the GPU machine, found there by DEPS_LIB's rpath).
ISAL_LIB := $(if $(wildcard $(DEPS_ROOT)/usr/lib/x86_64-linux-gnu/libisal.a /usr/lib/x86_64-linux-gnu/libisal.a /usr/local/lib/libisal.a),-l:libisal.a,-l:libisal.so.2)
LDLIBS := $(DEPS_LIB) -l:liblua5.4.a -l:libprotobuf-c.a -l:libpng16.a -l:libsnappy.a \
          -l:libzstd.a $(ISAL_LIB) -l:libz.a -l:libjansson.a -lstdc++ \
          -l:libreadline.so.8 -l:libncursesw.so.6 -l:libtinfo.so.6 -lpthread -lm -ldl

# MPI (src/mpi.c, the only file that includes <mpi.h>): built in when mpicc is found (Debian's
# libopenmpi-dev; scripts/install-deps installs it), with mpicc's own compile and link flags
# given to the normal compiler; `make MPI=0` builds without (gwb is then one rank, and says so
# when mpirun starts it). Only mpi.o changes with the mode ($(OBJDIR)/mpi-mode records it).
MPICC ?= $(shell command -v mpicc 2>/dev/null)
ifeq ($(filter command line environment override,$(origin MPI)),)
MPI := $(if $(MPICC),1,0)
endif
ifeq ($(MPI),1)
MPI_CFLAGS := -DGWB_HAVE_MPI $(shell $(MPICC) --showme:compile 2>/dev/null)
LDLIBS += $(shell $(MPICC) --showme:link 2>/dev/null)
endif

ifeq ($(DEBUG),1)
OPT := -O0
NVDEBUG := -DGWB_DEBUG_SYNC
endif
ifneq ($(SANITIZE),)
ALL_CFLAGS += -fsanitize=$(SANITIZE) -fno-sanitize-recover=all -fno-omit-frame-pointer
LDFLAGS += -fsanitize=$(SANITIZE)
endif

SRC := $(wildcard src/*.c)
LIBSRC := $(filter-out src/main.c,$(SRC))
CU := $(wildcard kernels/*.cu)

ifeq ($(CUDA),1)
OBJDIR := $(BUILD)/obj
# GPU code goes into a plugin loaded on first GPU use (scripts/gen-trampolines says why);
# gwb itself links only the small CUDA runtime and reaches the plugin through trampolines.
PLUGIN := $(BUILD)/libgwbcuda.so
ALL_CFLAGS += -DGWB_HAVE_CUDA -I$(CUDA_HOME)/include -DGWB_PLUGIN_PATH='"$(abspath $(PLUGIN))"'
# -Xptxas -v: each kernel's registers, shared memory and spills go to the kernel's build log
# (<object>.log beside it), not to the terminal; scripts/gen-kernel-res reads them.
NVFLAGS := -std=c++17 -O3 $(CUDA_ARCH) -Xcompiler -Wall,-Wextra,-fPIC -DGWB_HAVE_CUDA \
           $(NVDEBUG) -Xptxas -v,-warn-spills --expt-relaxed-constexpr
CUOBJ := $(patsubst kernels/%.cu,$(OBJDIR)/kernels/%.o,$(CU))
TRAMPOBJ := $(OBJDIR)/gpu_tramp.o
CUDA_LIBS := -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64
LDLIBS += $(CUDA_LIBS) -l:libcudart.so.13 -rdynamic
else
OBJDIR := $(BUILD)/obj-cpu
CUOBJ :=
PLUGIN :=
TRAMPOBJ :=
endif

# ONNX export: C generated by protoc-c from src/onnx/onnx-ml.proto (committed; regenerate with
# `cd src/onnx && protoc-c --c_out=. onnx-ml.proto`), linked with the static libprotobuf-c.a
# (the GPU machine has no libprotobuf-c.so; scripts/fetch-device-deps unpacks the .a there).
ONNXGEN := src/onnx/onnx-ml.pb-c.c
LIBOBJ := $(patsubst src/%.c,$(OBJDIR)/src/%.o,$(LIBSRC) $(ONNXGEN)) $(OBJDIR)/commit.o \
          $(OBJDIR)/luadata.o
MAINOBJ := $(OBJDIR)/src/main.o
GWB := $(BUILD)/gwb

UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(patsubst tests/unit/%.c,$(OBJDIR)/tests/%,$(UNIT_SRC))

.PHONY: FORCE all deps demo test unit-tests bench gpu-check install clean sanitize valgrind check-man \
	rooms \
	fuzz fuzz-build kernel-res

all: $(GWB)

# The binary depends on the objects of the mode it was built in; a CUDA=0 build and a CUDA
# build keep separate object folders and the last one linked wins build/gwb (and is the mode
# recorded in $(MODE_FILE) for the next plain `make`).
$(GWB): $(MAINOBJ) $(LIBOBJ) $(TRAMPOBJ) $(PLUGIN) $(BUILD)/.mode-$(CUDA)
	$(CC) $(ALL_CFLAGS) -o $@ $(MAINOBJ) $(LIBOBJ) $(TRAMPOBJ) $(LDFLAGS) $(LDLIBS)

$(PLUGIN): $(CUOBJ)
	$(NVCC) -shared -cudart shared -o $@ $(CUOBJ) -Xlinker -Bsymbolic -L$(CUDA_HOME)/lib64 \
		-Xlinker -rpath,$(CUDA_HOME)/lib64 -lcusolver -lcublas -lcusparse -lcurand

$(OBJDIR)/gpu_tramp.S: $(PLUGIN) scripts/gen-trampolines
	@mkdir -p $(dir $@)
	scripts/gen-trampolines $(PLUGIN) > $@

$(OBJDIR)/gpu_tramp.o: $(OBJDIR)/gpu_tramp.S
	$(CC) -c -o $@ $<

$(BUILD)/.mode-$(CUDA): FORCE
	@mkdir -p $(BUILD)
	@[ -f $@ ] || { rm -f $(BUILD)/.mode-*; touch $@; }
	@echo 'CUDA := $(CUDA)' > $(MODE_FILE).tmp
	@cmp -s $(MODE_FILE).tmp $(MODE_FILE) && rm -f $(MODE_FILE).tmp || mv $(MODE_FILE).tmp $(MODE_FILE)

# The git commit, in a file rewritten only when it changes (so nothing else rebuilds).
$(OBJDIR)/commit.c: FORCE
	@mkdir -p $(dir $@)
	@echo 'const char gwb_commit[] = "$(COMMIT)";' > $@.tmp
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@

$(OBJDIR)/commit.o: $(OBJDIR)/commit.c
	$(CC) $(ALL_CFLAGS) -Wno-missing-variable-declarations -c -o $@ $<

FORCE:

# The Lua files compiled to bytecode into the binary (src/embed.h says which copy wins), by a
# tiny tool linked with the static liblua5.4.a (no Lua installation needed).
LUAFILES := $(wildcard lua/gwb/*.lua)
$(OBJDIR)/luac-embed: tools/luac-embed.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LDFLAGS) $(DEPS_LIB) -l:liblua5.4.a -lm -ldl

$(OBJDIR)/luadata.c: $(OBJDIR)/luac-embed $(LUAFILES)
	$(OBJDIR)/luac-embed $@ $(LUAFILES)

$(OBJDIR)/luadata.o: $(OBJDIR)/luadata.c
	$(CC) $(ALL_CFLAGS) -Isrc -c -o $@ $<

$(OBJDIR)/src/%.o: src/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

# mpi.o alone sees MPI's headers; it is rebuilt when MPI=0/1 changes
$(OBJDIR)/src/mpi.o: ALL_CFLAGS += $(MPI_CFLAGS)
$(OBJDIR)/src/mpi.o: $(OBJDIR)/mpi-mode
$(OBJDIR)/mpi-mode: FORCE
	@mkdir -p $(dir $@)
	@echo 'MPI=$(MPI)' > $@.tmp
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@

# generated code: our warnings are not its author's
$(OBJDIR)/src/onnx/%.o: src/onnx/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Wno-error -w -c -o $@ $<

# ptxas's resource report and spill warnings are kept in $@.log; anything else nvcc says is
# shown (and the whole log when it fails).
$(OBJDIR)/kernels/%.o: kernels/%.cu
	@mkdir -p $(dir $@)
	$(NVCC) $(NVFLAGS) -MMD -MP -c -o $@ $< > $@.log 2>&1 || { cat $@.log >&2; exit 1; }
	@grep -v -e '^ptxas info' -e '^ptxas warning : Registers are spilled' -e '^ *[0-9]* bytes stack frame' \
		-e '^ptxas warning : .*bytes spill' $@.log >&2 || true

$(OBJDIR)/tests/test_%: tests/unit/test_%.c $(LIBOBJ) $(TRAMPOBJ) $(PLUGIN)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Isrc -o $@ $< $(LIBOBJ) $(TRAMPOBJ) $(LDFLAGS) $(DEPS_LIB) -l:libcmocka.so.0 $(LDLIBS)

unit-tests: $(UNIT_BIN)

deps:
	@scripts/install-deps

demo: deps
	@$(MAKE) --no-print-directory all
	$(GWB) scripts/demo.lua

test: deps
	@$(MAKE) --no-print-directory all unit-tests
	@GWB=$(GWB) GWB_CUDA=$(CUDA) UNIT_DIR=$(OBJDIR)/tests tests/run

bench: all
	@scripts/bench/run

# The layers of src/ from this build's objects, and every cycle (exit 1 on one; make test runs
# the same check in tests/cli/test_rooms.sh). `make rooms CUDA=0` for the CPU-only objects.
rooms: $(MAINOBJ) $(LIBOBJ)
	@tools/rooms $(OBJDIR)/src

gpu-check:
	@scripts/gpu-check

# src/kernel_res.c: every kernel's registers and static shared memory as the sm_90 build
# compiles them (ptxas's report), for gpu.occupancy without a GPU. Run after changing a kernel
# (needs nvcc, not a GPU); .ci/run fails when the committed table is stale.
KRES_BUILD ?= build/kres
kernel-res:
	@$(MAKE) --no-print-directory CUDA=1 BUILD=$(KRES_BUILD) all
	scripts/gen-kernel-res $(KRES_BUILD)/obj > src/kernel_res.c.tmp && mv src/kernel_res.c.tmp src/kernel_res.c

sanitize:
	@$(MAKE) --no-print-directory BUILD=build/asan SANITIZE=address,undefined OPT=-O1 CUDA=0 \
		all unit-tests
	@GWB=build/asan/gwb GWB_CUDA=0 GWB_SANITIZE=1 UNIT_DIR=build/asan/obj-cpu/tests GWB_SKIP_REPL=1 tests/run

valgrind: all unit-tests
	@GWB=$(GWB) UNIT_DIR=$(OBJDIR)/tests GWB_VALGRIND=1 GWB_SKIP_REPL=1 tests/run

# libFuzzer targets (tests/fuzz/fuzz_*.c) against the library built by clang with ASan and
# UBSan (CPU only); `make fuzz` runs each for FUZZ_SECONDS from a seed corpus in build/fuzz.
# A crash leaves build/fuzz/<target>-crash-* (reproduce: build/fuzz/fuzz_<target> <file>).
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 30
FUZZ_TARGETS ?= csv zcsv mm npy gwbd gwbf gwbs gwbm parquet
FUZZ_DIR := $(BUILD)/fuzz
FUZZ_CFLAGS := -std=c11 -g -O1 -pthread -fno-strict-aliasing -fno-omit-frame-pointer \
	-fsanitize=address,undefined -fno-sanitize-recover=all $(LUA_CFLAGS) \
	-DGWB_VERSION='"$(VERSION)"' -DGWB_SRCDIR='"$(CURDIR)"' -Wno-unused-command-line-argument
FUZZ_OBJ := $(patsubst src/%.c,$(FUZZ_DIR)/obj/%.o,$(LIBSRC) $(ONNXGEN))

$(FUZZ_DIR)/obj/%.o: src/%.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

$(FUZZ_DIR)/obj/commit.o:
	@mkdir -p $(dir $@)
	echo 'const char gwb_commit[] = "$(COMMIT)";' | $(FUZZ_CC) -x c -c -o $@ -

# the Lua files' bytecode (src/embed.c reads it), generated as for the normal build
$(FUZZ_DIR)/obj/luadata.o: $(OBJDIR)/luadata.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Isrc -c -o $@ $<

$(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/patch.h tests/fuzz/fixup.h $(FUZZ_OBJ) \
		$(FUZZ_DIR)/obj/commit.o $(FUZZ_DIR)/obj/luadata.o
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -Isrc -Itests/fuzz -o $@ $< $(FUZZ_OBJ) \
		$(FUZZ_DIR)/obj/commit.o $(FUZZ_DIR)/obj/luadata.o $(LDLIBS)

fuzz-build: $(patsubst %,$(FUZZ_DIR)/fuzz_%,$(FUZZ_TARGETS))

fuzz:
	@scripts/install-deps fuzz
	@$(MAKE) --no-print-directory fuzz-build
	@FUZZ_DIR=$(FUZZ_DIR) FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz/run $(FUZZ_TARGETS)

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/gwb/lua/gwb \
		$(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(GWB) $(DESTDIR)$(PREFIX)/bin/gwb
	$(if $(PLUGIN),install -d $(DESTDIR)$(PREFIX)/lib/gwb && \
		install -m 755 $(PLUGIN) $(DESTDIR)$(PREFIX)/lib/gwb/libgwbcuda.so)
	install -m 644 lua/gwb/*.lua $(DESTDIR)$(PREFIX)/share/gwb/lua/gwb/
	install -m 644 man/gwb.1 $(DESTDIR)$(PREFIX)/share/man/man1/gwb.1

check-man:
	@LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 man --warnings -E UTF-8 -l man/gwb.1 2>&1 >/dev/null | \
		(! grep .) && echo "man page: no warnings"

clean:
	rm -rf build

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
