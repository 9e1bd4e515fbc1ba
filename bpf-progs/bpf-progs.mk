# Policies: bpf-progs/NAME.bpf.c -> build/BASE/bpf/NAME.bpf.o (CO-RE, clang -target bpf),
# staged in the guest under /usr/share/collapse_ext/bpf/.
GUEST        := $(BUILD)/vm/root
BPF_OUT      := $(BUILD)/bpf
BPF_SRCS     := $(wildcard bpf-progs/*.bpf.c)
BPF_OBJS     := $(patsubst bpf-progs/%.bpf.c,$(BPF_OUT)/%.bpf.o,$(BPF_SRCS))
# No vmlinux.h: the kernel types come from bpf-progs/collapse_ext_types.h
# (CO-RE), the uapi from the tree's headers (or the system's, make tools).
BPF_CFLAGS    = -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_x86 -Wall -Wno-unused-function \
		-I$(LIBBPF)/include -I$(ROOT)/bpf-progs $(BPF_UAPI)

$(BPF_OUT)/%.bpf.o: bpf-progs/%.bpf.c $(wildcard bpf-progs/*.h) $(UAPI_STAMP) $(LIBBPF)/libbpf.a
	@mkdir -p $(dir $@)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

# collapse_ext_types.h against this base's BTF (its vmlinux.h): checked
# before anything goes into the guest.
BPF_TYPES_OK := $(BPF_OUT)/.types-checked
$(BPF_TYPES_OK): bpf-progs/collapse_ext_types.h bpf-progs/check-types.sh $(VMLINUX_H)
	@mkdir -p $(dir $@)
	@bpf-progs/check-types.sh bpf-progs/collapse_ext_types.h $(VMLINUX_H) $(KERNEL)
	@touch $@

$(GUEST)/usr/share/collapse_ext/bpf/%.bpf.o: $(BPF_OUT)/%.bpf.o
	@install -D -m 644 $< $@

bpf-progs: $(BPF_OBJS)
GUEST_FILES += $(patsubst $(BPF_OUT)/%,$(GUEST)/usr/share/collapse_ext/bpf/%,$(BPF_OBJS))
