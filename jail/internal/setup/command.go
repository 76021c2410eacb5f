package setup

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/jail-sandbox/jail/jail/internal/explain"
	"github.com/jail-sandbox/jail/jail/internal/fail"
	"github.com/jail-sandbox/jail/jail/internal/restrict"
	"github.com/jail-sandbox/jail/jail/internal/spawn"
	"github.com/jail-sandbox/jail/jail/internal/tty"
	"github.com/jail-sandbox/jail/jail/internal/verbose"
	"github.com/jail-sandbox/jail/jail/internal/wire"
	"github.com/jail-sandbox/jail/landlock"
	"github.com/jail-sandbox/jail/plan"
)

// defaultPath is searched when the Spec's environment has no PATH, as execvp(3) does.
const defaultPath = "/usr/local/bin:/usr/bin:/bin"

// startPayload restricts one locked OS thread and starts the command from it, in a new session,
// as pid 1's child. The restrictions are per thread and inherited by a fork: the command gets
// them all, the setup's other threads (relaying a terminal, reporting) none. A setup that stays
// keeps that thread off its leader, out of the command's signals (restrict.GoRestricting).
func startPayload(cfg *wire.Config, stdio tty.Stdio, ctty bool) (pid int, err error) {
	spec := cfg.Spec
	path, err := LookPath(spec.Argv[0], spec.Cwd, spec.Env)
	if err != nil {
		return 0, fail.Exec(spec.Argv[0], err)
	}
	type started struct {
		pid int
		err error
	}
	done := make(chan started)
	restrict.GoRestricting(setupStays(cfg), func() {
		pid, err := restrictAndStart(cfg, path, stdio, ctty)
		done <- started{pid, err}
	})
	s := <-done
	return s.pid, s.err
}

// restrictAndStart runs on the locked thread: each restriction, then the command.
func restrictAndStart(cfg *wire.Config, path string, stdio tty.Stdio, ctty bool) (int, error) {
	spec := cfg.Spec
	var steps []Step
	if cfg.SchedOther {
		steps = append(steps, Step{spawn.StepSchedOther, spawn.RestoreSchedOther}) // spawn/batch.c
	}
	err := runInitSteps(spec, append(steps, []Step{
		{"drop capabilities", restrict.DropCapabilities},
		{"set no_new_privs", restrict.SetNoNewPrivs},
		{"apply landlock", func(spec *plan.Spec) error { return applyLandlock(spec, cfg.Observe) }},
		{"watch for --explain", func(spec *plan.Spec) error { return explain.Start(spec, tellDenial) }}, // before the main filter
		{"install seccomp filter", func(spec *plan.Spec) error { return restrict.InstallSeccomp(spec, cfg.BPF) }},
	}...))
	if err != nil {
		return 0, err
	}
	verbose.Logf(spec, "init: exec %s", path)
	// syscall.ForkExec, not os/exec: os.StartProcess probes pidfd support on its first use (four
	// syscalls and a vfork'ed child, 0.17 ms), and this process does not wait for the command:
	// CLONE_PARENT makes it pid 1's child (pid1.c).
	pid, err := syscall.ForkExec(path, spec.Argv, &syscall.ProcAttr{
		Env:   spec.Env, // the working directory is init's: enterCwd
		Files: []uintptr{stdio.In.Fd(), stdio.Out.Fd(), stdio.Err.Fd()},
		// A new session: no controlling terminal unless it is the pseudo-terminal jail made for
		// it, so TIOCSTI cannot reach the caller's terminal.
		Sys: &syscall.SysProcAttr{Setsid: true, Setctty: ctty, Ctty: 0, Cloneflags: syscall.CLONE_PARENT},
	})
	if err != nil {
		return 0, fail.Exec(spec.Argv[0], err)
	}
	return pid, nil
}

// applyLandlock restricts this thread to the Spec's grants, as paths inside the sandbox, and
// tells the host what it applied when the run is observed.
func applyLandlock(spec *plan.Spec, observed bool) error {
	rep, err := landlock.Restrict(restrict.LandlockConfig(spec))
	if err != nil {
		return err
	}
	if observed {
		wire.Tell(wire.Message{Landlock: &rep}) // for --report
	}
	if len(rep.Missing) > 0 {
		verbose.Logf(spec, "init: landlock ABI %d lacks %s", rep.ABI, strings.Join(rep.Missing, ", "))
	}
	return nil
}

// LookPath finds name as execvp(3) would inside the sandbox, with the command's own PATH. A name
// with a slash is taken as is (relative to cwd); execve then says whether it runs.
func LookPath(name, cwd string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		if !filepath.IsAbs(name) {
			name = filepath.Join(cwd, name)
		}
		return name, nil
	}
	search := defaultPath
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			search = v
		}
	}
	var notExecutable string
	for _, dir := range filepath.SplitList(search) {
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(cwd, dir)
		}
		p := filepath.Join(dir, name)
		fi, err := os.Stat(p)
		switch {
		case err != nil || fi.IsDir():
			continue
		case fi.Mode()&0o111 != 0:
			return p, nil
		case notExecutable == "":
			notExecutable = p
		}
	}
	if notExecutable != "" {
		return notExecutable, nil // execve fails with EACCES: 126, as in a shell
	}
	return "", syscall.ENOENT
}

// tellDenial sends the host a denial --explain found, or nil: that more came than are sent.
func tellDenial(d *explain.Denial) {
	if d == nil {
		wire.Tell(wire.Message{MoreDenials: true})
		return
	}
	wire.Tell(wire.Message{Denial: d})
}
