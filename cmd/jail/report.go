package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/jail"
	"github.com/jail-sandbox/jail/plan"
	"github.com/jail-sandbox/jail/profiles"
)

// reportFlags are --report FILE and --json-status-fd FD: what jail tells a harness about a run,
// beside the command's own output.
type reportFlags struct {
	file     string
	statusFd int // -1: none
}

func (r *reportFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&r.file, "report", "", "")
	fs.IntVar(&r.statusFd, "json-status-fd", -1, "")
}

// reporter is a run's report destination and status descriptor, either nil when not asked
// for. Both are checked before anything runs: a report that cannot be written fails jail at
// once, not after the command has done its work.
type reporter struct {
	file   *reportFile
	status *os.File
}

// open opens what r asks for.
func (r *reportFlags) open() (*reporter, error) {
	rep := &reporter{}
	if r.statusFd >= 0 {
		// Close-on-exec: the descriptor is jail's, never the sandbox's.
		if _, err := unix.FcntlInt(uintptr(r.statusFd), unix.F_SETFD, unix.FD_CLOEXEC); err != nil {
			return nil, fmt.Errorf("--json-status-fd %d: %w", r.statusFd, err)
		}
		rep.status = os.NewFile(uintptr(r.statusFd), "json-status-fd")
	}
	if r.file != "" {
		f, err := openReportFile(r.file)
		if err != nil {
			return nil, err
		}
		rep.file = f
	}
	return rep, nil
}

// run runs spec, in early's init when it fits, observed when a report or status records were
// asked for.
func (rep *reporter) run(spec *plan.Spec, opts jail.Options, stdio jail.Stdio, early *jail.Early) (int, error) {
	if rep.file == nil && rep.status == nil && !opts.Explain {
		return early.Run(spec, opts, stdio)
	}
	var status io.Writer
	if rep.status != nil {
		status = rep.status
	}
	r, code, err := early.RunReport(spec, opts, stdio, status)
	r.Profile.Source = profileSource(spec.Profile)
	if opts.Explain {
		jail.WriteDenials(stdio.Err, r)
	}
	if werr := rep.write(r, stdio.Err); werr != nil {
		// Rare (the directory was checked): the command ran, so its status stands.
		fmt.Fprintf(stdio.Err, "jail: %s\n", werr)
	}
	return code, err
}

// failed writes the report and exit record of a run that failed before its plan existed (a
// profile that does not load), and returns the exit status fail gives err.
func (rep *reporter) failed(stdio jail.Stdio, profile string, argv []string, err error) int {
	code := fail(stdio.Err, err)
	if rep.status != nil {
		jail.WriteExitStatus(rep.status, code)
	}
	r := &jail.Report{Profile: jail.ReportProfile{Name: profile}, Command: argv, Exit: jail.Exit{Status: code}, Error: err.Error()}
	if werr := rep.write(r, stdio.Err); werr != nil {
		fmt.Fprintf(stdio.Err, "jail: %s\n", werr)
	}
	return code
}

// write writes the report, if one was asked for, and says so when the command had put
// something at its path.
func (rep *reporter) write(r *jail.Report, stderr io.Writer) error {
	if rep.file == nil {
		return nil
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("write report %s: %w", rep.file.path, err)
	}
	planted, err := rep.file.write(append(b, '\n'))
	if planted {
		fmt.Fprintf(stderr, "jail: report: something was put at %s during the run; jail's report replaced it\n", rep.file.path)
	}
	return err
}

// profileSource says where the named profile came from: "builtin:NAME", the file of a profile
// found by name, or the name itself when it was a file path.
func profileSource(name string) string {
	host, err := profiles.HostFromOS()
	if err != nil {
		return name
	}
	for _, e := range profiles.List(host) {
		if e.Name == name {
			return e.Source
		}
	}
	return name
}
