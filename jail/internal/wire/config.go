package wire

import (
	"encoding/binary"
	"io"
	"os"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/jail/internal/fail"
	"github.com/jail-sandbox/jail/plan"
)

// The init's inherited descriptors, beyond stdio.
const (
	ConfigFd = 3 // host → init: its namespaces, Config (encoding.go) after its length, then EOF
	ReportFd = 4 // init → host: an *Error as JSON when setup fails; close-on-exec for the command
)

// Config is everything init needs, sent over ConfigFd. The init decides nothing: it executes
// the Spec with the seccomp program the host compiled.
type Config struct {
	Spec *plan.Spec
	BPF  []byte
	// Terminal says the caller's terminal is init's stdio and the command gets a pseudo-terminal
	// of its own, relayed to it (tty.Relay).
	Terminal bool
	// Observe says the run is reported (--report, --json-status-fd): init tells the host what
	// only it sees (Landlock applied, the command started and how it ended, messages.go). A plain
	// run does not need them, and encoding and decoding them cost every run 0.3 ms.
	Observe bool
	// SchedOther says jail's threads run as SCHED_BATCH (spawn/batch.c) and the command gets
	// SCHED_OTHER back, as jail's caller had it.
	SchedOther bool
	// Started is when jail started (CLOCK_MONOTONIC, ns): init's verbose lines count from it too.
	Started int64
	// Verbose, Quiet and Explain are the run's options init acts on (jail.Options): -v's lines,
	// -q's single notice lines, and --explain's listener. They change what jail says about the
	// run, not the sandbox.
	Verbose, Quiet, Explain bool
	// HostLeaves says the host hands the sandbox to jail's waiter once it has sent the plan
	// (sandbox.canLeave): init prints its own error, as the host would have.
	HostLeaves bool
	// Spawner says the sandbox is a persistent one: its command is the spawner (spawn/spawner.c),
	// jail's own binary, which starts every command later asked of it. init's stdin is the
	// keeper's channel to it. init tells the host when it runs (Message.Started).
	Spawner bool
}

// namespaces returns the clone flags of the namespaces the Spec asks for, and their names.
func CloneFlags(ns plan.Namespaces) (flags uintptr, names []string) {
	for _, n := range []struct {
		on   bool
		flag uintptr
		name string
	}{
		{ns.User, unix.CLONE_NEWUSER, "user"}, {ns.Mount, unix.CLONE_NEWNS, "mount"},
		{ns.PID, unix.CLONE_NEWPID, "pid"}, {ns.IPC, unix.CLONE_NEWIPC, "ipc"},
		{ns.UTS, unix.CLONE_NEWUTS, "uts"}, {ns.Net, unix.CLONE_NEWNET, "net"},
		{ns.Cgroup, unix.CLONE_NEWCGROUP, "cgroup"},
	} {
		if n.on {
			flags |= n.flag
			names = append(names, n.name)
		}
	}
	return flags, names
}

// ReadConfig decodes the plan the host sends over ConfigFd, its length first. The pipe stays
// open: the host closes it later (hostCatchesSignals).
func ReadConfig(f *os.File) (*Config, error) {
	var n [4]byte
	if _, err := io.ReadFull(f, n[:]); err != nil {
		return nil, err
	}
	b := make([]byte, binary.LittleEndian.Uint32(n[:]))
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, err
	}
	cfg := &Config{}
	if err := Unmarshal(b, cfg); err != nil {
		return nil, err
	}
	if cfg.Spec == nil || len(cfg.Spec.Argv) == 0 {
		return nil, &fail.Error{Op: "read sandbox plan", Detail: "no command in the plan", Exit: fail.ExitSetup}
	}
	return cfg, nil
}

// SendNamespaces sends init the clone flags of the namespaces it was started in, ahead of its
// plan. An error means init is gone: its report or exit status says why.
func SendNamespaces(plan *os.File, ns uintptr) {
	plan.Write(binary.LittleEndian.AppendUint32(nil, uint32(ns)))
}

// ReceiveNamespaces reads what SendNamespaces (or spawn/spawn_early.c) sent.
func ReceiveNamespaces(host io.Reader) (uintptr, error) {
	var b [4]byte
	if _, err := io.ReadFull(host, b[:]); err != nil {
		return 0, err
	}
	return uintptr(binary.LittleEndian.Uint32(b[:])), nil
}
