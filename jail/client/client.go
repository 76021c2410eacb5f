// Package client is jail's API for persistent sandboxes in Go: create, list, inspect, exec,
// background processes, files, delete. It is the one implementation behind both front ends:
// the command line (`jail create`, `jail exec`, …) calls it, and the HTTP server (jail/server)
// turns each route into one of its calls, so the two cannot drift.
//
// It speaks to a sandbox's keeper and spawner directly (package session, over the sandbox's
// ctl.sock), not HTTP: a command's stdio can then be passed to the spawner as descriptors
// (SCM_RIGHTS), which is how `jail exec` gets the command writing straight to its caller's
// terminal. Create runs `jail create`, whose constructor starts the sandbox before Go's runtime.
// It has no cgo and no C constructors, so any Go program can use it.
package client

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/jail-sandbox/jail/api"
	"github.com/jail-sandbox/jail/jail/internal/rundir"
	"github.com/jail-sandbox/jail/jail/internal/session"
)

// Client reaches this user's sandboxes.
type Client struct {
	// Binary is the jail binary Create runs; "" means this program when it is jail (what
	// os.Executable says ends in /jail), else jail on PATH.
	Binary string
}

// New returns a client of this user's sandboxes.
func New() *Client { return &Client{} }

// root returns the runtime directory if it exists ("" when it does not: no sandbox does).
func root() (rundir.Root, error) {
	r, err := rundir.Existing()
	if err != nil {
		return "", api.Errorf(api.Internal, "%s", err)
	}
	return r, nil
}

// resolve returns the id of the sandbox idOrName names, and its directory.
func resolve(idOrName string) (id, dir string, err error) {
	r, err := root()
	if err != nil {
		return "", "", err
	}
	if id = r.Resolve(idOrName); id == "" {
		return "", "", api.Errorf(api.NotFound, "sandbox %q: no such sandbox (jail ls lists them)", idOrName)
	}
	return id, r.Dir(id), nil
}

// live returns the directory of a sandbox that runs, or why it does not.
func live(idOrName string) (id, dir string, err error) {
	id, dir, err = resolve(idOrName)
	if err == nil && !rundir.Live(dir) {
		err = api.Errorf(api.FailedPrecondition, "sandbox %s: it is not running any more (jail rm %s removes its record)", id, id)
	}
	return id, dir, err
}

// dial opens a session with the keeper of sandbox dir.
func dial(id, dir string) (*session.Conn, error) {
	c, err := session.Dial(filepath.Join(dir, rundir.CtlSocket))
	if err != nil {
		if !rundir.Live(dir) {
			return nil, api.Errorf(api.FailedPrecondition, "sandbox %s: it is not running any more (jail rm %s removes its record)", id, id)
		}
		return nil, api.Errorf(api.FailedPrecondition, "sandbox %s: connect to its keeper: %s", id, unwrapOp(err))
	}
	return c, nil
}

// unwrapOp drops net's "dial unixpacket PATH:" context, which the caller's message names.
func unwrapOp(err error) error {
	var sys *os.SyscallError
	if errors.As(err, &sys) {
		return sys.Err
	}
	return err
}

// Get returns the sandbox idOrName names, with its processes.
func (c *Client) Get(idOrName string) (*api.Sandbox, error) {
	id, dir, err := resolve(idOrName)
	if err != nil {
		return nil, err
	}
	sb, err := view(id, dir)
	if err != nil {
		return nil, err
	}
	if sb.State == api.StateRunning {
		sb.Processes, _ = listProcesses(id, dir)
	}
	return sb, nil
}

// View returns the sandbox idOrName names as Get does, without its processes (which takes a
// round trip to its spawner).
func View(idOrName string) (*api.Sandbox, error) {
	id, dir, err := resolve(idOrName)
	if err != nil {
		return nil, err
	}
	return view(id, dir)
}

// ListOptions filter List: every label, the name and one of the states must match (empty: any).
type ListOptions struct {
	Labels map[string]string
	Name   string
	States []string
}

// List returns every sandbox of this user that opts matches, oldest first, without their
// processes.
func (c *Client) List(opts ListOptions) ([]api.Sandbox, error) {
	r, err := root()
	if err != nil {
		return nil, err
	}
	ids, err := r.IDs()
	if err != nil {
		return nil, api.Errorf(api.Internal, "list %s: %s", r, err)
	}
	out := []api.Sandbox{}
	for _, id := range ids {
		sb, err := view(id, r.Dir(id))
		if err != nil || !opts.match(sb) {
			continue // removed meanwhile, or still being created
		}
		out = append(out, *sb)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out, nil
}

func (o ListOptions) match(sb *api.Sandbox) bool {
	for k, v := range o.Labels {
		if got, ok := sb.Labels[k]; !ok || got != v {
			return false
		}
	}
	if o.Name != "" && sb.Name != o.Name {
		return false
	}
	if len(o.States) > 0 {
		for _, s := range o.States {
			if s == sb.State {
				return true
			}
		}
		return false
	}
	return true
}

// Patch changes a sandbox's timers and labels: TTL from now, the idle timeout, the labels
// (replaced whole). Nothing of its policy can change.
func (c *Client) Patch(idOrName string, p api.PatchRequest) (*api.Sandbox, error) {
	id, dir, err := live(idOrName)
	if err != nil {
		return nil, err
	}
	if p.Labels != nil {
		if err := CheckLabels(p.Labels); err != nil {
			return nil, err
		}
	}
	rec, err := rundir.UpdateRecord(dir, func(rec *rundir.Record) error {
		if p.TTL != nil {
			rec.TTL = *p.TTL
			rec.Deadline = nil
			if *p.TTL > 0 {
				d := time.Now().Add(time.Duration(*p.TTL)).UTC()
				rec.Deadline = &d
			}
		}
		if p.IdleTimeout != nil {
			rec.IdleTimeout = *p.IdleTimeout
		}
		if p.Labels != nil {
			rec.Labels = p.Labels
		}
		return nil
	})
	if err != nil {
		return nil, api.Errorf(api.Internal, "sandbox %s: update its record: %s", id, err)
	}
	if p.TTL != nil || p.IdleTimeout != nil {
		m := session.Msg{Type: session.MsgTimers, NS1: int64(rec.IdleTimeout)}
		if rec.Deadline != nil {
			m.NS2 = rec.Deadline.UnixNano()
		}
		if err := keeperCall(id, dir, m); err != nil {
			return nil, err
		}
	}
	return c.Get(id)
}

// keeperCall sends the keeper of sandbox id a request and waits for its OK.
func keeperCall(id, dir string, m session.Msg) error {
	conn, err := dial(id, dir)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, _, _, err := conn.Call(m, nil, session.MsgOK); err != nil {
		return api.Errorf(api.Internal, "sandbox %s: its keeper: %s", id, err)
	}
	if m.Type == session.MsgStop {
		conn.Recv() // the end of the connection: the keeper has exited too
	}
	return nil
}

// Delete removes a sandbox: its processes, its sockets, its files. Without force it refuses
// while a process an exec or a start began still runs. The record of a sandbox that is no longer
// running is removed either way. Its overlay workspace's change set stays, unless it holds no
// change: jail apply or jail discard takes it from there.
func (c *Client) Delete(idOrName string, force bool) error {
	id, dir, err := resolve(idOrName)
	if err != nil {
		return err
	}
	defer settle(id)
	if !rundir.Live(dir) {
		return removeRecord(id, dir)
	}
	if !force {
		procs, err := listProcesses(id, dir)
		if err != nil {
			return err
		}
		for _, p := range procs {
			if p.Running {
				return api.Errorf(api.FailedPrecondition, "sandbox %s: process %d (%s) still runs; jail rm -f %s (force=1) kills it", id, p.PID, strings.Join(p.Cmd, " "), id)
			}
		}
	}
	if err := keeperCall(id, dir, session.Msg{Type: session.MsgStop}); err != nil {
		if !rundir.Live(dir) { // it ended meanwhile
			return removeRecord(id, dir)
		}
		return err
	}
	return nil
}

// removeRecord removes what is left of a sandbox that is not running: its directory and its
// name's link.
func removeRecord(id, dir string) error {
	if rec, err := rundir.ReadRecord(dir); err == nil && rec.Name != "" {
		r := rundir.Root(filepath.Dir(dir))
		if target, _ := os.Readlink(r.NameLink(rec.Name)); target == id {
			os.Remove(r.NameLink(rec.Name))
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return api.Errorf(api.Internal, "remove %s: %s", dir, err)
	}
	return nil
}

// Prune removes every sandbox that is not running (exited or dead), the leftovers of creates
// that were interrupted, and names whose sandbox is gone. It returns the ids it removed.
func (c *Client) Prune() ([]string, error) {
	r, err := root()
	if err != nil || r == "" {
		return []string{}, err
	}
	entries, err := os.ReadDir(string(r))
	if err != nil {
		return nil, api.Errorf(api.Internal, "prune %s: %s", r, err)
	}
	removed := []string{}
	for _, e := range entries {
		name := e.Name()
		id := strings.TrimPrefix(name, ".")
		if !e.IsDir() || !rundir.IsID(id) || rundir.Live(r.Dir(name)) {
			continue
		}
		if err := removeRecord(id, r.Dir(name)); err != nil {
			return removed, err
		}
		settle(id)
		if name == id {
			removed = append(removed, id)
		}
	}
	// A name is reserved once its sandbox's directory is locked (jail create), so a name
	// whose sandbox is not live is no one's.
	links, _ := os.ReadDir(filepath.Join(string(r), rundir.Names))
	for _, l := range links {
		if target, err := os.Readlink(r.NameLink(l.Name())); err == nil && !rundir.Live(r.Dir(target)) {
			os.Remove(r.NameLink(l.Name()))
		}
	}
	return removed, nil
}

// DaemonSocket returns the path of jail serve's socket, creating the runtime directory it lives
// in when missing.
func DaemonSocket() (string, error) {
	r, err := rundir.Open()
	if err != nil {
		return "", api.Errorf(api.Internal, "%s", err)
	}
	return filepath.Join(string(r), rundir.DaemonSocket), nil
}
