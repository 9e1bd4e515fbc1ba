# Selftests: every selftests/*/NAME.c with a main is one kselftest program
# (kselftest_harness.h), linked with the shared helpers in selftests/lib/
# and the kernel tree's THP settings stack (selftests/mm/, $(KSFT_THP).c),
# staged in the guest as /selftests/bin/NAME.  Every selftests/*/NAME.bpf.c
# is compiled and turned into a skeleton, build/BASE/selftests/NAME.skel.h.
# The kernel tree's selftests/mm/khugepaged is staged as /selftests/mm/khugepaged.
# A listed tree-NAME is the tree's own tools/testing/selftests/NAME (the
# series' tests), built with its Makefile and staged as
# /selftests/tree/NAME/runner.
#
# selftests/expected.txt lists the programs the suite runs and their cases
# (one program per line: NAME CASE...). Only listed programs go into the
# guest; a program whose source is not listed fails the build (it would
# never run), a listed one without a source fails the run. So does a
# program without a row in selftests/README.md's test table, or a row
# without a program.
ST_OUT     := $(BUILD)/selftests
# The shared list, then what only this base runs (kernel/BASE/expected.txt:
# the tree's test in contexts the other base's tree does not have), merged
# into build/BASE/selftests/expected.txt for the guest and the host's check;
# the skips likewise (kernel/BASE/expected-skips.txt: what a base lacks).
ST_EXPECTED := selftests/expected.txt $(wildcard $(KDIR)/expected.txt)
ST_SKIPS   := selftests/expected-skips.txt $(wildcard $(KDIR)/expected-skips.txt)
ST_LIST    := $(ST_OUT)/expected.txt
ST_LISTED  := $(shell awk '{ sub(/\#.*/, "") } NF { print $$1 }' $(ST_EXPECTED))
# The tree's THP settings helpers: thp_settings.c on 6.12, hugepage_settings.c
# (with vm_util.c's file helpers) on 7.3, as kernel/BASE/base says.
ST_THP     := $(patsubst %,$(ST_OUT)/ksft/%.o,$(KSFT_THP) $(KSFT_THP_DEPS))
# loader/ops_data.c edits struct_ops data for collapsectl and the tests alike
ST_LIB     := $(wildcard selftests/lib/*.c) loader/ops_data.c $(ST_THP)
ST_LIB     += loader/ab_stats.c
ST_SRCS    := $(filter-out %.bpf.c,$(wildcard selftests/mm/*.c selftests/policy/*.c \
					   selftests/loader/*.c selftests/stress/*.c))
ST_NAMES   := $(notdir $(basename $(ST_SRCS)))
ST_BINS    := $(patsubst %,$(ST_OUT)/bin/%,$(ST_NAMES))
ST_UNLISTED := $(filter-out $(ST_LISTED),$(ST_NAMES))
ST_NOSRC   := $(filter-out $(ST_NAMES) khugepaged-% tree-%,$(ST_LISTED))
ST_TREE    := $(patsubst tree-%,%,$(filter tree-%,$(ST_LISTED)))
# selftests/README.md's test table: a row "| `DIR/NAME` | what it proves |"
# for every program, and none for a program that is gone (checked with the list)
ST_README  := selftests/README.md
ST_ROWS    := $(shell sed -n 's/^| `\(mm\|policy\|loader\|stress\)\/\([a-z0-9_]*\)` |.*/\2/p' $(ST_README))
ST_NOROW   := $(filter-out $(ST_ROWS),$(ST_NAMES))
ST_STALEROW := $(filter-out $(ST_NAMES),$(ST_ROWS))
ST_BPF     := $(wildcard selftests/*/*.bpf.c)
ST_CFLAGS   = $(USER_CFLAGS) -Wno-sign-compare -Wno-clobbered -Iselftests/lib -Iselftests/policy \
	      -Iloader -I$(ST_OUT) \
	      -D_GNU_SOURCE -pthread
KSFT_MM    := $(KSRC)/tools/testing/selftests/mm

vpath %.c selftests/mm selftests/policy selftests/loader selftests/bench selftests/stress

$(ST_OUT)/%.bpf.o: %.bpf.c $(wildcard bpf-progs/*.h) $(UAPI_STAMP) $(LIBBPF)/libbpf.a
	@mkdir -p $(dir $@)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(ST_OUT)/%.skel.h: $(ST_OUT)/%.bpf.o $(BPFTOOL)
	$(BPFTOOL) gen skeleton $< name $(subst -,_,$*) > $@.tmp && mv $@.tmp $@

ST_SKELS   := $(patsubst %.bpf.c,$(ST_OUT)/%.skel.h,$(notdir $(ST_BPF)))
# Intermediate files of pattern chains, kept: no rebuild on every run.
.SECONDARY: $(ST_SKELS) $(ST_SKELS:.skel.h=.bpf.o)

$(ST_OUT)/bin/%: %.c $(ST_LIB) $(wildcard selftests/lib/*.h selftests/*/*.h loader/*.h) $(UAPI_STAMP) \
		$(LIBBPF)/libbpf.a $(ST_SKELS)
	@mkdir -p $(dir $@)
	$(CC) $(ST_CFLAGS) $< $(ST_LIB) -o $@ $(USER_LDFLAGS) $(LIBBPF_LIBS)

# Depends on the patch stamp, not on the sources: they appear in this same
# make run on a fresh clone, after make has cached build/ as missing.
KSFT_SRCS  := $(addprefix $(KSFT_MM)/,khugepaged.c vm_util.c $(KSFT_THP).c)

# The tree's thp_settings.c, its read_num()/write_num()/read_file()/
# write_file() renamed (they would clash with selftests/lib's).
$(ST_OUT)/ksft/%.o: $(KSTAMP) $(UAPI_STAMP) selftests/lib/thp_settings_names.h
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -w -include selftests/lib/thp_settings_names.h \
		-c $(KSFT_MM)/$*.c -o $@
# Static PIE, not static: the test maps its areas at a fixed 1 GiB hint, and
# x86-64 randomises the brk of a static (ET_EXEC) binary over 1 GiB above
# its bss, so now and then the heap sat at the hint and setup failed
# ("Failed to allocate VMA at 0x40000000"). A static PIE's brk starts at
# ELF_ET_DYN_BASE, far above.
$(ST_OUT)/mm/khugepaged: $(KSTAMP) $(UAPI_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -w -I$(KSFT_MM) $(KSFT_SRCS) -o $@ -static-pie

# The tree's own tests: its Makefile (and libbpf, in its output) decides
# what to rebuild. Static, as everything in the guest.
$(ST_OUT)/tree/%/runner: $(KSTAMP) $(UAPI_STAMP) $(BPFTOOL) $(BZIMAGE) FORCE
	@mkdir -p $(dir $@)
	$(MAKE) -s -C $(KSRC)/tools/testing/selftests/$* OUTPUT=$(abspath $(dir $@)) \
		VMLINUX_BTF=$(VMLINUX) BPFTOOL=$(BPFTOOL) CLANG=$(CLANG) \
		KHDR_INCLUDES="-isystem $(HDRS)/include" RUNNER_LDFLAGS=-static
$(GUEST)/selftests/tree/%/runner: $(ST_OUT)/tree/%/runner
	@cmp -s $< $@ || install -D -m 755 $< $@

$(GUEST)/selftests/bin/%: $(ST_OUT)/bin/%
	@install -D -m 755 $< $@
$(GUEST)/selftests/mm/khugepaged: $(ST_OUT)/mm/khugepaged
	@install -D -m 755 $< $@
$(GUEST)/selftests/%.sh: selftests/%.sh
	@install -D -m 755 $< $@
# The list goes into the guest for the runner; checked on every make.
$(GUEST)/selftests/expected.txt: FORCE
	@if [ -n "$(ST_UNLISTED)" ]; then \
		for n in $(ST_UNLISTED); do \
			echo "selftests: $$n is not in selftests/expected.txt: it would never run;" \
			     "add a line '$$n CASE...' (see the file)" >&2; \
		done; exit 1; \
	fi
	@for n in $(ST_NOSRC); do \
		echo "selftests: warning: $(ST_EXPECTED) list $$n but there is no" \
		     "selftests/*/$$n.c: the run will fail" >&2; \
	done
	@if [ -n "$(ST_NOROW)$(ST_STALEROW)" ]; then \
		for n in $(ST_NOROW); do \
			echo "selftests: $(ST_README)'s test table has no row for $$n:" \
			     "add '| \`DIR/$$n\` | what it proves |'" >&2; \
		done; \
		for n in $(ST_STALEROW); do \
			echo "selftests: $(ST_README)'s test table has a row for $$n," \
			     "which has no selftests/*/$$n.c: remove it" >&2; \
		done; exit 1; \
	fi
	@selftests/check-checklist $(KERNEL) $(KSRC)/Documentation/admin-guide/mm/collapse_ext.rst \
		selftests/expected.txt $(wildcard kernel/*/expected.txt)
	@mkdir -p $(dir $@) $(ST_OUT)
	@cat $(ST_EXPECTED) > $(ST_LIST).tmp
	@cmp -s $(ST_LIST).tmp $(ST_LIST) || mv $(ST_LIST).tmp $(ST_LIST)
	@rm -f $(ST_LIST).tmp
	@cat $(ST_SKIPS) > $(ST_OUT)/expected-skips.txt.tmp
	@cmp -s $(ST_OUT)/expected-skips.txt.tmp $(ST_OUT)/expected-skips.txt || \
		mv $(ST_OUT)/expected-skips.txt.tmp $(ST_OUT)/expected-skips.txt
	@rm -f $(ST_OUT)/expected-skips.txt.tmp
	@cmp -s $(ST_LIST) $@ || install -m 644 $(ST_LIST) $@
# The tests' BPF objects, for the collapsectl and bpftool tests
$(GUEST)/selftests/bpf/%.bpf.o: $(ST_OUT)/%.bpf.o
	@install -D -m 644 $< $@

selftests: $(ST_BINS) $(ST_OUT)/mm/khugepaged $(patsubst %,$(ST_OUT)/tree/%/runner,$(ST_TREE))
GUEST_FILES += $(patsubst %,$(GUEST)/selftests/bin/%,$(filter $(ST_LISTED),$(ST_NAMES))) \
	       $(patsubst %,$(GUEST)/selftests/tree/%/runner,$(ST_TREE)) \
	       $(patsubst %.bpf.c,$(GUEST)/selftests/bpf/%.bpf.o,$(notdir $(ST_BPF))) \
	       $(GUEST)/selftests/mm/khugepaged $(GUEST)/selftests/run_tests.sh \
	       $(GUEST)/selftests/with_policy.sh $(GUEST)/selftests/expected.txt
