# jail is built as one static binary: each run starts it twice (jail, then its init inside the
# namespaces), and a static binary skips the dynamic loader both times (about 0.6 ms a run);
# it also runs where libseccomp is not installed. netgo and osusergo keep glibc's NSS (which
# cannot be linked statically) out: names resolve with Go's own resolver.
#
# -s -w leave the symbol table and DWARF out: 2.2 MB of 7.7 (Go's own stack traces keep their
# function names and lines). A run reads from disk whatever of the binary the page cache has
# dropped since the last one, which on this project's VMs it does after a minute unused: a run
# whose binary had been dropped entirely took ~1 ms less with it 28% smaller. SYMBOLS=1 keeps
# them, for perf and gdb.
#
# The linker writes the binary in small pieces, and the page cache keeps it that way until the
# file is dropped and read again: run from those pages, jail took 0.15 ms longer to start and
# 0.1 ms longer to exit than the same binary copied (interleaved A/B of 300 runs each; evicting
# and re-reading the linked file closed the gap). An installed binary (cp, install, a package)
# or one read back from disk is not affected; make copies the linked binary into place so that
# what it builds runs, and measures, as an installed one does.
GO ?= go
# go.mod asks for Go 1.26.8: any Go >= 1.21 fetches that toolchain through the module proxy when
# it is older (GOTOOLCHAIN=auto, Go's own default, which some distributions' go.env turn off).
# GOTOOLCHAIN=local in the environment refuses instead.
export GOTOOLCHAIN ?= auto
STRIP = $(if $(SYMBOLS),,-s -w)
STATIC = -tags netgo,osusergo -ldflags '$(STRIP) -linkmode external -extldflags -static'

# Go 1.26's default collector (Green Tea) writes each new small-object span's mark bits at the
# span's end, so a fresh process faults in a second page of nearly every span it starts: jail's
# two short-lived Go processes take 17-19% fewer page faults a run with Go 1.25's collector
# (853 -> 711 in an empty directory, 1,140 -> 919 in a 4,574-file repository) and 0.1-0.2 ms less
# CPU; neither collects garbage during a start. The opt-out exists in Go 1.26 only, so it is asked
# for there and nowhere else (an explicit GOEXPERIMENT in the environment wins).
GOEXPERIMENT ?= $(if $(filter go1.26%,$(shell $(GO) env GOVERSION)),nogreenteagc)
export GOEXPERIMENT

bin/jail: FORCE
	$(GO) build $(STATIC) -o $@.linked ./cmd/jail
	cp $@.linked $@.new && mv $@.new $@ && rm $@.linked

# jail-e2b is the E2B-compatible endpoint `jail serve --e2b` runs (docs/e2b.md), a program of
# its own: net/http, Connect and protobuf would add 0.35 ms of Go package initialisation and 3 MB
# to each of jail's two starts a run. It is built as jail is (jail's error types reach libseccomp).
bin/jail-e2b: FORCE
	$(GO) build $(STATIC) -o $@.new ./cmd/jail-e2b && mv $@.new $@

.PHONY: FORCE
FORCE:

# make check runs the static checks: go vet, staticcheck, gofmt, and the C compiled with every
# warning an error (cgo builds it without -Wall). staticcheck comes from
# `go install honnef.co/go/tools/cmd/staticcheck@v0.8.2` (STATICCHECK names another one).
STATICCHECK ?= staticcheck
CC ?= cc

check:
	$(GO) vet ./...
	$(STATICCHECK) ./...
	@unformatted=$$(gofmt -l .); if [ -n "$$unformatted" ]; then echo "gofmt -l:"; echo "$$unformatted"; exit 1; fi
	@for f in jail/internal/spawn/*.c; do \
		echo "$(CC) -std=gnu11 -O2 -Wall -Wextra -Werror -c $$f"; \
		$(CC) -std=gnu11 -O2 -Wall -Wextra -Werror -c -o /dev/null $$f || exit 1; \
	done

.PHONY: check

# make install puts jail, jail-e2b beside it, and the shell shim's links (jail-sh, jail-bash: the
# shim reads its link name) into $(DESTDIR)$(PREFIX)/bin. It installs the binaries that make
# built, building one only when there is none, so that `make && sudo make install` builds as the
# user, not root.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
SHIMS = jail-sh jail-bash

install: $(if $(wildcard bin/jail),,bin/jail) $(if $(wildcard bin/jail-e2b),,bin/jail-e2b)
	install -d $(DESTDIR)$(BINDIR)
	install -m 755 bin/jail bin/jail-e2b $(DESTDIR)$(BINDIR)/
	for shim in $(SHIMS); do ln -sfn jail $(DESTDIR)$(BINDIR)/$$shim || exit 1; done

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/jail $(DESTDIR)$(BINDIR)/jail-e2b $(addprefix $(DESTDIR)$(BINDIR)/,$(SHIMS))

.PHONY: install uninstall
