# Samples: samples/NAME.c -> build/BASE/samples/NAME, /usr/bin in the guest.
SAMPLE_SRCS := $(filter-out %.bpf.c,$(wildcard samples/*.c))
SAMPLE_BINS := $(patsubst samples/%.c,$(BUILD)/samples/%,$(SAMPLE_SRCS))

$(BUILD)/samples/%: samples/%.c $(UAPI_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $< -o $@ $(USER_LDFLAGS)

$(GUEST)/usr/bin/%: $(BUILD)/samples/%
	@install -D -m 755 $< $@

samples: $(SAMPLE_BINS)
GUEST_FILES += $(patsubst $(BUILD)/samples/%,$(GUEST)/usr/bin/%,$(SAMPLE_BINS))

$(GUEST)/usr/share/collapse_ext/demo.sh: samples/demo.sh
	@install -D -m 755 $< $@
GUEST_FILES += $(GUEST)/usr/share/collapse_ext/demo.sh

# The policy template is built like a policy, to prove it builds and loads.
$(BPF_OUT)/policy_template.bpf.o: samples/policy_template.bpf.c $(wildcard bpf-progs/*.h) \
		$(UAPI_STAMP) $(LIBBPF)/libbpf.a
	@mkdir -p $(dir $@)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@
GUEST_FILES += $(GUEST)/usr/share/collapse_ext/bpf/policy_template.bpf.o

# A/B on a real application (selftests/bench/README.md: "A/B on a real
# application: redis"):
# Debian's redis, elastic against eager and against frugal with memory.high
# lowered to 300M after the collapse (POLICY_A, POLICY_B, HIGH_AFTER change
# that), `collapsectl ab --reps` in the guest; build/BASE/ab-redis/result.txt
# and result-B.csv per B. Installs redis-tools if missing.
.PHONY: ab-redis
ab-redis: initramfs
	@samples/redis_ab.sh $(BUILD)/ab-redis
