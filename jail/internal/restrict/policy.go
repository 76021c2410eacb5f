package restrict

import (
	"github.com/jail-sandbox/jail/jail/internal/verbose"
	"github.com/jail-sandbox/jail/landlock"
	"github.com/jail-sandbox/jail/plan"
	"github.com/jail-sandbox/jail/seccomp"
)

// LandlockConfig is the Spec's Landlock part: the filesystem grants as the sandbox sees them,
// TCP ports when the sandbox shares the host's network, and scoped signals and abstract sockets.
func LandlockConfig(spec *plan.Spec) landlock.Config {
	net := spec.Network
	return landlock.Config{
		Mode:        spec.Landlock.Mode,
		Read:        spec.Landlock.Read,
		Write:       spec.Landlock.Write,
		List:        spec.Landlock.List,
		Truncate:    spec.Landlock.Truncate,
		TCPConnect:  net.TCPConnect,
		TCPBind:     net.TCPBind,
		RestrictTCP: RestrictsTCP(spec),
		Scope:       true,
	}
}

// RestrictsTCP reports whether Landlock TCP rules are in force: only on the host's network, and
// only when the profile lists ports (in a network namespace of its own there is nothing to reach).
func RestrictsTCP(spec *plan.Spec) bool {
	net := spec.Network
	return spec.Landlock.Mode != landlock.ModeOff && net.Mode == "host" &&
		(len(net.TCPConnect) > 0 || len(net.TCPBind) > 0)
}

// SeccompPolicy is the Spec's [syscalls] as seccomp's Policy. MPTCP is blocked where Landlock's
// TCP rules hold, since they do not cover it. Exported for `jail seccomp export`.
func SeccompPolicy(spec *plan.Spec) seccomp.Policy {
	s := spec.Syscalls
	return seccomp.Policy{
		Default:    s.Default,
		Deny:       s.Deny,
		Allow:      s.Allow,
		Errno:      s.Errno,
		Log:        s.Log,
		BlockMPTCP: RestrictsTCP(spec),
	}
}

// CompileSeccomp compiles the Spec's filter in the host, so the sandbox only loads it. A profile
// that turns the filter off (syscalls.default = "off", shown as widening by `profile show`)
// gets no program.
func CompileSeccomp(spec *plan.Spec) ([]byte, error) {
	if spec.Syscalls.Default == seccomp.ModeOff {
		return nil, nil
	}
	f, err := seccomp.Compile(SeccompPolicy(spec))
	if err != nil {
		return nil, err
	}
	return f.BPF(), nil
}

// InstallSeccomp loads the program compiled by CompileSeccomp on the calling thread; with the
// filter turned off there is none, which -v says.
func InstallSeccomp(bpf []byte, log verbose.Log) error {
	if bpf == nil {
		log.Printf("init: no seccomp filter (syscalls.default = \"off\")")
		return nil
	}
	return seccomp.Install(bpf)
}
