# collapsectl: static libbpf loader -> build/loader/collapsectl, /usr/bin in the guest.
LOADER_SRCS := $(wildcard loader/*.c)
COLLAPSECTL := $(BUILD)/loader/collapsectl

ifneq ($(wildcard loader/collapsectl.c),)
$(COLLAPSECTL): $(LOADER_SRCS) $(wildcard loader/*.h) $(LIBBPF)/libbpf.a $(HDRS)/.stamp
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -Iloader $(LOADER_SRCS) -o $@ $(USER_LDFLAGS) $(LIBBPF_LIBS)

$(GUEST)/usr/bin/collapsectl: $(COLLAPSECTL)
	@install -D -m 755 $< $@
GUEST_FILES += $(GUEST)/usr/bin/collapsectl
endif
loader: $(LOADER_SRCS:%=$(COLLAPSECTL))
