package jail

import (
	"os"
	"strings"

	"github.com/jail-sandbox/jail/jail/internal/spawn"
	"github.com/jail-sandbox/jail/jail/internal/tty"
	"github.com/jail-sandbox/jail/jail/internal/verbose"
	"github.com/jail-sandbox/jail/jail/internal/wire"
	"github.com/jail-sandbox/jail/plan"
)

// Early is a sandbox's init started before its plan exists (Prestart).
type Early struct {
	ns      plan.Namespaces
	stdio   tty.Stdio
	signals *subscription
	sb      *sandbox // nil when init could not start: err says why
	err     error
	done    bool // adopted or discarded
	// beforeRuntime says spawn_early.c started the init, before jail's Go runtime.
	beforeRuntime bool
	waiter        *spawn.Waiter // the process jail's caller waits for, when it is not this one
}

// Prestart starts a sandbox's init before the plan exists, so that init's start-up (a Go runtime
// in new namespaces, about 1.5 ms) overlaps the profile's loading and resolution; in the jail
// command the init usually exists already (spawn_early.c), and Prestart takes it. The plan
// decides nothing init needs to start but its namespaces, which Prestart takes to be ns. Run
// adopts the init when the Spec asks for exactly these namespaces and stdio is the same;
// otherwise it kills it, unseen (it waits for a plan, runs nothing and prints nothing), and
// starts one that fits. Call Prestart from the goroutine that then calls Run or Discard: an init
// Prestart starts itself dies with this goroutine's thread, which stays locked until then
// (launchPinned).
func Prestart(ns plan.Namespaces, stdio tty.Stdio) *Early {
	e := &Early{ns: ns, stdio: stdio, waiter: spawn.TakeWaiter()}
	if e.waiter != nil {
		// The waiter, the early init's parent, forwards jail's signals to it (waiter.c).
		e.signals = uncaught()
	} else {
		e.signals = subscribe()
	}
	if e.sb = takeEarlyInit(ns, stdio, e.signals, e.waiter); e.sb != nil {
		e.beforeRuntime = true
		return e
	}
	e.signals = e.signals.caught()
	e.sb, e.err = launchPinned(ns, stdio, e.signals)
	return e
}

// waiterOrNil returns e's waiter; nil without one. Nil-safe.
func (e *Early) waiterOrNil() *spawn.Waiter {
	if e == nil {
		return nil
	}
	return e.waiter
}

// Discard kills e's init unless Run adopted it, and stops catching signals. Nil-safe.
func (e *Early) Discard() {
	if e == nil || e.done {
		return
	}
	e.done = true
	e.sb.discard()
	e.signals.stop()
}

// adopt returns e's init (or the error it could not start with) when it fits spec and stdio, and
// the subscription catching the forwarded signals: e's, or a new one. An init that does not fit
// is killed, and sb is nil.
func (e *Early) adopt(spec *plan.Spec, stdio tty.Stdio, log verbose.Log) (sb *sandbox, signals *subscription, err error) {
	if e == nil || e.done {
		return nil, subscribe(), nil
	}
	e.done = true
	if spec.Namespaces != e.ns || stdio != e.stdio {
		log.Printf("host: the plan does not fit the init started early: starting another")
		e.sb.discard()
		e.signals = e.signals.caught()
		forwardHere(e.waiter, e.signals)
		return nil, e.signals, nil
	}
	if e.sb != nil && e.sb.proc.waiter != nil {
		e.waiter.ToInit()
	} else {
		forwardHere(e.waiter, e.signals)
	}
	_, names := wire.CloneFlags(e.ns)
	when := ""
	if e.beforeRuntime {
		when = ", before jail's own runtime"
	}
	log.Printf("host: init started early%s (namespaces %s)", when, strings.Join(names, ","))
	return e.sb, e.signals, e.err
}

// takeEarlyInit returns the init spawn_early.c started before this runtime, as a sandbox
// waiting for its plan, when it runs and fits: the namespaces ns, and stdio this process's own
// (it has descriptors 0, 1 and 2). One that does not fit is killed. It is taken once. w, when
// not nil, is init's parent, which reaps it (waiter.c).
func takeEarlyInit(ns plan.Namespaces, stdio tty.Stdio, signals *subscription, w *spawn.Waiter) *sandbox {
	early := spawn.TakeEarlyInit()
	if early.PID <= 0 {
		return nil
	}
	proc, err := newProcess(early.PID)
	if err != nil {
		early.Errs.Close()
		early.Plan.Close()
		early.Messages.Close()
		return nil
	}
	proc.waiter = w
	sb := newSandbox(proc, early.Plan, early.Messages, stdio, signals)
	flags, _ := wire.CloneFlags(ns)
	if !early.Started() || flags != early.NS || stdio != (tty.Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}) {
		sb.discard()
		return nil
	}
	return sb
}

// forwardHere tells w, once signals catches the forwarded signals, to forward them to this
// process, which passes them to an init of its own. Nil-safe.
func forwardHere(w *spawn.Waiter, signals *subscription) {
	if w != nil {
		go func() {
			signals.wait()
			w.ToHost()
		}()
	}
}
