package seccomp

import (
	"slices"
	"syscall"
)

// plan is a policy worked out into the rules the filter will hold; Compile builds it and
// Describe prints it, so what `profile show` says is what the filter does.
type plan struct {
	mode   string
	errno  syscall.Errno
	log    bool
	denied []string   // unconditionally denied (errno, or RET_LOG when logging)
	enosys []string   // answered with ENOSYS
	checks []argCheck // argument checks on syscalls that stay allowed
}

// newPlan validates p and works out its rules.
//
// Deny-list mode: denied = built-in set + Deny − Allow; an argument check applies unless its
// syscall is denied outright or named in Allow (which lifts it; BlockMPTCP's check stays).
// Allow-list mode: denied = every known syscall − Allow − the ENOSYS calls + Deny; argument
// checks apply to the allowed syscalls (naming one in Allow is how it is allowed at all).
// Either mode: Deny wins over Allow, and clone3 answers ENOSYS unless named in a list.
func newPlan(p Policy) (*plan, error) {
	mode, err := p.mode()
	if err != nil {
		return nil, err
	}
	errno, err := p.errno()
	if err != nil {
		return nil, err
	}
	for _, name := range slices.Concat(p.Deny, p.Allow) {
		if !Known(name) {
			return nil, unknownError(name)
		}
	}
	pl := &plan{mode: mode, errno: errno, log: p.Log}
	for _, name := range enosysCalls {
		if !slices.Contains(p.Allow, name) && !slices.Contains(p.Deny, name) {
			pl.enosys = append(pl.enosys, name)
		}
	}
	base := defaultDeny
	if mode == ModeDeny {
		base = Names()
	}
	for _, name := range base {
		if !slices.Contains(p.Allow, name) && !slices.Contains(pl.enosys, name) {
			pl.denied = append(pl.denied, name)
		}
	}
	for _, name := range p.Deny {
		if !slices.Contains(pl.denied, name) {
			pl.denied = append(pl.denied, name)
		}
	}
	for _, check := range argChecks(p.BlockMPTCP) {
		lifted := mode == ModeAllow && !check.always && slices.Contains(p.Allow, check.name)
		if !lifted && !slices.Contains(pl.denied, check.name) {
			pl.checks = append(pl.checks, check)
		}
	}
	return pl, nil
}
