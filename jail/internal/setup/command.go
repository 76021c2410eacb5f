package setup

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"github.com/jail-sandbox/jail/jail/internal/explain"
	"github.com/jail-sandbox/jail/jail/internal/fail"
	"github.com/jail-sandbox/jail/jail/internal/restrict"
	"github.com/jail-sandbox/jail/jail/internal/tty"
	"github.com/jail-sandbox/jail/jail/internal/wire"
	"github.com/jail-sandbox/jail/landlock"
)

// defaultPath is searched when the Spec's environment has no PATH, as execvp(3) does.
const defaultPath = "/usr/local/bin:/usr/bin:/bin"

// launch is what the restricted thread starts: path executed with argv, files as its
// descriptors, the first a controlling terminal when ctty.
type launch struct {
	path  string
	argv  []string
	files []uintptr
	ctty  bool
}

// startCommand restricts one locked OS thread and starts the command from it, in a new session,
// as pid 1's child (the onThread phases). A setup that stays keeps that thread off its leader,
// out of the command's signals (restrict.GoRestricting).
func (s *setup) startCommand(stdio tty.Stdio, ctty bool) (pid int, err error) {
	path, err := LookPath(s.spec.Argv[0], s.spec.Cwd, s.spec.Env)
	if err != nil {
		return 0, fail.Exec(s.spec.Argv[0], err)
	}
	return s.startRestricted(launch{path: path, argv: s.spec.Argv, files: []uintptr{stdio.In.Fd(), stdio.Out.Fd(), stdio.Err.Fd()}, ctty: ctty})
}

// startRestricted runs restrictAndStart on a thread of its own (startCommand says why). A setup
// that leaves once the command runs restricts the thread it runs on, locked to it for good: all
// it does there afterwards is name the command to pid 1 and exit, and it saves starting a
// goroutine and handing the result back (26 us before the command started). That thread may be
// the leader, so that the command can signal the setup in the moment before it exits (Landlock
// scopes signals by the leader's domain: restrict.GoRestricting): what that can stop or end is
// the setup's last write to pid 1, and with it the command's own run, nothing else.
func (s *setup) startRestricted(l launch) (int, error) {
	if !setupStays(s.cfg) {
		runtime.LockOSThread()
		return s.restrictAndStart(l)
	}
	type started struct {
		pid int
		err error
	}
	done := make(chan started)
	restrict.GoRestricting(func() {
		pid, err := s.restrictAndStart(l)
		done <- started{pid, err}
	})
	r := <-done
	return r.pid, r.err
}

// restrictAndStart runs on the locked thread: each restriction, then, once the host lets it
// (hostCatchesSignals), the command. The restrictions come first, while the host may still be
// walking the run's writable grants for its audit (0.35 ms, median, in a 4,776-file repository):
// they start nothing, and the command starts as soon as the host is done.
func (s *setup) restrictAndStart(l launch) (int, error) {
	if err := s.runPhases(onThread); err != nil {
		return 0, err
	}
	if err := hostCatchesSignals(s.host); err != nil {
		return 0, fail.New("wait for the host", "", err)
	}
	spec := s.spec
	s.log.Printf("init: exec %s", l.path)
	// syscall.ForkExec, not os/exec: os.StartProcess probes pidfd support on its first use (four
	// syscalls and a vfork'ed child, 0.17 ms), and this process does not wait for the command:
	// CLONE_PARENT makes it pid 1's child (pid1.c).
	pid, err := syscall.ForkExec(l.path, l.argv, &syscall.ProcAttr{
		Env:   spec.Env, // the working directory is init's: enterCwd
		Files: l.files,
		// A new session: no controlling terminal unless it is the pseudo-terminal jail made for
		// it, so TIOCSTI cannot reach the caller's terminal.
		Sys: &syscall.SysProcAttr{Setsid: true, Setctty: l.ctty, Ctty: 0, Cloneflags: syscall.CLONE_PARENT},
	})
	if err != nil {
		return 0, fail.Exec(l.argv[0], err)
	}
	return pid, nil
}

// applyLandlock restricts this thread to the plan's grants, as paths inside the sandbox (and
// s.exec, files it may execute), and tells the host what it applied when the run is observed.
func (s *setup) applyLandlock() error {
	cfg := restrict.LandlockConfig(s.spec)
	cfg.Exec = s.exec
	rep, err := landlock.Restrict(cfg)
	if err != nil {
		return err
	}
	if s.cfg.Observe {
		wire.Tell(wire.Message{Landlock: &rep}) // for --report
	}
	if len(rep.Missing) > 0 {
		s.log.Printf("init: landlock ABI %d lacks %s", rep.ABI, strings.Join(rep.Missing, ", "))
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
