# make install-tools DESTDIR=DIR (tools mode: LINUX_TOOLS=, see the top
# Makefile): the collapse-ext-tools package's files, as loader/deb/debian/rules
# installs them. The changelog, copyright and lintian overrides are
# debhelper's (dh_installchangelogs, dh_installdocs, dh_lintian).
DOC_DIR  := usr/share/doc/collapse-ext-tools
EXAMPLES := $(SAMPLE_SRCS) samples/policy_template.bpf.c $(BPF_SRCS) \
	    bpf-progs/collapse_ext.bpf.h bpf-progs/collapse_ext_types.h \
	    loader/deb/collapse_ext.rules.yml

.PHONY: install-tools
install-tools: tools
	@test -n "$(DESTDIR)" || { echo "install-tools: DESTDIR= is required" >&2; exit 2; }
	install -D -m 755 $(COLLAPSECTL) $(DESTDIR)/usr/sbin/collapsectl
	install -d $(DESTDIR)/usr/libexec/collapse_ext $(DESTDIR)/usr/lib/collapse_ext/bpf \
		$(DESTDIR)/$(DOC_DIR)/examples
	install -m 755 $(SAMPLE_BINS) $(DESTDIR)/usr/libexec/collapse_ext/
	install -m 644 $(BPF_OBJS) $(DESTDIR)/usr/lib/collapse_ext/bpf/
	install -m 644 $(EXAMPLES) $(DESTDIR)/$(DOC_DIR)/examples/
	@# the manual pages carry the version in their footer
	for m in loader/man/*.[1-8]; do \
		sec=$${m##*.}; install -d $(DESTDIR)/usr/share/man/man$$sec; \
		sed '/^\.TH /s/"collapse_ext [^"]*"/"collapse_ext $(COLLAPSECTL_VERSION)"/' $$m \
			> $(DESTDIR)/usr/share/man/man$$sec/$$(basename $$m); \
	done
	install -d $(DESTDIR)/lib/systemd/system
	install -m 644 loader/systemd/collapse-ext.service loader/systemd/collapse-ext-metrics.service \
		loader/systemd/collapse-ext-metrics.timer $(DESTDIR)/lib/systemd/system/
	install -D -m 644 loader/bash-completion/collapsectl \
		$(DESTDIR)/usr/share/bash-completion/completions/collapsectl
	install -D -m 644 loader/deb/policies.conf $(DESTDIR)/etc/collapse_ext/policies.conf
	install -D -m 644 loader/deb/default $(DESTDIR)/etc/default/collapse-ext
