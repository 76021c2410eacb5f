package landlock

import "fmt"

// feature is one thing jail asks of Landlock, with the ABI (and Linux release) that brought it.
type feature struct {
	name   string
	abi    int
	linux  string
	wanted func(Config) bool
}

func always(Config) bool { return true }

// features lists what jail uses, in ABI order. Rights go-landlock knows beyond these (pathname
// unix sockets, ABI 9) are applied when the kernel has them but are not promised.
var features = []feature{
	{"filesystem", 1, "5.13", always},
	{"refer", 2, "5.19", always},
	{"truncate", 3, "6.2", always},
	{"tcp", 4, "6.7", func(c Config) bool { return c.RestrictTCP }},
	{"ioctl_dev", 5, "6.10", always},
	{"scope", 6, "6.12", func(c Config) bool { return c.Scope }},
}

// missing names the features c needs that a kernel with Landlock ABI abi lacks.
func missing(c Config, abi int) []string {
	var out []string
	for _, f := range features {
		if f.wanted(c) && f.abi > abi {
			out = append(out, fmt.Sprintf("%s (ABI %d, Linux %s)", f.name, f.abi, f.linux))
		}
	}
	return out
}

// Missing names the features c needs that the running kernel's Landlock lacks (what
// best-effort mode would leave out), e.g. for `jail doctor`.
func Missing(c Config) []string {
	return missing(c, ABI())
}
