# Policies: bpf-progs/NAME.bpf.c -> build/BASE/bpf/NAME.bpf.o (CO-RE, clang -target bpf),
# staged in the guest under /usr/share/collapse_ext/bpf/.
GUEST        := $(BUILD)/vm/root
BPF_OUT      := $(BUILD)/bpf
BPF_SRCS     := $(wildcard bpf-progs/*.bpf.c)
BPF_OBJS     := $(patsubst bpf-progs/%.bpf.c,$(BPF_OUT)/%.bpf.o,$(BPF_SRCS))
# -fms-extensions: 7.3's vmlinux.h embeds tagged structs anonymously
# ("struct __filename_head;" as a member), as the kernel is built since 6.19;
# the tree's selftests/bpf compiles with the same two flags.
BPF_CFLAGS    = -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_x86 -Wall -Wno-unused-function \
		-fms-extensions -Wno-microsoft-anon-tag \
		-I$(BUILD) -I$(LIBBPF)/include -I$(ROOT)/bpf-progs

$(BPF_OUT)/%.bpf.o: bpf-progs/%.bpf.c $(wildcard bpf-progs/*.h) $(VMLINUX_H) $(LIBBPF)/libbpf.a
	@mkdir -p $(dir $@)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(GUEST)/usr/share/collapse_ext/bpf/%.bpf.o: $(BPF_OUT)/%.bpf.o
	@install -D -m 644 $< $@

bpf-progs: $(BPF_OBJS)
GUEST_FILES += $(patsubst $(BPF_OUT)/%,$(GUEST)/usr/share/collapse_ext/bpf/%,$(BPF_OBJS))
