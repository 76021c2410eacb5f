package jail

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/jail/internal/audit"
	"github.com/jail-sandbox/jail/plan"
)

// unseen is the host's part of a run's audit (package audit): the baseline, taken once the
// placeholders are made and before the sandbox can write, and walked (walk) before init may
// start the command: file, stow and end come after.
type unseen struct {
	b      *audit.Baseline
	stowed *os.File // b, encoded, while the host waits for the run's end (stow); b is nil then
}

// startAudit begins the audit of spec's writable grants, once the host has made its placeholders
// there; nil when it has none. The caches' directory is not one: nothing on the host reads it,
// only later sandboxes of the project (plan.Caches), and a build fills it with thousands of files.
func startAudit(spec *plan.Spec) *unseen {
	grants := writableGrants(spec.Mounts)
	if spec.Caches != nil {
		grants = slices.DeleteFunc(grants, func(g string) bool {
			return g == spec.Caches.Dir || strings.HasPrefix(g, spec.Caches.Dir+"/")
		})
	}
	if len(grants) == 0 {
		return nil
	}
	home, _ := os.UserHomeDir()
	config := os.Getenv("XDG_CONFIG_HOME")
	if config == "" {
		config = filepath.Join(home, ".config")
	}
	return &unseen{b: audit.Begin(grants, home, config)}
}

// walk notes the sentinels (audit.Baseline.Walk). letStart runs it once init may mount on the
// placeholders, while init builds the sandbox, and lets init start the command only after it: on the host's own
// thread, where a goroutine started before the plan woke a second thread of the runtime for what
// is, outside a large grant, a handful of system calls. Nil-safe.
func (u *unseen) walk() {
	if u == nil {
		return
	}
	u.b.Walk()
}

// writableGrants are the writable binds of mounts that no other one holds.
func writableGrants(mounts []plan.Mount) []string {
	var grants []string
	for _, m := range mounts {
		if m.Kind == plan.MountBind && !slices.ContainsFunc(grants, func(g string) bool {
			return g == "/" || strings.HasPrefix(m.Target, g+"/")
		}) {
			grants = append(grants, m.Target)
		}
	}
	return grants
}

// file is the walked baseline in an unnamed file, for jail's waiter (spawn.Waiter.HandOver).
// Nil-safe; nil when it cannot be made, which it says on stderr.
func (u *unseen) file(stderr io.Writer) *os.File {
	if u == nil {
		return nil
	}
	f, err := encoded(u.b)
	if err != nil {
		fmt.Fprintf(stderr, "jail: audit: %v: what the run writes unseen is not listed\n", err)
	}
	return f
}

// stow moves the walked baseline out of the host's heap into an unnamed file until the run
// ends (end reads it back): a host that stays for a report or the egress proxy would otherwise
// hold every walked directory's names in Go memory for the whole run, for nothing but the end
// (0.3-0.4 MB in a repository of 4,500 files). Where the file cannot be made the baseline stays
// in memory, which works the same. Nil-safe.
func (u *unseen) stow() {
	if u == nil {
		return
	}
	if f, err := encoded(u.b); err == nil {
		u.stowed, u.b = f, nil
	}
}

// encoded is b, jail's own output files left out of it, in an unnamed file, as audit.Read reads
// it. It runs once init may start the command, not in the walk init waits for.
func encoded(b *audit.Baseline) (*os.File, error) {
	b.LeaveOutStdio()
	fd, err := unix.MemfdCreate("jail-audit", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), "jail-audit")
	if _, err = f.Write(b.Encode()); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// end lists what the run wrote unseen, once the sandbox is gone, prints it on stderr and returns
// it, with whether the baseline was partial. Nil-safe.
func (u *unseen) end(stderr io.Writer) ([]audit.Finding, bool) {
	if u == nil {
		return nil, false
	}
	if u.stowed != nil {
		b, err := audit.Read(u.stowed)
		u.stowed.Close()
		u.stowed = nil
		if err != nil {
			fmt.Fprintf(stderr, "jail: audit: the baseline could not be read back: %v: what the run wrote unseen is not listed\n", err)
			return nil, false
		}
		u.b = b
	}
	if !u.b.Changed() {
		return nil, u.b.Partial
	}
	findings := u.b.Findings()
	dir, _ := os.Getwd()
	for _, line := range audit.Lines(findings, u.b.Partial, dir) {
		fmt.Fprintf(stderr, "jail: %s\n", line)
	}
	return findings, u.b.Partial
}
