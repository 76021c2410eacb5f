package wire

import (
	"encoding/binary"
	"errors"
	"io"
	"os"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/jail/internal/fail"
	"github.com/jail-sandbox/jail/plan"
)

// The init's inherited descriptors, beyond stdio.
const (
	// ConfigFd is a unix stream socket, host → init: its namespaces, Config (encoding.go) after
	// its length, with the descriptors the plan needs (SendConfig), then Made once the host has
	// made the placeholders (SendMade), then EOF.
	ConfigFd = 3
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

// Channel makes ConfigFd's socket pair: the host's end and init's.
func Channel() (host, init *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	return os.NewFile(uintptr(fds[0]), "plan"), os.NewFile(uintptr(fds[1]), "plan (init)"), nil
}

// maxPlanFiles is how many descriptors a plan may come with.
const maxPlanFiles = 4

// SendConfig sends init b, a marshalled Config, its length first, with files (at most
// maxPlanFiles) attached to that length: only a socket can carry a descriptor, and init then
// holds the only copy the sandbox has (the egress proxy's end of its socketpair, which
// nothing on disk names).
func SendConfig(plan *os.File, b []byte, files []*os.File) error {
	msg := binary.LittleEndian.AppendUint32(make([]byte, 0, 4+len(b)), uint32(len(b)))
	msg = append(msg, b...)
	var fds []int
	for _, f := range files {
		fds = append(fds, int(f.Fd()))
	}
	n, err := unix.SendmsgN(int(plan.Fd()), msg, unix.UnixRights(fds...), nil, 0)
	if err == nil && n < len(msg) {
		_, err = plan.Write(msg[n:])
	}
	return err
}

// ReadConfig decodes the plan the host sends over ConfigFd, and takes the descriptors sent with
// it (close-on-exec). A pipe (a persistent sandbox's keeper's) carries the plan alone. The socket stays open: the host closes it later (hostCatchesSignals).
func ReadConfig(f *os.File) (*Config, []*os.File, error) {
	var n [4]byte
	oob := make([]byte, unix.CmsgSpace(4*maxPlanFiles))
	got, oobn, flags, _, err := unix.Recvmsg(int(f.Fd()), n[:], oob, unix.MSG_CMSG_CLOEXEC)
	if errors.Is(err, unix.ENOTSOCK) { // a persistent sandbox's keeper sends its plan on a pipe
		got, oobn, flags = 0, 0, 0
		if _, err = io.ReadFull(f, n[:]); err == nil {
			got = len(n)
		}
	}
	if err != nil {
		return nil, nil, err
	}
	files, err := planFiles(oob[:oobn])
	if err == nil && flags&unix.MSG_CTRUNC != 0 {
		err = errors.New("more descriptors than a plan comes with")
	}
	if err == nil && got < len(n) {
		_, err = io.ReadFull(f, n[got:])
	}
	if err == nil && got == 0 {
		err = io.ErrUnexpectedEOF
	}
	var b []byte
	if err == nil {
		b = make([]byte, binary.LittleEndian.Uint32(n[:]))
		_, err = io.ReadFull(f, b)
	}
	cfg := &Config{}
	if err == nil {
		err = Unmarshal(b, cfg)
	}
	if err == nil && (cfg.Spec == nil || len(cfg.Spec.Argv) == 0) {
		err = &fail.Error{Op: "read sandbox plan", Detail: "no command in the plan", Exit: fail.ExitSetup}
	}
	if err != nil {
		for _, f := range files {
			f.Close()
		}
		return nil, nil, err
	}
	return cfg, files, nil
}

// planFiles takes the descriptors in a control message.
func planFiles(oob []byte) ([]*os.File, error) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, err
	}
	var files []*os.File
	for i := range msgs {
		fds, err := unix.ParseUnixRights(&msgs[i])
		if err != nil {
			return files, err
		}
		for _, fd := range fds {
			files = append(files, os.NewFile(uintptr(fd), "from the plan"))
		}
	}
	return files, nil
}

// Made is what the host says once the placeholders the plan's protections sit on exist (package
// placeholder): it sends the plan before it makes them, and the setup builds the root up to the
// first mount on one (plan.OnPlaceholder) meanwhile, then waits for this.
type Made struct {
	// HostLeaves says the host hands the sandbox to jail's waiter from here (sandbox.canLeave):
	// init prints its own error, as the host would have.
	HostLeaves bool
}

// SendMade sends init m, after the plan. An error means init is gone: its report or exit status
// says why.
func SendMade(plan *os.File, m Made) error {
	b := []byte{0}
	if m.HostLeaves {
		b[0] = 1
	}
	_, err := plan.Write(b)
	return err
}

// ReceiveMade reads what SendMade sent.
func ReceiveMade(host io.Reader) (Made, error) {
	var b [1]byte
	if _, err := io.ReadFull(host, b[:]); err != nil {
		return Made{}, err
	}
	if b[0] > 1 {
		return Made{}, errors.New("not a placeholders message")
	}
	return Made{HostLeaves: b[0] == 1}, nil
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
