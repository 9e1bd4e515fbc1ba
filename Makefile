# collapse_ext: build the patched kernel, the tools and the guest, then
# boot it under QEMU.  `make run` and `make test` are the two commands;
# everything else is a step they build on.
#
# Two kernel bases, each a directory of kernel/: 6.12 (the stable series)
# and 7.3 (today's kernel). KERNEL=BASE picks one; everything built for it
# goes to build/BASE/ (the tree, its objects, the tools and tests built
# against its headers, its guest). Without KERNEL, `make test` and `make
# test-debug` run every base of KERNELS in turn, every other target builds
# the first.

ROOT      := $(abspath .)
ifdef LINUX_TOOLS
# Tools only, no kernel (what the Debian source package builds):
#   make tools LINUX_TOOLS=DIR
# collapsectl, the policies and the samples in build/tools/, against the
# system's uapi headers (the policies need no vmlinux.h: see
# bpf-progs/collapse_ext_types.h), with libbpf and bpftool's json_writer.c
# from the Linux source tree DIR (only its tools/ is read); dynamic, with
# the environment's CPPFLAGS/CFLAGS/LDFLAGS (dpkg-buildflags).
KERNEL    := tools
BUILD     := $(ROOT)/build/tools
KSRC      := $(abspath $(LINUX_TOOLS))
# what libbpf is built from stands for the prepared tree
KSTAMP    := $(KSRC)/tools/lib/bpf/Makefile
UAPI_STAMP :=
else
# The bases `make test` covers when no KERNEL is given.
KERNELS   ?= 6.12 7.3
ifeq ($(origin KERNEL),undefined)
KERNEL    := $(firstword $(KERNELS))
ALL_BASES := 1
endif
KDIR      := kernel/$(KERNEL)
ifeq ($(wildcard $(KDIR)/base),)
$(error KERNEL=$(KERNEL): no kernel/$(KERNEL)/base; the bases are: $(patsubst kernel/%/base,%,$(wildcard kernel/*/base)))
endif
include $(KDIR)/base
BUILD     := $(ROOT)/build/$(KERNEL)
KSRC      := $(BUILD)/linux
KSTAMP    := $(KSRC)/.git/collapse_ext-applied
# the patched uapi headers, installed from the tree
UAPI_STAMP = $(HDRS)/.stamp
endif
# the scripts (selftests/vm/run, mutate.sh, ...) find this base's guest
export BUILD KERNEL
KOBJ      := $(BUILD)/kobj
BZIMAGE   := $(KOBJ)/arch/x86/boot/bzImage
VMLINUX   := $(KOBJ)/vmlinux
HDRS      := $(BUILD)/headers
LIBBPF    := $(BUILD)/libbpf
BPFTOOL   := $(BUILD)/bpftool/bpftool
VMLINUX_H := $(BUILD)/vmlinux.h
JOBS      ?= $(shell nproc)

# Every compiler call goes through ccache (ensure-deps installs it; Debian's
# /usr/lib/ccache holds its gcc/clang links), its cache kept outside the
# repository like CI's debootstrap root, shared by every clone and base:
# paths below this clone are hashed relative to it. CCACHE_DISABLE=1 turns
# it off.
export PATH        := /usr/lib/ccache:$(PATH)
export CCACHE_DIR  ?= $(HOME)/.cache/collapse_ext/ccache
export CCACHE_BASEDIR := $(ROOT)
export CCACHE_NOHASHDIR := 1
export CCACHE_MAXSIZE ?= 8G

CC        := gcc
CLANG     ?= clang
WARNINGS  := -Wall -Wextra -Wno-unused-parameter
# collapsectl's version: the release of loader/collapsectl.h, or the
# package's (loader/deb/debian/rules passes it)
COLLAPSECTL_VERSION ?= $(shell sed -n 's/^\#define[[:space:]]*COLLAPSECTL_VERSION[[:space:]]*"\([^"]*\)".*/\1/p' loader/collapsectl.h)
ifdef LINUX_TOOLS
# The package's flags. The uapi: the system's, but BPF's from the tree
# libbpf comes from (tools/include/uapi: a distribution's may be older).
TOOLS_UAPI   = -isystem $(KSRC)/tools/include/uapi
USER_CFLAGS  = $(CPPFLAGS) $(CFLAGS) $(WARNINGS) -I$(LIBBPF)/include $(TOOLS_UAPI) \
	       -DCOLLAPSECTL_VERSION='"$(COLLAPSECTL_VERSION)"'
USER_LDFLAGS = $(LDFLAGS)
BPF_UAPI     = $(TOOLS_UAPI) -idirafter /usr/include/$(shell $(CC) -print-multiarch)
else
CFLAGS    ?= -O2 -g
# Userspace is static (the guest has no libc) and sees the patched uapi.
USER_CFLAGS  = $(CFLAGS) $(WARNINGS) -isystem $(HDRS)/include -I$(LIBBPF)/include \
	       -I$(KSRC)/tools/testing/selftests -DKSFT_THP_H='"mm/$(KSFT_THP).h"'
USER_LDFLAGS = -static
BPF_UAPI     = -I$(HDRS)/include
endif
LIBBPF_LIBS  = $(LIBBPF)/libbpf.a -lelf -lz

# $(KDIR)/configs/debug.config is for `make test-debug` only
KCONFIGS  := $(sort $(filter-out %/debug.config,$(wildcard $(KDIR)/configs/*.config)))
PATCHES   := $(sort $(wildcard $(KDIR)/patches/*.patch))

.PHONY: FORCE all run test test-debug deps kernel kernel-source kernel-config kernel-export check-series mutate \
	headers libbpf bpftool bpf-progs loader selftests samples initramfs \
	clean distclean help

all: initramfs

help:
	@echo "KERNEL=BASE picks the kernel base (kernel/BASE/: $(patsubst kernel/%/base,%,$(wildcard kernel/*/base))); build/BASE/ holds its build"
	@echo "make run          build everything, boot the kernel, show collapse_ext"
	@echo "make test         build everything, run the test suite in the guest (every base of KERNELS=$(KERNELS) without KERNEL)"
	@echo "make test-debug   the suite on a KASAN/lockdep/DEBUG_VM/kmemleak kernel (likewise)"
	@echo "make kernel       fetch, patch, configure and build the kernel"
	@echo "make kernel-export  write build/BASE/linux commits to kernel/BASE/patches/"
	@echo "make check-series   build every prefix of the series, checkpatch each patch"
	@echo "make mutate       break the kernel on purpose (kernel/BASE/mutations/): every mutation must fail its tests"
	@echo "                  (DEBUG=1: the mutations only the debug kernel catches, on make test-debug's kernel)"
	@echo "                  (FAST=1: each run stops at its first failing case; MUTATE=NAME: only those mutations)"
	@echo "make initramfs    build the guest (tools, policies, tests)"
	@echo "make bench        benchmarks: medians with 95% CIs, every base side by side (~35 min a base; see selftests/bench/README.md)"
	@echo "make bench-readme  rewrite selftests/bench/README.md's Performance numbers from the last make bench (every base, or KERNEL=BASE)"
	@echo "make deb          Debian packages: collapse-ext-tools in build/deb/, the guest kernel in build/BASE/deb/"
	@echo "make test-deb     check them: lintian, install (as root), boot the packaged kernel"
	@echo "make deb-kernel-distro  the kernel with Debian's config of the base, packaged (hours)"
	@echo "make ab-redis     Debian's redis-server: elastic against eager and frugal, memory.high lowered after the collapse (collapsectl ab --reps, ~10 min)"
	@echo "make clean        remove build/BASE/ except the kernel tree"

FORCE:
ifndef LINUX_TOOLS
# --- host packages -----------------------------------------------------------
$(BUILD)/.deps: kernel/scripts/ensure-deps.sh
	@kernel/scripts/ensure-deps.sh
	@mkdir -p $(BUILD) && touch $@
deps: $(BUILD)/.deps

# --- kernel ------------------------------------------------------------------
# Targets below depend on files that are only rewritten when their content
# changes (GNU make re-stats them), so a no-change run rebuilds nothing.
$(KSTAMP): FORCE $(BUILD)/.deps
	@kernel/scripts/prepare-source.sh $(KSRC) $(ROOT)/$(KDIR)
kernel-source: $(KSTAMP)

# $(call kconfig,SRC,OBJ,FRAGMENTS): tinyconfig plus the fragments, in OBJ
define kconfig
	@mkdir -p $(2)
	$(MAKE) -s -C $(1) O=$(2) tinyconfig
	cd $(1) && scripts/kconfig/merge_config.sh -m -O $(2) $(2)/.config \
		$(addprefix $(ROOT)/,$(3)) >/dev/null
	$(MAKE) -s -C $(1) O=$(2) olddefconfig
endef

$(KOBJ)/.config: $(KCONFIGS) $(KSTAMP)
	$(call kconfig,$(KSRC),$(KOBJ),$(KCONFIGS))
	@kernel/scripts/check-config.sh $(KOBJ)/.config $(KCONFIGS)
kernel-config: $(KOBJ)/.config

$(BZIMAGE): FORCE $(KOBJ)/.config
	$(MAKE) -s -C $(KSRC) O=$(KOBJ) -j$(JOBS) bzImage
kernel: $(BZIMAGE)

kernel-export:
	@kernel/scripts/export-patches.sh $(KSRC) $(ROOT)/$(KDIR)/patches

# Every prefix of the series builds, every patch is checkpatch-clean
check-series: $(KOBJ)/.config
	@kernel/scripts/check-series.sh $(KSRC) $(KOBJ) $(ROOT)/$(KDIR)/patches

# Each $(KDIR)/mutations/*.patch applied to a scratch copy of the patched
# tree must make the programs it names fail; writes kernel/README.md's mutation table.
# MUTATE=FILTER runs only the mutations whose name contains FILTER;
# DEBUG=1 those that only the debug kernel catches (on make test-debug's);
# FAST=1 stops each run at its first failing case.
mutate: initramfs
	@DEBUG=$(DEBUG) FAST=$(FAST) kernel/scripts/mutate.sh $(MUTATE)

$(HDRS)/.stamp: $(KSTAMP)
	$(MAKE) -s -C $(KSRC) O=$(KOBJ) headers_install INSTALL_HDR_PATH=$(HDRS)
	@touch $@
headers: $(HDRS)/.stamp
endif # LINUX_TOOLS

# --- libbpf, bpftool, vmlinux.h (from the same tree) -------------------------
$(LIBBPF)/libbpf.a: $(KSTAMP)
	@mkdir -p $(LIBBPF)/obj
	$(MAKE) -s -C $(KSRC)/tools/lib/bpf OUTPUT=$(LIBBPF)/obj/ BUILD_STATIC_ONLY=1 \
		DESTDIR=$(LIBBPF) prefix= all install_headers >/dev/null
	cp $(LIBBPF)/obj/libbpf.a $@
libbpf: $(LIBBPF)/libbpf.a

$(BPFTOOL): $(LIBBPF)/libbpf.a
	@mkdir -p $(dir $@)
	$(MAKE) -s -C $(KSRC)/tools/bpf/bpftool OUTPUT=$(dir $@) \
		EXTRA_LDFLAGS=-static feature-llvm=0 feature-libbfd=0 \
		feature-libcap=0 feature-disassembler-four-args=0 \
		feature-disassembler-init-styled=0 >/dev/null
bpftool: $(BPFTOOL)

# bpftool goes into the guest too: `bpftool struct_ops register` must work.
$(BUILD)/vm/root/usr/sbin/bpftool: $(BPFTOOL)
	@install -D -m 755 $< $@
GUEST_FILES += $(BUILD)/vm/root/usr/sbin/bpftool

$(VMLINUX_H): $(BPFTOOL) $(BZIMAGE)
	$(BPFTOOL) btf dump file $(VMLINUX) format c > $@.tmp
	@if cmp -s $@.tmp $@; then rm $@.tmp; else mv $@.tmp $@; fi

# --- policies, loader, tests, samples ----------------------------------------
include bpf-progs/bpf-progs.mk
include loader/loader.mk
include samples/samples.mk
ifdef LINUX_TOOLS
# What the Debian source package installs (loader/deb/debian/rules).
.PHONY: tools
tools: $(COLLAPSECTL) $(SAMPLE_BINS) $(BPF_OBJS) $(BPF_OUT)/policy_template.bpf.o
.DEFAULT_GOAL := tools
include loader/deb/install.mk
else
include selftests/selftests.mk
include selftests/bench/bench.mk

# --- guest -------------------------------------------------------------------
INITRAMFS := $(BUILD)/vm/initramfs.cpio.gz
initramfs: $(INITRAMFS)

# The guest's file list: adding or dropping a file (a test listed in or
# removed from selftests/expected.txt) repacks it even when every file is
# older than the initramfs.
GUEST_LIST := $(BUILD)/vm/guest-files
$(GUEST_LIST): FORCE
	@mkdir -p $(dir $@)
	@printf '%s\n' $(sort $(GUEST_FILES)) > $@.tmp
	@if cmp -s $@.tmp $@; then rm $@.tmp; else mv $@.tmp $@; fi

$(INITRAMFS): $(GUEST_FILES) $(GUEST_LIST) selftests/vm/init selftests/vm/mkinitramfs.sh $(BZIMAGE) \
		$(BPF_TYPES_OK)
	@selftests/vm/mkinitramfs.sh $@ $(GUEST_FILES)

# --- Debian packages (make deb, deb-kernel-distro, test-deb) -----------------
include loader/deb/deb.mk

# --- the two commands --------------------------------------------------------
run: initramfs
	@mkdir -p $(BUILD)/run
	@selftests/vm/run --timeout 1200 --log $(BUILD)/run/console.log \
		-- /usr/share/collapse_ext/demo.sh
	@selftests/vm/kernel-problems $(BUILD)/run/console.log
	@samples/plot_ab.sh $(BUILD)/run/console.log $(BUILD)/run/coverage.png

ifdef ALL_BASES
# No KERNEL given: the suite on every base of KERNELS in turn, all of them
# run even when one fails, and one closing line.
test test-debug:
	@failed=""; for k in $(KERNELS); do \
		echo "== make $@ KERNEL=$$k"; \
		$(MAKE) --no-print-directory KERNEL=$$k $@ || failed="$$failed $$k"; \
	done; \
	if [ -n "$$failed" ]; then \
		echo "$@: FAILED on$$failed (of: $(KERNELS))"; exit 1; \
	fi; \
	echo "$@: passed on every base ($(KERNELS))"
else
test: initramfs
	@selftests/vm/test
endif

# The same patches built with KASAN, lockdep, DEBUG_VM, DEBUG_ATOMIC_SLEEP,
# DEBUG_LIST and kmemleak, running the whole suite: any report fails it.
KOBJ_DEBUG := $(BUILD)/kobj-debug
BZ_DEBUG   := $(KOBJ_DEBUG)/arch/x86/boot/bzImage

$(KOBJ_DEBUG)/.config: $(KCONFIGS) $(KDIR)/configs/debug.config $(KSTAMP)
	$(call kconfig,$(KSRC),$(KOBJ_DEBUG),$(KCONFIGS) $(KDIR)/configs/debug.config)
	@kernel/scripts/check-config.sh $(KOBJ_DEBUG)/.config $(KDIR)/configs/debug.config

$(BZ_DEBUG): FORCE $(KOBJ_DEBUG)/.config
	$(MAKE) -s -C $(KSRC) O=$(KOBJ_DEBUG) -j$(JOBS) bzImage

ifndef ALL_BASES
test-debug: initramfs $(BZ_DEBUG)
	@BZIMAGE=$(BZ_DEBUG) TEST_TIMEOUT=$${TEST_TIMEOUT:-7200} PROG_TIMEOUT=$${PROG_TIMEOUT:-2700} selftests/vm/test
endif

clean:
	rm -rf $(BUILD)/vm $(BUILD)/bpf $(BUILD)/loader $(BUILD)/selftests \
		$(BUILD)/samples $(BUILD)/bench

distclean:
	rm -rf $(ROOT)/build
endif # LINUX_TOOLS
