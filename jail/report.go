package jail

import (
	"io"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/jail/internal/audit"
	"github.com/jail-sandbox/jail/jail/internal/explain"
	"github.com/jail-sandbox/jail/jail/internal/restrict"
	"github.com/jail-sandbox/jail/jail/internal/verbose"
	"github.com/jail-sandbox/jail/jail/internal/wire"
	"github.com/jail-sandbox/jail/landlock"
	"github.com/jail-sandbox/jail/plan"
	"github.com/jail-sandbox/jail/proxy"
	"github.com/jail-sandbox/jail/seccomp"
)

// Report is what jail observed of one run, written by `--report FILE` as JSON: the layers as
// they were applied, how the command ended, what it used, the limits it hit and the connections
// the egress proxy refused. It is complete as far as the run got: after a setup failure, Error
// says why and the layers list only what was in place by then.
type Report struct {
	Profile ReportProfile `json:"profile"`
	Command []string      `json:"command"`
	// Sandbox is "namespaces", "landlock-fallback", or empty when none was started.
	Sandbox string  `json:"sandbox,omitempty"`
	Layers  *Layers `json:"layers,omitempty"`
	Exit    Exit    `json:"exit"`
	// LimitsHit names the limits that ended the command: "timeout" (--timeout), "cpu"
	// (RLIMIT_CPU: SIGXCPU), "file_size" (RLIMIT_FSIZE: SIGXFSZ).
	LimitsHit []string `json:"limits_hit,omitempty"`
	// WallSeconds is the whole run, sandbox setup included.
	WallSeconds float64        `json:"wall_seconds"`
	Usage       *Usage         `json:"usage,omitempty"`
	Network     *NetworkReport `json:"network,omitempty"`
	// Denials are the command's writes and connects the sandbox refused, one per path or
	// address, with the line jail printed for each (--explain only; explain_report.go).
	Denials          []explain.Denial `json:"denials,omitzero"`
	DenialsTruncated bool             `json:"denials_truncated,omitempty"`
	// UnseenWrites are the files the run wrote where the user will not see them: git does not
	// show them (ignored, excluded, in .git, outside a repository) or tools run them unasked
	// (jail/internal/audit). UnseenPartial says the writable grants held more files git does
	// not show than jail follows one by one: in-place changes to the others are not listed.
	UnseenWrites  []audit.Finding `json:"unseen_writes,omitempty"`
	UnseenPartial bool            `json:"unseen_partial,omitempty"`
	// Error is jail's own failure, as it printed it (without "jail: "); empty otherwise.
	Error string `json:"error,omitempty"`
}

// ReportProfile names the profile the plan came from: Source is "builtin:NAME" or its file.
type ReportProfile struct {
	Name   string `json:"name"`
	Source string `json:"source,omitempty"`
}

// Layers are the restrictions in place when the command started; a layer jail never got to is
// left out.
type Layers struct {
	// Namespaces are the namespaces the sandbox was created in (none in the fallback).
	Namespaces []string       `json:"namespaces"`
	Landlock   *LandlockLayer `json:"landlock,omitempty"`
	Seccomp    *SeccompLayer  `json:"seccomp,omitempty"`
	// NoNewPrivs and CapabilitiesDropped hold once the command started.
	NoNewPrivs          bool `json:"no_new_privs"`
	CapabilitiesDropped bool `json:"capabilities_dropped"`
}

// LandlockLayer is what landlock.Restrict applied: the mode asked for, the kernel's ABI and the
// features best effort left out because the kernel lacks them.
type LandlockLayer struct {
	Mode    string   `json:"mode"`
	ABI     int      `json:"abi"`
	Missing []string `json:"missing,omitempty"`
}

// SeccompLayer summarizes the installed filter (`jail profile show` lists it in full).
type SeccompLayer struct {
	Mode string `json:"mode"` // "allow" (deny-list), "deny" (allow-list) or "off"
	// Action is what a denied call gets, e.g. "errno EPERM".
	Action         string `json:"action"`
	Errno          string `json:"errno,omitempty"`
	DeniedSyscalls int    `json:"denied_syscalls"`
	ENOSYSSyscalls int    `json:"enosys_syscalls"`
	ArgumentChecks int    `json:"argument_checks"`
}

// Exit is how the run ended. Status is what jail exits with; Code or Signal is the command's
// own ending when jail saw it (not after a setup failure).
type Exit struct {
	Status       int    `json:"status"`
	Code         *int   `json:"code,omitempty"`
	Signal       string `json:"signal,omitempty"`
	SignalNumber int    `json:"signal_number,omitempty"`
	CoreDumped   bool   `json:"core_dumped,omitempty"`
}

// Usage is the CPU time and peak memory of the command and every process it started. Of says
// whose: "command" when jail's init measured it after reaping them all, "sandbox" when init
// itself could not (killed on timeout, or it failed), so its own share is in it too.
type Usage struct {
	Of            string  `json:"of"`
	UserSeconds   float64 `json:"user_cpu_seconds"`
	SystemSeconds float64 `json:"system_cpu_seconds"`
	PeakRSSBytes  int64   `json:"peak_rss_bytes"`
}

// NetworkReport is the egress proxy's account: every refused destination with its count and
// the change that would allow it, every name it looked up on the host (a channel out under a
// wildcard allow entry), and what it held at its peak beside its limits.
type NetworkReport struct {
	Mode string `json:"mode"`
	proxy.Report
}

// RunReport is Run, observed: it also returns the run's Report (never nil, complete as far as
// the run got) and, when status is not nil, streams bubblewrap's --json-status-fd records on it:
// a start record once the command runs, an exit record at the end (status.go).
func RunReport(spec *plan.Spec, opts Options, stdio Stdio, status io.Writer) (*Report, int, error) {
	return (*Early)(nil).RunReport(spec, opts, stdio, status)
}

// RunReport is RunReport with e's init, when it fits spec.
func (e *Early) RunReport(spec *plan.Spec, opts Options, stdio Stdio, status io.Writer) (*Report, int, error) {
	o := &observer{spec: spec, opts: opts, status: status, begin: time.Now(), follows: true}
	code, err := runObserved(spec, stdio, o, e)
	rep := o.report(code, err)
	if status != nil {
		WriteExitStatus(status, code)
	}
	return rep, code, err
}

// observer follows one run for its Report and status records. The sandbox's init reports what
// only it sees over its message pipe (wire.Message, messages.go); the rest the host sees itself.
type observer struct {
	spec    *plan.Spec
	opts    Options
	status  io.Writer // --json-status-fd; nil: none
	begin   time.Time
	follows bool // a report is made: init sends what only it sees (wire.Config.Observe)

	sb       *sandbox      // the sandbox (or fallback command) last started
	fallback *fallbackPlan // set when the command runs in the Landlock fallback
	landlock *landlock.Report
	running  bool         // the command was started
	exit     *wire.Exited // from init; nil in the fallback or when init did not get to it
	proxied  bool
	egress   proxy.Report
	explain  explanations // --explain's denials
	unseen   []audit.Finding
	partial  bool
}

// unseenWrites records what the run wrote unseen (audit.go).
func (o *observer) unseenWrites(findings []audit.Finding, partial bool) {
	o.unseen, o.partial = findings, partial
}

// log is -v's log for the run o follows.
func (o *observer) log() verbose.Log {
	return o.opts.log()
}

// watch makes o the observer of sb, a new attempt: what an earlier one saw is dropped.
func (o *observer) watch(sb *sandbox, fallback *fallbackPlan) {
	sb.obs = o
	o.sb, o.fallback = sb, fallback
	o.landlock, o.running, o.exit = nil, false, nil
}

func (o *observer) landlockApplied(rep landlock.Report) { o.landlock = &rep }

func (o *observer) exited(msg *wire.Exited) { o.exit = msg }

// egressClosed records what the egress proxy did.
func (o *observer) egressClosed(rep proxy.Report) {
	o.proxied = true
	o.egress = rep
}

// started records that the command runs and writes the status start record: pid is the
// command's in the sandbox's pid namespace, ns the sandbox's namespaces (the fallback's command
// has neither: pass 0 and nil).
func (o *observer) started(sb *sandbox, pid int, ns *wire.NSInodes) {
	o.running = true
	if o.status != nil {
		writeStartStatus(o.status, sb.proc.pid, pid, ns)
	}
}

// report builds the Report once the run is over. A sandbox killed on timeout may still be
// sending its last messages: they are waited for (init is dead, its pipe ends).
func (o *observer) report(status int, err error) *Report {
	sb := o.sb
	if sb != nil && sb.timedOut.Load() {
		<-sb.report
	}
	r := &Report{
		Profile:     ReportProfile{Name: o.spec.Profile},
		Command:     o.spec.Argv,
		Exit:        Exit{Status: status},
		WallSeconds: time.Since(o.begin).Seconds(),
	}
	if err != nil {
		r.Error = err.Error()
	}
	if o.proxied && o.spec.Network.Proxy != nil {
		r.Network = &NetworkReport{Mode: o.spec.Network.Mode, Report: o.egress}
	}
	o.explain.fill(r, o.opts)
	r.UnseenWrites, r.UnseenPartial = o.unseen, o.partial
	if sb == nil || sb.proc == nil {
		return r // jail failed before starting anything
	}
	r.Sandbox, r.Layers = o.layers()
	ws, measured, usage := o.ending()
	if measured {
		r.Exit.setWaitStatus(ws)
		r.LimitsHit = o.limitsHit(ws)
	}
	if sb.timedOut.Load() {
		r.LimitsHit = append([]string{"timeout"}, r.LimitsHit...)
	}
	r.Usage = usage
	return r
}

// layers are the restrictions in place, as far as the run got.
func (o *observer) layers() (string, *Layers) {
	l := &Layers{Namespaces: []string{}, NoNewPrivs: o.running, CapabilitiesDropped: o.running}
	sandbox := "landlock-fallback"
	policy := restrict.SeccompPolicy(o.spec)
	if o.fallback == nil {
		sandbox = "namespaces"
		_, l.Namespaces = wire.CloneFlags(o.spec.Namespaces)
	} else {
		policy = fallbackPolicy(o.spec, o.fallback)
	}
	if o.landlock != nil {
		l.Landlock = &LandlockLayer{Mode: o.spec.Landlock.Mode, ABI: o.landlock.ABI, Missing: o.landlock.Missing}
	}
	if o.running {
		l.Seccomp = seccompLayer(policy)
	}
	return sandbox, l
}

// seccompLayer summarizes policy as Compile built it.
func seccompLayer(p seccomp.Policy) *SeccompLayer {
	s, err := seccomp.Describe(p)
	if err != nil {
		return nil // it compiled, so it describes; never reached
	}
	l := &SeccompLayer{Mode: s.Mode, Action: s.Action, DeniedSyscalls: len(s.Denied),
		ENOSYSSyscalls: len(s.ENOSYS), ArgumentChecks: len(s.Checks)}
	if e, ok := strings.CutPrefix(s.Action, "errno "); ok {
		l.Errno = e
	}
	return l
}

// ending is how the command ended and what it used: from init's message in a sandbox, from the
// command's own wait status in the fallback. Without either (a sandbox killed on timeout, or
// failed) the wait status is init's, which only stands for the command on timeout, and the
// usage is init's, its own share included.
func (o *observer) ending() (ws syscall.WaitStatus, measured bool, u *Usage) {
	if o.exit != nil {
		return o.exit.WaitStatus, true, newUsage("command", &o.exit.Rusage)
	}
	p := o.sb.proc
	if !p.waited {
		return 0, false, nil
	}
	ws, ru := p.ws, &p.ru
	if o.fallback != nil {
		return ws, o.running, newUsage("command", ru)
	}
	return ws, o.sb.timedOut.Load(), newUsage("sandbox", ru)
}

func newUsage(of string, ru *syscall.Rusage) *Usage {
	return &Usage{
		Of:            of,
		UserSeconds:   time.Duration(ru.Utime.Nano()).Seconds(),
		SystemSeconds: time.Duration(ru.Stime.Nano()).Seconds(),
		PeakRSSBytes:  ru.Maxrss * 1024, // Linux counts it in KiB
	}
}

// limitsHit names the resource limits that ws says killed the command: the signals the kernel
// sends at RLIMIT_CPU and RLIMIT_FSIZE, where the plan sets them.
func (o *observer) limitsHit(ws syscall.WaitStatus) []string {
	if !ws.Signaled() {
		return nil
	}
	l := o.spec.Limits
	switch {
	case ws.Signal() == syscall.SIGXCPU && l.CPUSeconds > 0:
		return []string{"cpu"}
	case ws.Signal() == syscall.SIGXFSZ && l.FileSize > 0:
		return []string{"file_size"}
	}
	return nil
}

// setWaitStatus fills in the command's exit code, or the signal that killed it.
func (e *Exit) setWaitStatus(ws syscall.WaitStatus) {
	if !ws.Signaled() {
		code := ws.ExitStatus()
		e.Code = &code
		return
	}
	e.Signal = unix.SignalName(ws.Signal())
	e.SignalNumber = int(ws.Signal())
	e.CoreDumped = ws.CoreDump()
}
