package jail

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jail-sandbox/jail/jail/internal/fail"
	"github.com/jail-sandbox/jail/jail/internal/placeholder"
	"github.com/jail-sandbox/jail/jail/internal/restrict"
	"github.com/jail-sandbox/jail/jail/internal/spawn"
	"github.com/jail-sandbox/jail/jail/internal/tty"
	"github.com/jail-sandbox/jail/jail/internal/userns"
	"github.com/jail-sandbox/jail/jail/internal/verbose"
	"github.com/jail-sandbox/jail/jail/internal/wire"
	"github.com/jail-sandbox/jail/plan"
)

// forwardedSignals are passed on to the command: by the host to init, by init to the command.
var forwardedSignals = []os.Signal{
	syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT,
	syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH,
}

// Stdio are the descriptors the command gets as 0, 1 and 2 (nil: /dev/null).
type Stdio = tty.Stdio

// Options change what jail says about a run, never the sandbox: the plan alone decides that, and
// the options travel beside it.
type Options struct {
	Verbose bool // log each setup step on stderr, timed from jail's start (-v)
	Quiet   bool // (-q) no notices from jail itself (the egress proxy's denials and its exit report, a kept hostname) but what weakens the sandbox, each in one line
	Explain bool // after the command, explain each write or connect the sandbox refused (--explain)
}

// log is -v's log for a run with these options, counting from jail's start.
func (o Options) log() verbose.Log {
	return verbose.New(o.Verbose, spawn.Started)
}

// Run runs spec's command in a new sandbox and waits for it. status is the command's exit status,
// 128+N when it died of signal N, or ExitTimeout when Spec.Limits.TimeoutSeconds expired. err is
// an *Error when jail itself failed (its Exit is the status to exit with).
func Run(spec *plan.Spec, opts Options, stdio Stdio) (status int, err error) {
	return (*Early)(nil).Run(spec, opts, stdio)
}

// Run is Run with e's init, when it fits spec.
func (e *Early) Run(spec *plan.Spec, opts Options, stdio Stdio) (status int, err error) {
	return runObserved(spec, stdio, &observer{spec: spec, opts: opts}, e)
}

// runObserved is Run, followed by obs (report.go).
func runObserved(spec *plan.Spec, stdio tty.Stdio, obs *observer, early *Early) (status int, err error) {
	if len(spec.Argv) == 0 {
		early.Discard()
		return fail.ExitSetup, &fail.Error{Op: "run", Detail: "no command given", Exit: fail.ExitSetup}
	}
	if err := makeCaches(spec); err != nil { // caches.go
		early.Discard()
		return fail.ExitSetup, err
	}
	status, err = runSandbox(spec, stdio, obs, early)
	if userNSRefused(err, userns.RefusesSteps) && spec.Fallback == "landlock" {
		obs.log().Printf("host: user namespaces refused (%s); falling back to Landlock", err)
		return runFallback(spec, stdio, obs, early.waiterOrNil(), err)
	}
	return status, err
}

// runSandbox runs the command in namespaces: starts init (or adopts early's), sends it the plan,
// waits.
func runSandbox(spec *plan.Spec, stdio tty.Stdio, obs *observer, early *Early) (int, error) {
	// Signals are caught from here on (or since Prestart), in the background while init starts;
	// letStart waits for them before it lets init start the command.
	sb, signals, err := early.adopt(spec, stdio, obs.log())
	if err != nil {
		signals.stop()
		return fail.ExitSetup, err
	}
	var shed shedder
	eg, err := startEgress(spec, obs.opts, stdio.Err, shed.soon) // egress.go; nil unless network mode "proxy"
	if err != nil {
		sb.discard()
		signals.stop()
		return fail.ExitSetup, err
	}
	defer func() { obs.egressClosed(eg.close(stdio.Err)) }()
	gc, err := startGitCommit(spec, obs.opts) // gitcommit.go; nil unless git commit mode
	if err != nil {
		sb.discard()
		signals.stop()
		return fail.ExitSetup, err
	}
	defer gc.close()
	if sb == nil {
		_, names := wire.CloneFlags(spec.Namespaces)
		obs.log().Printf("host: starting init (namespaces %s)", strings.Join(names, ","))
		if sb, err = launchPinned(spec.Namespaces, stdio, signals); err != nil {
			signals.stop()
			return fail.ExitSetup, err
		}
	}
	defer sb.unpin()
	sb.begin(spec, obs)
	stderr := cmp.Or(stdio.Err, os.Stderr)
	// Compiling the filter takes a millisecond or two: do it while init's runtime starts up.
	bpf, err := restrict.CompileSeccomp(spec)
	if err != nil {
		sb.abort()
		return fail.ExitSetup, fail.New("compile seccomp filter", "", err)
	}
	sb.sendPlan(bpf, eg.sandboxEnd())
	eg.sent()
	// The placeholders the protections sit on exist from here on, held until the sandbox is gone
	// (package placeholder): released after sb.wait, or by jail's waiter once it has reaped init.
	// init builds the root meanwhile, up to the first mount on one, which waits for letStart.
	held, err := placeholder.Take(spec.Mounts)
	if err != nil {
		sb.abort() // init made nothing outside its namespaces, which go with it
		return fail.ExitSetup, fail.New("protect", "", err)
	}
	defer held.Release()
	aud := startAudit(spec) // audit.go: after the placeholders, which move their directories' ctimes
	leaves := eg == nil && gc == nil && sb.canLeave() && len(held.Files()) <= spawn.MaxHandOverFiles
	sb.letStart(leaves, aud.walk)
	if leaves {
		obs.log().Printf("host: jail's waiter takes the sandbox from here")
		sb.proc.waiter.HandOver(sb.deadline, timeoutError(spec), aud.file(stderr), held.Files()) // exits
	}
	spawn.RestoreProcs() // the host stays for the run: the Ps its runtime booted without (spawn/boot.c)
	aud.stow()           // the host waits for the run's end: the baseline need not be in its heap until then
	shed.soon()
	status, err := sb.wait()
	shed.stop()
	obs.unseenWrites(aud.end(stderr)) // before the placeholders go, which moves their directories' ctimes
	gc.finish(stdio.Err)              // init is gone, and its pid namespace with it
	return status, err
}

// abort kills an init whose command never started (it got no plan, or the placeholders its
// protections sit on could not be made) and waits for it: the run failed before the command.
func (sb *sandbox) abort() {
	sb.proc.signal(syscall.SIGKILL)
	sb.plan.Close()
	sb.wait()
}

// canLeave says the host can leave the sandbox to jail's waiter once it has sent the plan: the
// waiter is init's parent (spawn.Waiter), and nothing is left for the host to do that the waiter
// cannot (enforce the timeout). There is no terminal to restore, report or status record to
// write, or fallback to run if init finds user namespaces refused (nor an egress proxy to
// serve: the caller checks), and jail does not run under a seccomp filter already (a
// container's, an agent harness's sandbox), where init's setup may well be refused: only the
// host can name the cause, since init has neither the caller's environment nor its /proc. init
// then prints its own error, if it has one (wire.Made.HostLeaves). Nor does it leave an
// overlay workspace: the caller finishes the change set once the sandbox has ended (package
// workspace), and holds its lock until then.
func (sb *sandbox) canLeave() bool {
	return sb.proc.waiter != nil && sb.term == nil && !sb.obs.follows && sb.spec.Fallback != "landlock" &&
		!slices.ContainsFunc(sb.spec.Mounts, func(m plan.Mount) bool { return m.Kind == plan.MountOverlay }) &&
		!userns.UnderSeccomp()
}

// sandbox is a started init seen from the host.
type sandbox struct {
	spec     *plan.Spec
	proc     *process            // init, or the fallback's command
	plan     *os.File            // the host's end of wire.ConfigFd's socket, closed once the plan is sent and signals caught
	messages *os.File            // read end of wire.ReportFd's pipe, read from begin on (messages.go)
	report   chan []byte         // what init wrote to wire.ReportFd, complete once init has exited
	tty      *tty.Relay          // the fallback's pseudo-terminal, relayed by jail itself; nil in a sandbox
	term     *tty.CallerTerminal // the caller's terminal, when init gives the command a pseudo-terminal
	signals  *subscription
	timer    *time.Timer
	deadline time.Time // when timer fires
	timedOut atomic.Bool
	obs      *observer // what --report and --json-status-fd need to know
	pinned   bool      // init dies with this goroutine's thread, locked until init is gone (launchPinned)
}

// launchPinned is launchInit from a goroutine that stays on its thread until init is gone.
//
// init dies with the thread that started it (Pdeathsig). spawn_early.c starts it from the main
// thread before Go's runtime exists, and Go never ends that thread; launchInit starts it from
// the calling goroutine's thread, which must then outlive it. Go ends a thread when a goroutine
// locked to it exits; holding the lock keeps every other goroutine off this one. Only this case
// locks: a locked goroutine hands its thread back and forth each time it blocks, and the
// runtime starts other threads to run the rest meanwhile.
func launchPinned(ns plan.Namespaces, stdio tty.Stdio, signals *subscription) (*sandbox, error) {
	runtime.LockOSThread()
	sb, err := launchInit(ns, stdio, signals)
	if err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	sb.pinned = true
	return sb, nil
}

// unpin lets the goroutine that started sb's init off its thread, once init is gone. Nil-safe
// and idempotent.
func (sb *sandbox) unpin() {
	if sb != nil && sb.pinned {
		sb.pinned = false
		runtime.UnlockOSThread()
	}
}

// launchInit starts init in the namespaces ns, where it waits for its plan (sendPlan). It needs
// nothing else from the plan, so it can start before the plan exists (Prestart).
func launchInit(ns plan.Namespaces, stdio tty.Stdio, signals *subscription) (*sandbox, error) {
	cfgW, cfgR, err := wire.Channel()
	if err != nil {
		return nil, fail.New("socketpair", "", err)
	}
	defer cfgR.Close()
	repR, repW, err := os.Pipe()
	if err != nil {
		cfgW.Close()
		return nil, fail.New("pipe", "", err)
	}
	defer repW.Close()
	given := stdio
	if stdio, err = openNullStdio(stdio); err != nil {
		cfgW.Close()
		repR.Close()
		return nil, fail.New("open", os.DevNull, err)
	}
	defer closeOpened(given, stdio)

	flags, _ := wire.CloneFlags(ns)
	pid, err := spawn.Init(flags, [5]*os.File{stdio.In, stdio.Out, stdio.Err, cfgR, repW}) // 0, 1, 2, wire.ConfigFd, wire.ReportFd
	var proc *process
	if err == nil {
		proc, err = newProcess(pid)
	}
	if err != nil {
		cfgW.Close()
		repR.Close()
		return nil, startError(err)
	}
	wire.SendNamespaces(cfgW, flags) // spawn_early.c sends them too
	return newSandbox(proc, cfgW, repR, stdio, signals), nil
}

// newSandbox is a started init as the host holds it: the write end of its plan's pipe, the read
// end of its messages' pipe, and the caller's terminal when the command is to get a
// pseudo-terminal (init sets the terminal raw; jail restores it even if init is killed).
func newSandbox(proc *process, plan, messages *os.File, stdio tty.Stdio, signals *subscription) *sandbox {
	sb := &sandbox{proc: proc, plan: plan, messages: messages, report: make(chan []byte, 1), signals: signals}
	if tty.Interactive(stdio) {
		sb.term = tty.SaveTerminal(stdio.In)
	}
	return sb
}

// begin makes sb the sandbox of spec: it reads init's messages for obs, forwards the signals
// caught and enforces the timeout.
func (sb *sandbox) begin(spec *plan.Spec, obs *observer) {
	sb.spec = spec
	obs.watch(sb, nil)
	go sb.readInit(sb.messages) // messages.go
	if d := spec.Limits.TimeoutSeconds; d > 0 {
		sb.deadline = time.Now().Add(time.Duration(d * float64(time.Second)))
		sb.timer = time.AfterFunc(time.Until(sb.deadline), sb.expire)
	}
	if !sb.signals.held { // else jail's waiter forwards them, and C never receives
		go sb.forwardSignals()
	}
}

// discard kills an init that never got a plan, unseen: it printed nothing and ran nothing.
func (sb *sandbox) discard() {
	if sb == nil {
		return
	}
	sb.proc.signal(syscall.SIGKILL)
	sb.plan.Close()
	sb.proc.wait()
	sb.messages.Close()
	sb.unpin()
}

// closeOpened closes the streams of opened that given did not hold: the /dev/null openNullStdio
// opened for the child, which has them now.
func closeOpened(given, opened tty.Stdio) {
	for _, f := range [][2]*os.File{{given.In, opened.In}, {given.Out, opened.Out}, {given.Err, opened.Err}} {
		if f[0] != f[1] {
			f[1].Close()
		}
	}
}

// sendPlan sends init the Spec and the compiled seccomp program, its length first, with files
// (wire.SendConfig). init builds the root from it at once, up to the first mount on a
// placeholder, which the host makes meanwhile (letStart).
func (sb *sandbox) sendPlan(bpf []byte, files []*os.File) {
	opts := sb.obs.opts
	cfg := wire.Config{Spec: sb.spec, BPF: bpf, Terminal: sb.term != nil, Observe: sb.obs.follows, SchedOther: spawn.Batched(),
		Started: spawn.Started, Verbose: opts.Verbose, Quiet: opts.Quiet, Explain: opts.Explain}
	sb.obs.log().Printf("host: send the plan")
	if err := wire.SendConfig(sb.plan, wire.Marshal(&cfg), files); err != nil {
		// init died before reading its plan: its report or exit status says why.
		sb.obs.log().Printf("host: send plan: %s", err)
	}
}

// letStart tells init that the placeholders are made and whether the host leaves (wire.Made),
// runs walk (the audit's; nil: none), and closes the socket once every forwarded signal is caught
// here and the walk is done: init builds the sandbox meanwhile and waits for that before it
// starts the command (hostCatchesSignals). Without jail's waiter (waiter.c), a signal that came
// earlier ended jail (its default action) and init with it (Pdeathsig), before any command ran;
// the waiter holds them until the host says where they go, and forwards them to an init it is
// the parent of itself (the host catches none: uncaught).
func (sb *sandbox) letStart(hostLeaves bool, walk func()) {
	sb.obs.log().Printf("host: the placeholders are made")
	if err := wire.SendMade(sb.plan, wire.Made{HostLeaves: hostLeaves}); err != nil {
		sb.obs.log().Printf("host: send to init: %s", err) // init is gone: its report or exit status says why
	}
	if walk != nil {
		walk()
	}
	sb.signals.wait()
	sb.plan.Close()
}

// The Ops of a failure to start init in its namespaces: creating them, or mapping its ids.
const (
	opCreateNamespaces = "create sandbox namespaces"
	opMapIDs           = "map the sandbox's ids"
)

// startError explains a failed start of init: almost always the kernel refusing the namespaces,
// or the id maps in them.
func startError(err error) *fail.Error {
	e := &fail.Error{Op: opCreateNamespaces, Exit: fail.ExitSetup}
	var maps *spawn.IDMapError
	switch {
	case errors.As(err, &maps):
		e.Op, e.Errno, e.Detail = opMapIDs, maps.Err, maps.Error()
		if cause, fix := userns.MapRefusal(); cause != "" {
			e.Hint = cause + "; " + fix
		}
	case !errors.As(err, &e.Errno):
		e.Detail = err.Error()
	case refusalErrno(e.Errno):
		e.Hint = userns.Hint()
	}
	return e
}

// refusedNamespaces says e is a failure to start init in its namespaces.
func refusedNamespaces(e *fail.Error) bool {
	return e.Op == opCreateNamespaces || e.Op == opMapIDs
}

// refusalErrno reports whether clone(2) failing with errno means user namespaces are refused:
// EPERM (sysctl, seccomp, AppArmor), ENOSPC/EUSERS (max_user_namespaces), EINVAL (no kernel
// support), EACCES (an LSM).
func refusalErrno(errno syscall.Errno) bool {
	switch errno {
	case syscall.EPERM, syscall.EACCES, syscall.ENOSPC, syscall.EINVAL, syscall.EUSERS:
		return true
	}
	return false
}

// userNSRefused reports whether err means the kernel would not give this user a working user
// namespace, which is when a Landlock fallback may take over: init could not be started in
// them (which includes a known restriction, Ubuntu's AppArmor, stripping the user namespace's
// capabilities so that init's child could not create the others), or a setup step failed with
// EPERM where such a restriction is in force (refusesSteps, userns.RefusesSteps: that one, or an
// agent harness's sandbox refusing what the steps need), before the command ran. A step refused
// for another reason (a container's masked /proc, say) is not: the namespaces work, and the
// fallback would give up more than the step.
func userNSRefused(err error, refusesSteps func() bool) bool {
	var e *fail.Error
	if !errors.As(err, &e) {
		return false
	}
	if refusedNamespaces(e) {
		return refusalErrno(e.Errno)
	}
	return e.Exit == fail.ExitSetup && e.Errno == syscall.EPERM && refusesSteps()
}

// forwardSignals passes the forwarded signals to init, which passes them to the command (or, for
// a window change with a pseudo-terminal, resizes it). In the fallback they go to the command,
// and jail resizes its pseudo-terminal itself.
func (sb *sandbox) forwardSignals() {
	for sig := range sb.signals.C {
		if sig == syscall.SIGWINCH && sb.tty != nil {
			sb.tty.Resize()
			continue
		}
		sb.proc.signal(sig.(syscall.Signal))
	}
}

// expire kills init when the timeout is reached. Init is pid 1 of the sandbox's pid namespace:
// the kernel kills every other process in it with it.
func (sb *sandbox) expire() {
	sb.timedOut.Store(true)
	sb.proc.signal(syscall.SIGKILL)
}

// timeoutError is jail's error when spec's timeout killed the sandbox.
func timeoutError(spec *plan.Spec) *fail.Error {
	return &fail.Error{
		Op:     "timeout",
		Detail: fmt.Sprintf("killed the sandbox after %s", time.Duration(spec.Limits.TimeoutSeconds*float64(time.Second))),
		Exit:   fail.ExitTimeout,
	}
}

// wait waits for init and returns the command's status, or the error init reported.
func (sb *sandbox) wait() (int, error) {
	werr := sb.proc.wait()
	sb.signals.stop()
	if sb.timer != nil {
		sb.timer.Stop()
	}
	sb.tty.Finish()
	sb.term.Restore()
	if sb.timedOut.Load() {
		return fail.ExitTimeout, timeoutError(sb.spec)
	}
	if report := <-sb.report; len(report) > 0 {
		return decodeReport(report)
	}
	if werr != nil {
		return fail.ExitSetup, fail.New("wait", "init", werr)
	}
	return fail.ExitStatus(sb.proc.ws), nil
}

// decodeReport turns init's report into the *Error it describes, with the user-namespace hint
// added to a refusal that came from inside (Ubuntu's AppArmor lets the namespace be created but
// strips its capabilities).
func decodeReport(b []byte) (int, error) {
	e := &fail.Error{}
	if err := json.Unmarshal(b, e); err != nil {
		return fail.ExitSetup, &fail.Error{Op: "read sandbox report", Detail: err.Error(), Exit: fail.ExitSetup}
	}
	if e.Exit == 0 {
		e.Exit = fail.ExitSetup
	}
	e.AddUsernsHint()
	return e.Exit, e
}
