package seccomp

import (
	"fmt"
	"slices"
	"syscall"

	libseccomp "github.com/seccomp/libseccomp-golang"
)

// build makes the libseccomp filter for the policy. The caller releases it.
func build(p Policy) (*libseccomp.ScmpFilter, error) {
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
	deny := actErrno(errno)
	if p.Log {
		deny = libseccomp.ActLog
	}
	def := libseccomp.ActAllow
	if mode == ModeDeny {
		def = actErrno(syscall.ENOSYS)
	}
	prog, err := libseccomp.NewFilter(def)
	if err != nil {
		return nil, fmt.Errorf("seccomp filter: %w", err)
	}
	if err := configure(prog); err != nil {
		prog.Release()
		return nil, err
	}
	if err := addRules(prog, p, mode, deny); err != nil {
		prog.Release()
		return nil, err
	}
	return prog, nil
}

// configure sets the filter attributes: foreign architectures are killed, the program is a
// binary tree, and libseccomp does not set no_new_privs or TSYNC itself (Install does the
// former, and the latter is deliberately not wanted).
func configure(prog *libseccomp.ScmpFilter) error {
	if err := prog.SetBadArchAction(libseccomp.ActKillProcess); err != nil {
		return fmt.Errorf("seccomp bad-arch action: %w", err)
	}
	if err := prog.SetNoNewPrivsBit(false); err != nil {
		return fmt.Errorf("seccomp no_new_privs attribute: %w", err)
	}
	if err := prog.SetOptimize(2); err != nil {
		return fmt.Errorf("seccomp binary-tree optimisation: %w", err)
	}
	return nil
}

// addRules adds the policy's rules to prog.
func addRules(prog *libseccomp.ScmpFilter, p Policy, mode string, deny libseccomp.ScmpAction) error {
	if mode == ModeDeny {
		return addAllowList(prog, p, deny)
	}
	for _, name := range denyListNames(p) {
		if err := addRule(prog, name, deny); err != nil {
			return err
		}
	}
	for _, name := range enosysCalls {
		if !slices.Contains(p.Allow, name) && !slices.Contains(p.Deny, name) {
			if err := addRule(prog, name, actErrno(syscall.ENOSYS)); err != nil {
				return err
			}
		}
	}
	return nil
}

// denyListNames returns the unconditionally denied names of the deny-list mode: the built-in set
// plus Deny, minus Allow (Deny wins where a name is in both).
func denyListNames(p Policy) []string {
	var names []string
	for _, name := range defaultDeny {
		if !slices.Contains(p.Allow, name) {
			names = append(names, name)
		}
	}
	for _, name := range p.Deny {
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names
}

// addAllowList adds the allow-list mode's rules: the filter's default action is ENOSYS (so a
// syscall newer than this table fails the way an old kernel would and libc falls back), every
// known syscall that is not allowed fails with the policy's errno.
func addAllowList(prog *libseccomp.ScmpFilter, p Policy, deny libseccomp.ScmpAction) error {
	for _, name := range Names() {
		allowed := slices.Contains(p.Allow, name) && !slices.Contains(p.Deny, name)
		act := deny
		if allowed {
			act = libseccomp.ActAllow
		}
		if err := addRule(prog, name, act); err != nil {
			return err
		}
	}
	return nil
}

// addRule adds an unconditional rule for the named native syscall.
func addRule(prog *libseccomp.ScmpFilter, name string, act libseccomp.ScmpAction) error {
	nr, ok := native()[name]
	if !ok {
		return unknownError(name)
	}
	if err := prog.AddRuleExact(libseccomp.ScmpSyscall(nr), act); err != nil {
		return fmt.Errorf("seccomp rule %s: %w", name, err)
	}
	return nil
}

// actErrno is the action "fail with errno".
func actErrno(errno syscall.Errno) libseccomp.ScmpAction {
	return libseccomp.ActErrno.SetReturnCode(int16(errno))
}

// unknownError names an unknown syscall with a suggestion.
func unknownError(name string) error {
	if s := Suggest(name); s != "" {
		return fmt.Errorf("unknown syscall %q (did you mean %q?)", name, s)
	}
	return fmt.Errorf("unknown syscall %q", name)
}
