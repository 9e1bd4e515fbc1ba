# Debian packages (loader/README.md, "The packages"), included from the top
# Makefile.
#   make deb                the collapse-ext source package and its binary,
#                           build/deb/collapse-ext-tools_VERSION_ARCH.deb, and
#                           the kernel of build/BASE/kobj's config as
#                           build/BASE/deb/linux-image-KVER_*.deb (+ linux-libc-dev)
#   make deb-kernel-distro  the kernel with Debian's config of its base + collapse_ext,
#                           packaged in build/BASE/deb-distro/ (hours on 2 cores)
#   make test-deb           lintian, install, man pages, unit, and boot the
#                           packaged kernel under QEMU (loader/deb/test-deb.sh)
DEB_OUT   := $(BUILD)/deb
# The tools are the same for every base: one source package, build/deb/.
DEB_TOOLS_OUT := $(ROOT)/build/deb

.PHONY: deb deb-tools deb-kernel deb-kernel-distro test-deb clean-deb

deb: deb-tools deb-kernel

# --- collapse-ext-tools ------------------------------------------------------
# The Debian source package (loader/deb/debian/, version from git) built
# with dpkg-buildpackage: `make tools` in a copy of the tree, no kernel
# (loader/deb/build-source.sh). Always run: dpkg-buildpackage builds from
# a clean tree (about a minute).
deb-tools: | $(BUILD)/.deps
	@mkdir -p $(DEB_TOOLS_OUT)
	@loader/deb/build-source.sh $(DEB_TOOLS_OUT) > $(DEB_TOOLS_OUT).path.tmp || \
		{ rm -f $(DEB_TOOLS_OUT).path.tmp; exit 1; }
	@mv $(DEB_TOOLS_OUT).path.tmp $(DEB_TOOLS_OUT).path
	@echo "deb: $$(cat $(DEB_TOOLS_OUT).path)"

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
	       DEBFULLNAME="collapse_ext developers" DEBEMAIL=collapse-ext@packages.invalid
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
	@loader/deb/test-deb.sh $$(cat $(DEB_TOOLS_OUT).path) $(DEB_OUT)

clean: clean-deb
clean-deb:
	rm -rf $(DEB_OUT) $(DEB_TOOLS_OUT) $(DEB_TOOLS_OUT).path
