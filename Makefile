# jail is built as one static binary: each run starts it twice (jail, then its init inside the
# namespaces), and a static binary skips the dynamic loader both times (about 0.6 ms a run);
# it also runs where libseccomp is not installed. netgo and osusergo keep glibc's NSS (which
# cannot be linked statically) out: names resolve with Go's own resolver.
GO ?= go
STATIC = -tags netgo,osusergo -ldflags '-linkmode external -extldflags -static'

bin/jail: FORCE
	$(GO) build $(STATIC) -o $@ ./cmd/jail

.PHONY: FORCE
FORCE:
