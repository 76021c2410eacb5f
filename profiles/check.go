package profiles

import "github.com/jail-sandbox/jail/plan"

// Check finds every problem with the profile ref that a run would meet, in one call, for `jail
// profile check`: what does not load (in the files it extends too) and what does not resolve on
// this host, as one *Error or an ErrorList. A file with unknown keys or values of the wrong type
// is checked further with what it has left. Without an error it returns the plan, for its
// warnings.
func Check(ref string, host Host) (*plan.Spec, error) {
	l := &loader{host: host, keepGoing: true}
	p, err := l.load(ref, host.Cwd)
	if err != nil {
		l.errs.add(err)
		return nil, l.errs.err()
	}
	spec, err := Resolve(p, host, []string{"true"})
	if l.errs.add(err); len(l.errs) > 0 {
		return nil, l.errs.err()
	}
	return spec, nil
}
