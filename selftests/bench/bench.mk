# make bench: benchmarks, measured side by side in one run (see
# selftests/bench/README.md).
# collapse_bench runs in the guest (/usr/bin); run-bench.sh boots the
# unpatched base kernel built with the same config (build/BASE/kobj-base)
# and the patched kernel, and tabulates and plots what it prints.
BASE_SRC    := $(BUILD)/linux-base
BASE_OBJ    := $(BUILD)/kobj-base
BASE_BZ     := $(BASE_OBJ)/arch/x86/boot/bzImage
BENCH_BIN   := $(ST_OUT)/collapse_bench
# where make bench-readme writes the tables (between its bench:begin/end markers)
BENCH_README := selftests/bench/README.md

$(BENCH_BIN): selftests/bench/collapse_bench.c $(ST_LIB) $(wildcard selftests/lib/*.h) \
		$(UAPI_STAMP) $(LIBBPF)/libbpf.a $(ST_OUT)/bench_batch.skel.h
	$(CC) $(ST_CFLAGS) $< $(ST_LIB) -o $@ $(USER_LDFLAGS) $(LIBBPF_LIBS)

$(GUEST)/usr/bin/collapse_bench: $(BENCH_BIN)
	@install -D -m 755 $< $@
GUEST_FILES += $(GUEST)/usr/bin/collapse_bench

# The unpatched kernel: the pristine commit of build/BASE/linux (a git worktree,
# made once), same config.
$(BASE_SRC)/.git: | $(KSTAMP)
	@rm -rf $(BASE_SRC)
	git -C $(KSRC) worktree prune
	git -C $(KSRC) worktree add -f --detach $(BASE_SRC) pristine >/dev/null

$(BASE_OBJ)/.config: $(KCONFIGS) $(BASE_SRC)/.git
	$(call kconfig,$(BASE_SRC),$(BASE_OBJ),$(KCONFIGS))

$(BASE_BZ): $(BASE_OBJ)/.config
	$(MAKE) -s -C $(BASE_SRC) O=$(BASE_OBJ) -j$(JOBS) bzImage

kernel-base: $(BASE_BZ)

# Without KERNEL: every base of KERNELS in turn under one run id, then
# every table with the bases side by side (report.py BASE=FILE ...).
BENCH_RESULTS := $(foreach k,$(KERNELS),$(k)=$(ROOT)/build/$(k)/bench/results.json)
ifdef ALL_BASES
bench:
	@run=$$(date -u +%Y%m%dT%H%M%SZ); for k in $(KERNELS); do \
		echo "== make bench KERNEL=$$k"; \
		BENCH_RUN=$$run $(MAKE) --no-print-directory KERNEL=$$k bench || \
			{ echo "bench: FAILED on $$k (of: $(KERNELS))"; exit 1; }; \
	done; \
	echo "== every base side by side"; \
	python3 selftests/bench/report.py $(BENCH_RESULTS)

# selftests/bench/README.md's Performance numbers, regenerated from the last
# run of every base.
bench-readme:
	@python3 selftests/bench/report.py --readme $(BENCH_README) $(BENCH_RESULTS)
else
bench: initramfs $(BASE_BZ)
	@selftests/bench/run-bench.sh $(BUILD)/bench $(BASE_BZ)

bench-readme:
	@test -f $(BUILD)/bench/results.json || \
		{ echo "bench-readme: no $(BUILD)/bench/results.json: run make bench" >&2; exit 1; }
	@python3 selftests/bench/report.py --readme $(BENCH_README) $(BUILD)/bench/results.json
endif

.PHONY: bench bench-readme kernel-base
