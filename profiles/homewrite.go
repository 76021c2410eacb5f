package profiles

import (
	"path/filepath"
	"slices"
)

// The working directory's write grant (agent's write = ["$CWD"]) goes wherever jail is started.
// Started in the home directory, or in a directory that holds it (/home, /), it would make the
// whole home writable: shell start-up files, ~/.profile, ~/.local/bin on PATH, ~/.config's
// autostart and systemd units, ~/.gitconfig, Python's .pth files, and more that no list of names
// covers, all of which the host runs later. Such a run is refused; a home the profile or the
// command line names without $CWD (--rw ~) is granted: the user chose it.

// written is a write grant as planned: the entry, the physical path it binds, and whether only
// $CWD named it.
type written struct {
	e        entry
	physical string
	fromCwd  bool
}

// cwdWrites returns the values of p's filesystem.write, as expand makes them with vars, that
// only entries using $CWD give: a value an entry without $CWD gives too is named by the user.
func cwdWrites(p *Profile, vars map[string]string) map[string]bool {
	fromCwd, named := map[string]bool{}, map[string]bool{}
	for _, raw := range p.Filesystem.Write {
		v, err := expandPath(raw, vars)
		switch {
		case err != nil: // expand reports it
		case uses(raw, "CWD"):
			fromCwd[v] = true
		default:
			named[v] = true
		}
	}
	for v := range named {
		delete(fromCwd, v)
	}
	return fromCwd
}

// homeFromCwd refuses a write grant that only $CWD named when it is the home directory or holds
// it, unless a grant named otherwise binds the same directory. An overlay workspace is let be:
// its writes wait in a change set, and `jail apply` refuses the files the host runs by itself.
func (pl *planner) homeFromCwd() error {
	if pl.p.Filesystem.Workspace == "overlay" {
		return nil
	}
	home, err := pl.paths.physical(filepath.Clean(pl.host.Home))
	if err != nil {
		return nil // home() says so
	}
	for _, w := range pl.writes {
		if !w.fromCwd || !within(home, w.physical) || slices.ContainsFunc(pl.writes, func(n written) bool {
			return !n.fromCwd && n.physical == w.physical
		}) {
			continue
		}
		what := "is the home directory"
		if w.physical != home {
			what = "holds the home directory " + home
		}
		return pl.p.errorAt(w.e.key, w.e.raw, "refusing to grant write to the working directory %s: it %s, whose shell start-up files and tools' settings the host runs later; run jail from a project directory, or name the home to grant it (--rw ~, or write = [\"~\"] in a profile)", w.physical, what)
	}
	return nil
}
