package jail

import (
	"github.com/jail-sandbox/jail/jail/internal/restrict"
	"github.com/jail-sandbox/jail/plan"
	"github.com/jail-sandbox/jail/seccomp"
)

// SeccompPolicy is the plan's [syscalls] as seccomp's Policy, as the sandbox installs it (for
// `jail seccomp export` and `jail profile show`).
func SeccompPolicy(spec *plan.Spec) seccomp.Policy {
	return restrict.SeccompPolicy(spec)
}
