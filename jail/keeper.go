package jail

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/jail-sandbox/jail/jail/internal/fail"
	"github.com/jail-sandbox/jail/jail/internal/placeholder"
	"github.com/jail-sandbox/jail/jail/internal/restrict"
	"github.com/jail-sandbox/jail/jail/internal/session"
	"github.com/jail-sandbox/jail/jail/internal/spawn"
	"github.com/jail-sandbox/jail/jail/internal/verbose"
	"github.com/jail-sandbox/jail/jail/internal/wire"
	"github.com/jail-sandbox/jail/plan"
)

// Keeper is `jail create`'s link to the keeper of the sandbox it builds (spawn/keeper.c), which
// its constructor forked before Go's runtime and which forked the sandbox's init. create sends
// init its plan here as a run's host does, tells the keeper where the sandbox's state lives
// (Dir) and, once the spawner runs, hands the sandbox over (Go). Until then, closing the link
// (or dying) makes the keeper remove everything: a half-made sandbox never stays.
type Keeper struct {
	conn     *session.Conn
	ns       uintptr  // the clone flags of init's namespaces
	plan     *os.File // init's plan, written once
	messages *os.File // init's messages
	log      verbose.Log
	// held is the hold on the plan's placeholders (package placeholder), until the keeper has
	// it (handed): then the keeper releases it when the sandbox ends.
	held   *placeholder.Claim
	handed bool
}

// TakeKeeper returns the keeper this process's constructor forked, with the init it started;
// nil when there is none (the command line was not `jail create [OPTIONS]`).
func TakeKeeper() (*Keeper, error) {
	f := spawn.TakeKeeperLink()
	if f == nil {
		return nil, nil
	}
	c, err := session.FromFile(f)
	if err != nil {
		return nil, fail.New("keeper link", "", err)
	}
	k := &Keeper{conn: c}
	return k, k.takeInit()
}

// takeInit reads the keeper's word on the init it started: its pipes, or why it has none.
func (k *Keeper) takeInit() error {
	m, _, files, err := k.conn.Recv()
	if err == nil && m.Type == session.MsgError {
		err = syscall.Errno(m.Value)
	}
	if err == nil && (m.Type != session.MsgInit || len(files) != 2) {
		err = fmt.Errorf("unexpected message %q from the keeper", rune(m.Type))
	}
	if err != nil {
		for _, f := range files {
			f.Close()
		}
		return startError(err)
	}
	k.closeInit()
	k.plan, k.messages = files[0], files[1]
	k.ns = uintptr(m.Flags)
	return nil
}

// closeInit lets go of the current init's pipes.
func (k *Keeper) closeInit() {
	if k.plan != nil {
		k.plan.Close()
		k.messages.Close()
	}
	k.plan, k.messages = nil, nil
}

// Close gives up: the keeper kills init and removes what was made, the placeholders it holds
// included. Nil-safe.
func (k *Keeper) Close() {
	if k != nil {
		k.closeInit()
		k.conn.Close()
		k.letGo()
	}
}

// letGo drops create's copy of the placeholders' hold: once the keeper has its own, closed (the
// keeper releases it when the sandbox ends), else released here, no sandbox having used it.
func (k *Keeper) letGo() {
	if k.handed {
		for _, f := range k.held.Files() {
			f.Close()
		}
	} else {
		k.held.Release()
	}
	k.held = nil
}

// Dir tells the keeper the sandbox's state directory, the link of its name ("": none) and the
// lock file it keeps locked while it lives. From here on the keeper removes them when create
// gives up.
func (k *Keeper) Dir(dir, nameLink string, lock *os.File) error {
	_, _, _, err := k.conn.Call(session.Msg{Type: session.MsgDir}, session.Strings([]string{dir, nameLink}), session.MsgOK, int(lock.Fd()))
	if err != nil {
		return fail.New("hand the state directory to the keeper", dir, err)
	}
	return nil
}

// Start has the sandbox spec describes built, with the spawner as its command: init (again, in
// the namespaces the plan asks for, when the constructor guessed others) gets its plan. Ready
// returns once the spawner runs; what create has to do meanwhile it does between the two. Of
// opts, only Verbose matters.
func (k *Keeper) Start(spec *plan.Spec, opts Options) error {
	log := opts.log()
	if err := makeCaches(spec); err != nil { // caches.go
		return err
	}
	flags, names := wire.CloneFlags(spec.Namespaces)
	if flags != k.ns {
		log.Printf("host: the plan does not fit the init the keeper started: starting another")
		if err := k.conn.Send(session.Msg{Type: session.MsgSpawn, Value: int32(flags)}, nil); err != nil {
			return fail.New("ask the keeper for an init", "", err)
		}
		if err := k.takeInit(); err != nil {
			return err
		}
	} else {
		log.Printf("host: keeper and init started early, before jail's own runtime (namespaces %s)", strings.Join(names, ","))
	}
	bpf, err := restrict.CompileSeccomp(spec)
	if err != nil {
		return fail.New("compile seccomp filter", "", err)
	}
	// The placeholders the protections sit on, made before the plan goes and held by the keeper
	// for as long as the sandbox lives (run.go does the same for a run).
	if err := k.hold(spec); err != nil {
		return err
	}
	cfg := wire.Config{Spec: spec, BPF: bpf, Spawner: true, Started: spawn.Started, Verbose: opts.Verbose}
	log.Printf("host: send the plan")
	b := wire.Marshal(&cfg)
	_, err = k.plan.Write(append(binary.LittleEndian.AppendUint32(nil, uint32(len(b))), b...))
	if err == nil {
		err = wire.SendMade(k.plan, wire.Made{}) // made before the plan went: init waits for nothing
	}
	k.plan.Close() // no signals to catch first: nothing of create's reaches the sandbox
	k.plan = nil
	if err != nil {
		log.Printf("host: send plan: %s", err) // init died: its report says why
	}
	k.log = log
	return nil
}

// hold makes the plan's placeholders and hands the keeper its hold on them, a few descriptors a
// message, in order.
func (k *Keeper) hold(spec *plan.Spec) error {
	held, err := placeholder.Take(spec.Mounts)
	if err != nil {
		return fail.New("protect", "", err)
	}
	k.held = held
	files := held.Files()
	for len(files) > 0 {
		n := min(len(files), session.MaxFds)
		fds := make([]int, n)
		for i, f := range files[:n] {
			fds[i] = int(f.Fd())
		}
		if _, _, _, err := k.conn.Call(session.Msg{Type: session.MsgHold}, nil, session.MsgOK, fds...); err != nil {
			return fail.New("hand the placeholders to the keeper", "", err)
		}
		k.handed = true // from the first: the keeper releases what it has
		files = files[n:]
	}
	return nil
}

// Keep hands the keeper f to keep open until the sandbox is gone: the lock of the overlay
// workspace's change set (package workspace), which says the sandbox is live while it is held.
func (k *Keeper) Keep(f *os.File) error {
	if _, _, _, err := k.conn.Call(session.Msg{Type: session.MsgKeep}, nil, session.MsgOK, int(f.Fd())); err != nil {
		return fail.New("hand the change set's lock to the keeper", "", err)
	}
	return nil
}

// Ready reads init's messages until the spawner runs, or init reports its error.
func (k *Keeper) Ready() error {
	log := k.log
	sc := bufio.NewScanner(k.messages)
	sc.Buffer(nil, 1<<16)
	for sc.Scan() {
		var msg wire.Message
		if err := json.Unmarshal(sc.Bytes(), &msg); err != nil {
			return &fail.Error{Op: "read sandbox report", Detail: err.Error(), Exit: fail.ExitSetup}
		}
		switch {
		case msg.Error != nil:
			_, err := decodeReport(mustJSON(msg.Error))
			return err
		case msg.Started != nil:
			log.Printf("host: the spawner runs (pid %d inside)", msg.Started.PID)
			return nil
		}
	}
	if err := sc.Err(); err != nil && !errors.Is(err, io.EOF) {
		return fail.New("read sandbox report", "", err)
	}
	return &fail.Error{Op: "sandbox init", Detail: "ended before the spawner ran", Exit: fail.ExitSetup}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// Go hands the running sandbox over to the keeper: the listening sockets it serves (the API's,
// the control socket, and the egress proxy's when there is one), its idle timeout and deadline
// (zero: none). Once it returns, the sandbox lives on without this process.
func (k *Keeper) Go(listeners []*os.File, idle time.Duration, deadline time.Time) error {
	fds := make([]int, len(listeners))
	for i, l := range listeners {
		fds[i] = int(l.Fd())
	}
	m := session.Msg{Type: session.MsgGo, NS1: int64(idle)}
	if !deadline.IsZero() {
		m.NS2 = deadline.UnixNano()
	}
	if _, _, _, err := k.conn.Call(m, nil, session.MsgOK, fds...); err != nil {
		return fail.New("hand the sandbox to its keeper", "", err)
	}
	k.closeInit()
	k.letGo()
	return nil
}
