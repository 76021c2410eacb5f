package seccomp

import (
	"slices"

	"golang.org/x/sys/unix"
)

// Summary is the effective syscall policy in words, for `jail profile show`.
type Summary struct {
	// Mode is "allow" (deny-list), "deny" (allow-list) or "off" (no filter).
	Mode string `json:"mode"`
	// Action is what a denied call gets: "errno EPERM" or "log (allowed, logged)".
	Action string `json:"action"`
	// Denied are the syscalls denied outright (in allow-list mode: every known syscall not
	// allowed, which is long).
	Denied []string `json:"denied"`
	// ENOSYS are the syscalls answered with ENOSYS so libc falls back.
	ENOSYS []string `json:"enosys,omitempty"`
	// Checks are the allowed syscalls denied for some argument values.
	Checks []Check `json:"checks,omitempty"`
	// Widened are the built-in denials or checks the policy's Allow removes: `profile show`
	// should say these widen the sandbox. In the allow-list mode that is a built-in denial
	// listed in Allow (clone3 above all: allowing it skips the CLONE_NEW* check on clone).
	Widened []string `json:"widened,omitempty"`
	// ForeignArch is what a syscall of another architecture (i386, x32) gets.
	ForeignArch string `json:"foreign_arch"`
}

// Check is one argument check.
type Check struct {
	Syscall string `json:"syscall"`
	Denies  string `json:"denies"`
}

// Describe works out the policy exactly as Compile does and returns it in words.
// With Default "off" it says there is no filter.
func Describe(p Policy) (Summary, error) {
	if p.Default == ModeOff {
		return Summary{Mode: ModeOff, Action: "none: no seccomp filter (widens the sandbox)", ForeignArch: "allowed"}, nil
	}
	pl, err := newPlan(p)
	if err != nil {
		return Summary{}, err
	}
	s := Summary{
		Mode:        pl.mode,
		Action:      "errno " + unix.ErrnoName(pl.errno),
		Denied:      slices.Sorted(slices.Values(pl.denied)),
		ENOSYS:      pl.enosys,
		ForeignArch: "kill process",
	}
	if pl.log {
		s.Action = "log (allowed, logged by the kernel)"
	}
	for _, c := range pl.checks {
		s.Checks = append(s.Checks, Check{Syscall: c.name, Denies: c.why})
	}
	for _, name := range p.Allow {
		builtin := slices.Contains(defaultDeny, name) || slices.Contains(enosysCalls, name) ||
			pl.mode == ModeAllow && slices.ContainsFunc(argChecks(false), func(c argCheck) bool { return c.name == name })
		if builtin && !slices.Contains(p.Deny, name) {
			s.Widened = append(s.Widened, name)
		}
	}
	return s, nil
}
