package seccomp

import (
	"fmt"
	"syscall"

	libseccomp "github.com/seccomp/libseccomp-golang"
)

// build makes the libseccomp filter for the plan. The caller releases it.
//
// Both modes build the same shape: default ALLOW, an unconditional deny rule per denied
// syscall, the argument checks for the syscalls that stay allowed, and ENOSYS for clone3.
// (libseccomp drops conditional rules for a syscall that also has an unconditional one, and
// refuses rules whose action is the default, so "deny these argument values, allow the rest"
// only works with ALLOW as the default.) The allow-list mode denies every known syscall it does
// not allow; syscalls newer than the table are answered by enosysPrefix.
func build(pl *plan) (*libseccomp.ScmpFilter, error) {
	prog, err := libseccomp.NewFilter(libseccomp.ActAllow)
	if err != nil {
		return nil, fmt.Errorf("seccomp filter: %w", err)
	}
	if err := configure(prog); err != nil {
		prog.Release()
		return nil, err
	}
	if err := addRules(prog, pl); err != nil {
		prog.Release()
		return nil, err
	}
	return prog, nil
}

// configure sets the filter attributes: foreign architectures (i386, x32) are killed, the
// program is a binary tree sorted by syscall number where libseccomp can make one, and
// libseccomp sets neither no_new_privs nor TSYNC (it never loads this filter; Install does).
func configure(prog *libseccomp.ScmpFilter) error {
	if err := prog.SetBadArchAction(libseccomp.ActKillProcess); err != nil {
		return fmt.Errorf("seccomp bad-arch action: %w", err)
	}
	if err := prog.SetNoNewPrivsBit(false); err != nil {
		return fmt.Errorf("seccomp no_new_privs attribute: %w", err)
	}
	// Best effort: libseccomp before 2.5 has no binary tree and emits a linear program, which
	// is correct but walks every rule before allowing an unlisted call. On Linux >= 5.11 the
	// kernel's action cache skips the filter for such calls anyway.
	_ = prog.SetOptimize(2)
	return nil
}

// addRules adds the plan's rules to prog.
func addRules(prog *libseccomp.ScmpFilter, pl *plan) error {
	deny := actErrno(pl.errno)
	if pl.log {
		deny = libseccomp.ActLog
	}
	for _, name := range pl.denied {
		if err := addRule(prog, name, deny); err != nil {
			return err
		}
	}
	for _, name := range pl.enosys {
		if err := addRule(prog, name, actErrno(syscall.ENOSYS)); err != nil {
			return err
		}
	}
	for _, check := range pl.checks {
		if err := addArgCheck(prog, check, deny); err != nil {
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
