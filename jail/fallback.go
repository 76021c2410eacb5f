package jail

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/jail/internal/container"
	"github.com/jail-sandbox/jail/jail/internal/fail"
	"github.com/jail-sandbox/jail/jail/internal/restrict"
	"github.com/jail-sandbox/jail/jail/internal/setup"
	"github.com/jail-sandbox/jail/jail/internal/spawn"
	"github.com/jail-sandbox/jail/jail/internal/tty"
	"github.com/jail-sandbox/jail/jail/internal/userns"
	"github.com/jail-sandbox/jail/landlock"
	"github.com/jail-sandbox/jail/plan"
	"github.com/jail-sandbox/jail/seccomp"
)

// runFallback runs spec's command without namespaces, for when the kernel refuses them and the
// plan allows it (Spec.Fallback "landlock"): Landlock stands in for the mount view, seccomp for
// the network and IPC namespaces, and the command gets no capabilities, no_new_privs and a new
// session. It first names on stderr every protection that cannot hold this way and refuses to
// start (ExitSetup) unless the plan allows a weaker sandbox. It never falls back silently.
// waiting, when not nil, is the process jail's caller waits for (spawn.Waiter): it then forwards
// the signals jail is sent here. refused is the error the namespace sandbox failed with.
func runFallback(spec *plan.Spec, stdio tty.Stdio, obs *observer, waiting *spawn.Waiter, refused error) (int, error) {
	spawn.RestoreProcs() // this process stays for the run: the Ps its runtime booted without (spawn/boot.c)
	w := io.Writer(os.Stderr)
	if stdio.Err != nil {
		w = stdio.Err
	}
	plan, err := planFallback(spec, landlock.ABI())
	if err != nil {
		return fail.ExitSetup, fail.New("plan the landlock fallback", "", err)
	}
	printFallback(w, plan, refuser(refused), spec.AllowWeaker, obs.opts.Quiet)
	if len(plan.Lost) > 0 && !spec.AllowWeaker {
		return fail.ExitSetup, &fail.Error{
			Op:     "landlock fallback",
			Detail: fmt.Sprintf("refused: %d protections listed above cannot hold without user namespaces", len(plan.Lost)),
			Hint:   "pass --allow-weaker, or allow_weaker = true in [sandbox], to run without them",
			Exit:   fail.ExitSetup,
		}
	}
	env := spec.Env
	if plan.PrivateTmp != "" {
		dir, err := os.MkdirTemp("", "jail-tmp-")
		switch {
		case err == nil:
			defer os.RemoveAll(dir)
			plan.Landlock.Write = append(plan.Landlock.Write, dir)
			env = append(slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, "TMPDIR=") }), "TMPDIR="+dir)
		case errors.Is(err, syscall.EROFS) || errors.Is(err, syscall.EACCES):
			// An outer sandbox (Codex's read-only mode) keeps the temporary directory from
			// jail as from the command: the command goes without one, as it would there.
			if !obs.opts.Quiet {
				fmt.Fprintf(w, "jail: fallback: no private TMPDIR, the temporary directory is not writable here (%s)\n", err)
			}
		default:
			return fail.ExitSetup, fail.New("create private TMPDIR", "", err)
		}
	}
	bpf, err := fallbackFilter(spec, plan)
	if err != nil {
		return fail.ExitSetup, fail.New("compile seccomp filter", "", err)
	}
	path, err := setup.LookPath(spec.Argv[0], spec.Cwd, env)
	if err != nil {
		return fail.ExitSetup, fail.Exec(spec.Argv[0], err)
	}
	// The fallback's share of the sandbox's setup phases (setup/phases.go; docs/architecture.md
	// sets the two side by side). The command shares its Landlock domain with the thread that
	// starts it: keep it out of jail's memory (/proc/PID/task/TID/mem, ptrace) by making jail
	// non-dumpable. Limits are per process, so jail holds them too; it only waits from here on.
	// Descriptors jail itself inherited would pass to the command (Landlock checks at open):
	// close them at exec.
	log := obs.log()
	for _, step := range []struct {
		name string
		run  func() error
	}{
		{"make jail non-dumpable", restrict.SetNonDumpable},
		{"set resource limits", func() error { return restrict.SetRlimits(spec.Limits, log) }},
		{"close inherited descriptors", restrict.CloseInheritedFds},
	} {
		log.Printf("fallback: %s", step.name)
		if err := step.run(); err != nil {
			return fail.ExitSetup, fail.New(step.name, "", err)
		}
	}
	stdio, err = openNullStdio(stdio)
	if err != nil {
		return fail.ExitSetup, fail.New("open", os.DevNull, err)
	}
	tty, stdio, err := tty.Open(stdio)
	if err != nil {
		return fail.ExitSetup, err
	}
	sb := &sandbox{spec: spec, tty: tty, report: make(chan []byte, 1), signals: subscribe()}
	sb.report <- nil // no init, no report: wait takes the command's own status
	// The command is this process's child: signals sent to jail come here.
	forwardHere(waiting, sb.signals)
	obs.watch(sb, plan)
	cmd := fallbackCommand{path: path, attr: &syscall.ProcAttr{
		Dir: spec.Cwd, Env: env, Files: []uintptr{stdio.In.Fd(), stdio.Out.Fd(), stdio.Err.Fd()},
		Sys: &syscall.SysProcAttr{Setsid: true, Setctty: tty != nil, Ctty: 0, Pdeathsig: syscall.SIGKILL},
	}}
	return sb.runRestricted(plan, bpf, cmd, w)
}

// fallbackCommand is how the fallback starts the command: path run with attr.
type fallbackCommand struct {
	path string
	attr *syscall.ProcAttr
}

// fallbackFilter compiles the Spec's seccomp policy with the fallback's stand-ins for the
// namespaces added, and MPTCP blocked wherever Landlock's TCP rules hold.
func fallbackFilter(spec *plan.Spec, plan *fallbackPlan) ([]byte, error) {
	filter, err := seccomp.Compile(fallbackPolicy(spec, plan))
	if err != nil {
		return nil, err
	}
	return filter.BPF(), nil
}

// fallbackPolicy is the fallback's seccomp policy (fallbackFilter compiles it; --report sums it up).
func fallbackPolicy(spec *plan.Spec, plan *fallbackPlan) seccomp.Policy {
	policy := restrict.SeccompPolicy(spec)
	policy.Deny = append(slices.Clone(policy.Deny), plan.DenySyscalls...)
	policy.Allow = slices.DeleteFunc(slices.Clone(policy.Allow), func(s string) bool { return slices.Contains(plan.DenySyscalls, s) })
	policy.BlockMPTCP = plan.Landlock.RestrictTCP
	return policy
}

// runRestricted starts sb's command from a thread restricted for good and waits for it there,
// forwarding signals and enforcing the timeout as for a sandbox's init.
func (sb *sandbox) runRestricted(plan *fallbackPlan, bpf []byte, cmd fallbackCommand, w io.Writer) (int, error) {
	type result struct {
		status int
		err    error
	}
	sb.signals.wait() // before the command exists
	done := make(chan result)
	// The thread also waits for the command, since Pdeathsig fires when the thread that forked
	// it exits; jail stays, so the thread is not its leader.
	restrict.GoRestricting(func() {
		proc, err := restrictAndStartFallback(sb.spec, plan, bpf, cmd, w, sb.obs)
		if err != nil {
			done <- result{fail.ExitSetup, err}
			return
		}
		sb.proc = proc
		sb.obs.started(sb, 0, nil)
		if d := sb.spec.Limits.TimeoutSeconds; d > 0 {
			sb.timer = time.AfterFunc(time.Duration(d*float64(time.Second)), sb.expire)
		}
		if sb.tty != nil {
			sb.tty.Slave.Close() // the command holds it now
			sb.tty.Start()
		}
		go sb.forwardSignals()
		status, err := sb.wait()
		// What the command left behind in its process group goes with it, as a pid namespace
		// would take every process.
		unix.Kill(-sb.proc.pid, unix.SIGKILL)
		done <- result{status, err}
	})
	r := <-done
	if r.err != nil && sb.proc == nil { // never started: undo what wait would have
		sb.signals.stop()
		if sb.tty != nil {
			sb.tty.Slave.Close()
		}
		sb.tty.Restore()
	}
	return r.status, r.err
}

// restrictAndStartFallback runs on the locked thread: each restriction, then the command.
func restrictAndStartFallback(spec *plan.Spec, plan *fallbackPlan, bpf []byte, cmd fallbackCommand, w io.Writer, obs *observer) (*process, error) {
	log := obs.log()
	if spawn.Batched() {
		log.Printf("fallback: %s", spawn.StepSchedOther)
		if err := spawn.RestoreSchedOther(); err != nil {
			return nil, fail.New(spawn.StepSchedOther, "", err)
		}
	}
	if restrict.HoldsCapabilities() {
		log.Printf("fallback: drop capabilities")
		kept, err := restrict.DropCapabilities()
		if err != nil {
			return nil, fail.New("drop capabilities", "", err)
		}
		if kept {
			fmt.Fprintln(w, "jail: fallback: the capability bounding set stays as jail found it (shrinking it needs CAP_SETPCAP, which jail was not given); "+
				"every other capability is dropped, and no_new_privs keeps the command from gaining any")
		}
	}
	log.Printf("fallback: set no_new_privs")
	if err := restrict.SetNoNewPrivs(); err != nil {
		return nil, fail.New("set no_new_privs", "", err)
	}
	log.Printf("fallback: apply landlock")
	rep, err := landlock.Restrict(plan.Landlock)
	if err != nil {
		return nil, fail.New("apply landlock", "", err)
	}
	obs.landlockApplied(rep)
	if len(rep.Missing) > 0 {
		fmt.Fprintf(w, "jail: fallback: Landlock ABI %d lacks %s\n", rep.ABI, strings.Join(rep.Missing, ", "))
	}
	log.Printf("fallback: install seccomp filter; exec %s", cmd.path)
	if err := seccomp.Install(bpf); err != nil {
		return nil, fail.New("install seccomp filter", "", err)
	}
	pid, err := syscall.ForkExec(cmd.path, spec.Argv, cmd.attr)
	if err != nil {
		return nil, fail.Exec(spec.Argv[0], err)
	}
	proc, err := newProcess(pid)
	if err != nil {
		return nil, fail.New("start", cmd.path, err)
	}
	return proc, nil
}

// openNullStdio gives /dev/null to the streams stdio leaves nil, opened now: after Landlock the
// fallback may not grant /dev/null.
func openNullStdio(stdio tty.Stdio) (tty.Stdio, error) {
	for _, f := range []**os.File{&stdio.In, &stdio.Out, &stdio.Err} {
		if *f != nil {
			continue
		}
		null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
		if err != nil {
			return stdio, err
		}
		*f = null
	}
	return stdio, nil
}

// printFallback says that jail runs without namespaces and who refused them, what cannot hold
// and what is carried another way: one line each, or when quiet all of it in one line, with
// the protections lost named by their subjects alone.
func printFallback(w io.Writer, plan *fallbackPlan, who string, allowWeaker, quiet bool) {
	banner := fmt.Sprintf("jail: user namespaces are unavailable (%s): falling back to Landlock + seccomp + no_new_privs, without namespaces", who)
	allowed := ""
	if allowWeaker {
		allowed = " (allowed by allow-weaker)"
	}
	if quiet {
		fmt.Fprintf(w, "%s; cannot keep%s: %s; carries %d another way (without -q, each is listed)\n",
			banner, allowed, strings.Join(subjects(plan.Lost), ", "), len(plan.Carried))
		return
	}
	fmt.Fprintln(w, banner)
	for _, l := range plan.Lost {
		fmt.Fprintf(w, "jail: fallback cannot keep%s: %s\n", allowed, l)
	}
	for _, c := range plan.Carried {
		fmt.Fprintln(w, "jail: fallback carries: "+c)
	}
}

// subjects names each protection lost by its subject, the text before its colon; the protect
// entries, one per protected path, are counted as one.
func subjects(lost []string) []string {
	var out []string
	protects := 0
	for _, l := range lost {
		subject, _, _ := strings.Cut(l, ":")
		if strings.HasPrefix(subject, "protect ") {
			protects++
			continue
		}
		out = append(out, subject)
	}
	if protects > 0 {
		out = append([]string{fmt.Sprintf("protect (%d paths)", protects)}, out...)
	}
	if len(out) == 0 {
		return []string{"nothing"}
	}
	return out
}

// refuser says who refused the namespace sandbox, for the fallback's banner: a cause jail knows
// (a sysctl, AppArmor, an unmapped uid, a container engine's seccomp policy), or what failed.
func refuser(refused error) string {
	if who := userns.Who(container.Detect().Name); who != "" {
		return who
	}
	return "the kernel refused them: " + refused.Error()
}
