# collapsectl: static libbpf loader -> build/BASE/loader/collapsectl, /usr/bin in the guest.
# JSON goes through bpftool's json_writer.c, compiled from the kernel tree.
LOADER_SRCS := $(wildcard loader/*.c)
LOADER_EXTRA_SRCS := $(KSRC)/tools/bpf/bpftool/json_writer.c
# json_writer.h wants <linux/compiler.h> (__printf) from tools/include;
# -idirafter: the patched uapi headers still come first.
LOADER_CFLAGS = -Iloader -I$(KSRC)/tools/bpf/bpftool -idirafter $(KSRC)/tools/include
COLLAPSECTL := $(BUILD)/loader/collapsectl

ifneq ($(wildcard loader/collapsectl.c),)
$(COLLAPSECTL): $(LOADER_SRCS) $(wildcard loader/*.h) $(LIBBPF)/libbpf.a $(UAPI_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $(LOADER_CFLAGS) $(LOADER_SRCS) $(LOADER_EXTRA_SRCS) \
		-o $@ $(USER_LDFLAGS) $(LIBBPF_LIBS)

# collapsectl(8) and every command's --help name the same options
$(GUEST)/usr/bin/collapsectl: $(COLLAPSECTL) loader/man/collapsectl.8 loader/check-man.py
	@loader/check-man.py $< loader/man/collapsectl.8
	@install -D -m 755 $< $@
GUEST_FILES += $(GUEST)/usr/bin/collapsectl
endif
loader: $(LOADER_SRCS:%=$(COLLAPSECTL))
