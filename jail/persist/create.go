// Package persist builds persistent sandboxes: the host side of `jail create`, which records a
// sandbox in its state directory (package rundir), sends its init the plan through the keeper
// its constructor forked (jail.Keeper) and hands it over; and the programs the keeper and the
// spawner run from jail's binary (Helper).
package persist

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/api"
	"github.com/jail-sandbox/jail/jail"
	"github.com/jail-sandbox/jail/jail/client"
	"github.com/jail-sandbox/jail/jail/internal/rundir"
	"github.com/jail-sandbox/jail/jail/internal/spawn"
	"github.com/jail-sandbox/jail/plan"
	"github.com/jail-sandbox/jail/proxy"
	"github.com/jail-sandbox/jail/workspace"
)

// Argv is the command of a persistent sandbox's plan: its spawner.
var Argv = []string{spawn.SpawnerArg0}

// Options are create's own: a name, labels (KEY=VALUE), an idle timeout and a time to live (Go
// durations, "": none).
type Options struct {
	ID          string // the sandbox's id (NewID), which its plan's change set is named after
	Name        string
	Labels      []string
	IdleTimeout string
	TTL         string
	Verbose     bool      // log create's steps on Warnings, timed from jail's start
	Warnings    io.Writer // where the plan's warnings go
}

// NewID returns a new sandbox id. The plan is resolved with it, naming the overlay workspace's
// change set (profiles.Host.ChangeSet), before Create takes it in Options.
func NewID() string { return rundir.NewID() }

// Create builds the sandbox spec describes (resolved with Argv as its command) with the keeper
// k forked, records it and hands it over; it returns the sandbox as Get describes it. Until it
// returns successfully, the keeper removes everything it made when k is closed.
func Create(k *jail.Keeper, spec *plan.Spec, opts Options) (*api.Sandbox, error) {
	rec, err := createRecord(opts)
	if err != nil {
		return nil, err
	}
	root, err := rundir.Open()
	if err != nil {
		return nil, api.Errorf(api.Internal, "%s", err)
	}
	if err := exposes(spec, string(root)); err != nil {
		return nil, err
	}
	if err := finishedAtTheEnd(spec); err != nil {
		return nil, err
	}
	for _, w := range spec.Warnings {
		fmt.Fprintf(opts.Warnings, "jail: warning: %s\n", w)
	}
	ws, err := beginWorkspace(spec, rec)
	if err != nil {
		return nil, err
	}
	handed := false // to the keeper, with the sandbox
	if ws != nil {
		defer func() {
			if handed {
				ws.Handed()
			} else {
				ws.Abandon()
			}
		}()
	}
	// init waits for its plan: it goes first, while this process makes the state directory,
	// unless the plan binds the egress proxy's socket, which must then exist before.
	var dir string
	var egress *os.File
	if spec.Network.Proxy != nil {
		if dir, err = stateDir(root, rec, k); err != nil {
			return nil, err
		}
		if egress, err = listenEgress(dir, spec); err != nil {
			return nil, err
		}
	}
	describe(rec, spec)
	if err := k.Start(spec, jail.Options{Verbose: opts.Verbose}); err != nil {
		return nil, api.Errorf(api.Internal, "%s", err)
	}
	if ws != nil {
		// After Start, which may have the keeper fork another init: no init inherits it.
		if err := k.Keep(ws.Lock()); err != nil {
			return nil, api.Errorf(api.Internal, "%s", err)
		}
	}
	if dir == "" {
		if dir, err = stateDir(root, rec, k); err != nil {
			return nil, err
		}
	}
	listeners, err := listen(dir)
	if err != nil {
		return nil, err
	}
	if egress != nil {
		listeners = append(listeners, egress)
	}
	// The records are written while init builds the sandbox: until the keeper has it, a
	// failure removes them with the rest.
	if err := rundir.WriteJSON(dir, rundir.PlanFile, spec); err != nil {
		return nil, api.Errorf(api.Internal, "record the plan: %s", err)
	}
	if err := rundir.WriteJSON(dir, rundir.RecordFile, rec); err != nil {
		return nil, api.Errorf(api.Internal, "record the sandbox: %s", err)
	}
	if ws != nil {
		// For jail rm's fast path, which leaves such a sandbox to Go (fast.c).
		if err := os.Symlink(ws.ChangeSet.Dir, filepath.Join(dir, rundir.ChangesLink)); err != nil {
			return nil, api.Errorf(api.Internal, "record the change set: %s", err)
		}
	}
	if err := k.Ready(); err != nil {
		return nil, api.Errorf(api.Internal, "%s", err)
	}
	var deadline time.Time
	if rec.Deadline != nil {
		deadline = *rec.Deadline
	}
	if err := k.Go(listeners, time.Duration(rec.IdleTimeout), deadline); err != nil {
		return nil, api.Errorf(api.Internal, "%s", err)
	}
	handed = true
	return client.View(rec.ID) // a new sandbox has no processes: no need to ask its spawner
}

// createRecord checks create's own options and starts the sandbox's record with them.
func createRecord(opts Options) (*rundir.Record, error) {
	rec := &rundir.Record{ID: opts.ID, Name: opts.Name, CreatedAt: time.Now().UTC()}
	if !rundir.IsID(rec.ID) {
		return nil, api.Errorf(api.Internal, "create: sandbox id %q is not one NewID makes", rec.ID)
	}
	if opts.Name != "" {
		if err := rundir.CheckName(opts.Name); err != nil {
			return nil, api.Errorf(api.InvalidArgument, "%s", err)
		}
	}
	for _, l := range opts.Labels {
		k, v, err := client.ParseLabel(l)
		if err != nil {
			return nil, api.Errorf(api.InvalidArgument, "%s", err)
		}
		if rec.Labels == nil {
			rec.Labels = map[string]string{}
		}
		rec.Labels[k] = v
	}
	if err := client.CheckLabels(rec.Labels); err != nil {
		return nil, err
	}
	for _, d := range []struct {
		flag string
		text string
		to   *api.Duration
	}{{"--idle-timeout", opts.IdleTimeout, &rec.IdleTimeout}, {"--ttl", opts.TTL, &rec.TTL}} {
		v, err := api.ParseDuration(d.text)
		if err != nil {
			return nil, api.Errorf(api.InvalidArgument, "%s: %s", d.flag, err)
		}
		*d.to = api.Duration(v)
	}
	if rec.TTL > 0 {
		deadline := rec.CreatedAt.Add(time.Duration(rec.TTL))
		rec.Deadline = &deadline
	}
	return rec, nil
}

// stateDir makes the sandbox's directory, locked, under its final name, reserves its name and
// tells the keeper, which removes them if create gives up from here on. The directory is made
// under a hidden name and renamed once locked, so that prune never takes it for a dead one.
func stateDir(root rundir.Root, rec *rundir.Record, k *jail.Keeper) (string, error) {
	dir := root.Dir(rec.ID)
	tmp := root.Dir("." + rec.ID)
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return "", api.Errorf(api.Internal, "state directory: %s", err)
	}
	lock, err := os.OpenFile(filepath.Join(tmp, rundir.Lock), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		defer lock.Close() // the keeper has its own descriptor of it
		err = unix.Flock(int(lock.Fd()), unix.LOCK_EX)
	}
	if err == nil {
		err = os.Rename(tmp, dir)
	}
	if err != nil {
		os.RemoveAll(tmp)
		return "", api.Errorf(api.Internal, "state directory: %s", err)
	}
	nameLink := ""
	if rec.Name != "" {
		if err := root.ReserveName(rec.Name, rec.ID); err != nil {
			os.RemoveAll(dir)
			if errors.Is(err, os.ErrExist) {
				return "", api.Errorf(api.AlreadyExists, "name %q: a sandbox has it (jail rm %s frees it)", rec.Name, rec.Name)
			}
			return "", api.Errorf(api.Internal, "name %q: %s", rec.Name, err)
		}
		nameLink = root.NameLink(rec.Name)
	}
	if err := k.Dir(dir, nameLink, lock); err != nil {
		os.RemoveAll(dir)
		if nameLink != "" {
			os.Remove(nameLink)
		}
		return "", api.Errorf(api.Internal, "%s", err)
	}
	return dir, nil
}

// exposes refuses a plan that binds jail's runtime directory into the sandbox (a grant of a
// directory above it): its sockets must stay out of every sandbox's reach. The keepers refuse
// connections from inside sandboxes anyway; this says so before anything is built.
func exposes(spec *plan.Spec, root string) error {
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		real = root
	}
	for _, m := range spec.Mounts {
		if m.Kind != plan.MountBind && m.Kind != plan.MountROBind {
			continue
		}
		if rel, err := filepath.Rel(m.Source, real); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return api.Errorf(api.InvalidArgument, "%s %s would show jail's runtime directory %s inside the sandbox; grant a directory beside it, or set XDG_RUNTIME_DIR elsewhere", m.Kind, m.Source, root)
		}
	}
	return nil
}

// beginWorkspace creates the change set of the plan's overlay workspace (nil when it has none),
// named after the sandbox, whose keeper will hold its lock: the change set is the sandbox's
// workspace, every exec writing it, for as long as the sandbox lives, and stays after it until
// applied or discarded.
func beginWorkspace(spec *plan.Spec, rec *rundir.Record) (*workspace.Run, error) {
	ws, err := workspace.Begin(spec)
	if err != nil || ws == nil {
		if err != nil {
			err = api.Errorf(api.Internal, "%s", err)
		}
		return nil, err
	}
	if ws.ChangeSet.ID != rec.ID {
		ws.Abandon()
		return nil, api.Errorf(api.Internal, "create: the plan's change set %s is not sandbox %s's", ws.ChangeSet.ID, rec.ID)
	}
	if err := ws.ForSandbox(rec.Name); err != nil {
		ws.Abandon()
		return nil, api.Errorf(api.Internal, "%s", err)
	}
	rec.Workspace = "overlay"
	return ws, nil
}

// finishedAtTheEnd refuses what a run finishes on the host once its command has ended, which a
// persistent sandbox, whose end is rm or a timer in the keeper, does not yet do: git commit
// mode's import of the commits made inside.
func finishedAtTheEnd(spec *plan.Spec) error {
	if spec.Git != nil && spec.Git.Import != nil {
		return api.Errorf(api.InvalidArgument, "git commit mode is for a run: a persistent sandbox does not import its commits yet; use a profile without [git] commit")
	}
	return nil
}

// listen binds the sandbox's sockets in dir: the API's and the control socket.
func listen(dir string) ([]*os.File, error) {
	var files []*os.File
	for _, s := range []struct{ name, network string }{{rundir.APISocket, "unix"}, {rundir.CtlSocket, "unixpacket"}} {
		f, err := listenFile(filepath.Join(dir, s.name), s.network)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

// listenEgress binds the egress proxy's socket in dir, the plan binding it into the sandbox
// (it goes with the state directory), and records the proxy's policy beside it.
func listenEgress(dir string, spec *plan.Spec) (*os.File, error) {
	p := spec.Network.Proxy
	sock := filepath.Join(dir, rundir.EgressSocket)
	// Bound last; Landlock's rules, which mirror the grants, leave it out: init's setup, which
	// reaches it, is not restricted. (A run's proxy needs nothing on disk: plan.Proxy.)
	p.HostSocket, p.Socket = sock, proxy.SocketPath
	spec.Mounts = append(spec.Mounts, plan.Mount{Kind: plan.MountROBind, Source: sock, Target: p.Socket})
	f, err := listenFile(sock, "unix")
	if err != nil {
		return nil, err
	}
	if err := rundir.WriteJSON(dir, rundir.EgressPolicy, jail.EgressPolicy(spec)); err != nil {
		f.Close()
		return nil, api.Errorf(api.Internal, "record the egress policy: %s", err)
	}
	return f, nil
}

// listenFile listens on the unix socket at path and returns the listener as a file.
func listenFile(path, network string) (*os.File, error) {
	l, err := net.ListenUnix(network, &net.UnixAddr{Name: path, Net: network})
	if err != nil {
		return nil, api.Errorf(api.Internal, "listen on %s: %s", path, err)
	}
	l.SetUnlinkOnClose(false) // the keeper has it now
	defer l.Close()
	f, err := l.File()
	if err != nil {
		return nil, api.Errorf(api.Internal, "listen on %s: %s", path, err)
	}
	return f, nil
}

// describe fills the record with what the plan grants: the profile, the working directories,
// the mounts as the command sees them, the network, the default timeout of each command.
func describe(rec *rundir.Record, spec *plan.Spec) {
	rec.Profile = spec.Profile
	rec.Workdir, _ = os.Getwd()
	rec.Cwd = spec.Cwd
	rec.Timeout = api.Duration(time.Duration(spec.Limits.TimeoutSeconds * float64(time.Second)))
	g := &rec.Grants
	for _, m := range spec.Mounts {
		switch m.Kind {
		case plan.MountROBind:
			if spec.Network.Proxy == nil || m.Source != spec.Network.Proxy.HostSocket {
				g.Read = append(g.Read, m.Target)
			}
		case plan.MountBind:
			g.Write = append(g.Write, m.Target)
		case plan.MountOverlay:
			if w, ok := spec.WorkspaceOverlay(); ok && w.Target == m.Target {
				g.Write = append(g.Write, m.Target) // writable; its writes wait in the change set
			}
		case plan.MountTmpfs:
			g.Tmpfs = append(g.Tmpfs, m.Target)
		case plan.MountHideDir, plan.MountHideFile:
			g.Hide = append(g.Hide, m.Target)
		}
	}
	rec.Network = api.Network{Mode: spec.Network.Mode}
	if p := spec.Network.Proxy; p != nil {
		rec.Network.AllowHosts = p.Allow
		rec.Network.AllowPrivate = p.AllowPrivate
	}
}
