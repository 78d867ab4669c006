# rules for packaging/ (see the top Makefile): `make install` and
# `make uninstall`, with PREFIX (default /usr/local) and DESTDIR (a staging
# root prepended to every path, for packagers). Installs:
#   $(PREFIX)/include/scopeprof.h                        the library
#   $(PREFIX)/bin/scopeprof                              the reporter
#   $(PREFIX)/lib/pkgconfig/scopeprof.pc                 pkg-config
#   $(PREFIX)/lib/cmake/scopeprof/scopeprofConfig*.cmake find_package(scopeprof)
#   $(PREFIX)/share/man/man1/scopeprof.1, man3/scopeprof.3
# The pkg-config and CMake files are made from packaging/*.in with PREFIX
# and the header's version written in.
PREFIX  ?= /usr/local
DESTDIR ?=
SP_VERSION := $(shell sed -n 's/^\#define SCOPEPROF_VERSION_STRING "\(.*\)"/\1/p' $(HEADER))
PKG_B := $(BUILD)/packaging
INSTALL_FILES := include/scopeprof.h bin/scopeprof lib/pkgconfig/scopeprof.pc \
  lib/cmake/scopeprof/scopeprofConfig.cmake lib/cmake/scopeprof/scopeprofConfigVersion.cmake \
  share/man/man1/scopeprof.1 share/man/man3/scopeprof.3

# Rebuilt on every install: PREFIX may differ from the last one.
.PHONY: install uninstall $(PKG_B)/scopeprof.pc
$(PKG_B)/scopeprof.pc: packaging/scopeprof.pc.in $(HEADER)
	@mkdir -p $(@D)
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(SP_VERSION)|g' $< >$@

$(PKG_B)/scopeprofConfigVersion.cmake: packaging/scopeprofConfigVersion.cmake.in $(HEADER)
	@mkdir -p $(@D)
	sed -e 's|@VERSION@|$(SP_VERSION)|g' $< >$@

install: $(BUILD)/scopeprof $(PKG_B)/scopeprof.pc $(PKG_B)/scopeprofConfigVersion.cmake
	install -d '$(DESTDIR)$(PREFIX)/include' '$(DESTDIR)$(PREFIX)/bin' \
	  '$(DESTDIR)$(PREFIX)/lib/pkgconfig' '$(DESTDIR)$(PREFIX)/lib/cmake/scopeprof' \
	  '$(DESTDIR)$(PREFIX)/share/man/man1' '$(DESTDIR)$(PREFIX)/share/man/man3'
	install -m 644 $(HEADER) '$(DESTDIR)$(PREFIX)/include/scopeprof.h'
	install -m 755 $(BUILD)/scopeprof '$(DESTDIR)$(PREFIX)/bin/scopeprof'
	install -m 644 $(PKG_B)/scopeprof.pc '$(DESTDIR)$(PREFIX)/lib/pkgconfig/scopeprof.pc'
	install -m 644 packaging/scopeprofConfig.cmake $(PKG_B)/scopeprofConfigVersion.cmake \
	  '$(DESTDIR)$(PREFIX)/lib/cmake/scopeprof/'
	install -m 644 packaging/scopeprof.1 '$(DESTDIR)$(PREFIX)/share/man/man1/scopeprof.1'
	install -m 644 packaging/scopeprof.3 '$(DESTDIR)$(PREFIX)/share/man/man3/scopeprof.3'

# Removes exactly what install put there, then the cmake folder if empty.
uninstall:
	rm -f $(addprefix '$(DESTDIR)$(PREFIX)/,$(addsuffix ',$(INSTALL_FILES)))
	-rmdir '$(DESTDIR)$(PREFIX)/lib/cmake/scopeprof' 2>/dev/null
