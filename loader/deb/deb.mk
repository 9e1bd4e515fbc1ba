# Debian packages (README "Packages"), included from the top Makefile.
#   make deb                build/BASE/deb/collapse-ext-tools_VERSION_ARCH.deb and
#                           the kernel of build/BASE/kobj's config as
#                           build/BASE/deb/linux-image-KVER_*.deb (+ linux-libc-dev)
#   make deb-kernel-distro  the kernel with Debian's config of its base + collapse_ext,
#                           packaged in build/BASE/deb-distro/ (hours on 2 cores)
#   make test-deb           lintian, install, man pages, unit, and boot the
#                           packaged kernel under QEMU (loader/deb/test-deb.sh)
DEB_OUT   := $(BUILD)/deb
PKG_OUT   := $(BUILD)/pkg
DEB_ARCH  := $(shell dpkg --print-architecture 2>/dev/null)
DEB_TOOLS_VERSION := $(shell sed -n 's/^\#define[[:space:]]*COLLAPSECTL_VERSION[[:space:]]*"\([^"]*\)".*/\1/p' loader/collapsectl.h)-1
DEB_TOOLS := $(DEB_OUT)/collapse-ext-tools_$(DEB_TOOLS_VERSION)_$(DEB_ARCH).deb

.PHONY: deb deb-tools deb-kernel deb-kernel-distro test-deb clean-deb

deb: deb-tools deb-kernel

# --- collapse-ext-tools ------------------------------------------------------
# The package's programs are dynamic against libc (the guest's are static),
# hardened as Debian builds packages (dpkg-buildflags, evaluated when a
# recipe runs: dpkg-dev comes with the host packages); libbpf stays static
# (Debian 12's libbpf 1.1 is too old). Same sources and flags as loader.mk.
PKG_BUILDFLAGS = $(shell DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --get $(1))
PKG_CFLAGS     = $(call PKG_BUILDFLAGS,CPPFLAGS) $(call PKG_BUILDFLAGS,CFLAGS)
PKG_LDFLAGS    = $(call PKG_BUILDFLAGS,LDFLAGS)

PKG_COLLAPSECTL := $(PKG_OUT)/collapsectl
$(PKG_COLLAPSECTL): $(LOADER_SRCS) $(wildcard loader/*.h) $(LIBBPF)/libbpf.a $(HDRS)/.stamp
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $(PKG_CFLAGS) $(or $(LOADER_CFLAGS),-Iloader) \
		$(LOADER_SRCS) $(LOADER_EXTRA_SRCS) -o $@ $(PKG_LDFLAGS) $(LIBBPF_LIBS)

PKG_SAMPLES := $(patsubst samples/%.c,$(PKG_OUT)/samples/%,$(SAMPLE_SRCS))
$(PKG_OUT)/samples/%: samples/%.c $(HDRS)/.stamp
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $(PKG_CFLAGS) $< -o $@ $(PKG_LDFLAGS)

# /usr/share/doc/collapse-ext-tools/examples/
DEB_EXAMPLES := $(SAMPLE_SRCS) samples/policy_template.bpf.c $(BPF_SRCS) bpf-progs/collapse_ext.bpf.h
DEB_INPUTS   := $(wildcard loader/deb/* loader/man/* loader/systemd/*) loader/collapsectl.h

$(DEB_TOOLS): $(PKG_COLLAPSECTL) $(PKG_SAMPLES) $(BPF_OBJS) $(DEB_EXAMPLES) $(DEB_INPUTS)
	@loader/deb/build-tools-deb.sh $(DEB_OUT) $(PKG_OUT)/root $(PKG_COLLAPSECTL) \
		--samples $(PKG_SAMPLES) --policies $(BPF_OBJS) --examples $(DEB_EXAMPLES) >/dev/null
	@echo "deb: $@"
deb-tools: $(DEB_TOOLS)

# --- the kernel --------------------------------------------------------------
# bindeb-pkg (scripts/package/: dpkg-buildpackage, debhelper) relinks
# vmlinux: its build number becomes the package revision. Run in build/BASE/kobj,
# it changed build/BASE/kobj's vmlinux and bzImage, and the next `make kernel`
# relinked them again (measured: 56 s for bindeb-pkg, then 16 s and a new
# bzImage, so a new initramfs, each way). So it runs in build/BASE/kobj-deb, an
# rsync of build/BASE/kobj (timestamps kept: nothing is compiled again; tools/,
# whose objects record their absolute paths, is kept from the first copy).
KOBJ_DEB     := $(BUILD)/kobj-deb
DEB_DISTRO   := $(BUILD)/deb-distro
KOBJ_DISTRO  := $(DEB_DISTRO)/obj
# no -dbg package (a copy of vmlinux with its DWARF); mkdebian's names
BINDEB_ENV   = KDEB_CHANGELOG_DIST=$$(. /etc/os-release && echo $${VERSION_CODENAME:-unstable}) \
	       DEBFULLNAME="collapse_ext developers" DEBEMAIL=collapse_ext@localhost
BINDEB_FLAGS = DPKG_FLAGS=-Ppkg.linux-upstream.nokerneldbg

$(DEB_OUT)/.kernel: $(BZIMAGE) | $(BUILD)/.deps
	@mkdir -p $(DEB_OUT) $(KOBJ_DEB)
	@rsync -a --delete --exclude=/tools/ --exclude=/debian/ $(KOBJ)/ $(KOBJ_DEB)/
	@rm -f $(BUILD)/linux-*.deb $(BUILD)/linux-upstream_*
	@echo "deb: bindeb-pkg in $(KOBJ_DEB) (log: $(KOBJ_DEB)/bindeb-pkg.log)"
	@$(BINDEB_ENV) nice $(MAKE) -C $(KSRC) O=$(KOBJ_DEB) -j$(JOBS) $(BINDEB_FLAGS) \
		bindeb-pkg > $(KOBJ_DEB)/bindeb-pkg.log 2>&1 || \
		{ tail -n 30 $(KOBJ_DEB)/bindeb-pkg.log; echo "deb: bindeb-pkg failed" >&2; exit 1; }
	@rm -f $(DEB_OUT)/linux-*.deb $(DEB_OUT)/linux-upstream_*
	@mv $(BUILD)/linux-*.deb $(BUILD)/linux-upstream_* $(DEB_OUT)/
	@ls $(DEB_OUT)/linux-*.deb > $@
	@sed 's/^/deb: /' $@
deb-kernel: $(DEB_OUT)/.kernel

# Debian's own config for the base (linux-config-X.Y, or the running X.Y
# kernel's), plus what $(KDIR)/configs/ switches on: see distro-config.sh.
deb-kernel-distro: $(KSTAMP)
	@kernel/scripts/ensure-deps.sh distro
	@kernel/scripts/distro-config.sh $(KSRC) $(KOBJ_DISTRO) $(ROOT)/$(KDIR) $(KCONFIGS)
	@rm -f $(DEB_DISTRO)/linux-*.deb $(DEB_DISTRO)/linux-upstream_*
	$(BINDEB_ENV) nice $(MAKE) -C $(KSRC) O=$(KOBJ_DISTRO) -j$(JOBS) LOCALVERSION= \
		$(BINDEB_FLAGS) bindeb-pkg
	@ls $(DEB_DISTRO)/linux-*.deb

# --- the check ---------------------------------------------------------------
test-deb: deb $(INITRAMFS)
	@kernel/scripts/ensure-deps.sh test-deb
	@loader/deb/test-deb.sh $(DEB_TOOLS) $(DEB_OUT)

clean: clean-deb
clean-deb:
	rm -rf $(PKG_OUT) $(DEB_OUT)
