package profiles

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// builtins are the profiles shipped inside the binary, one NAME.toml each.
//
// Decoding them cost every run about 0.2 ms of CPU (go-toml's reflection, recording each value's
// line, and the heap and code pages that touched in a fresh process): `go generate` writes what
// decoding each gives as Go (builtins_parsed.go), which parseAll returns instead when the
// embedded text is the one it was generated from. Editing a profile without regenerating makes
// it decoded again (and TestBuiltinsParsed fail), never a stale value used.
//
//go:generate go test -run ^TestBuiltinsParsed$ . -update
//go:embed *.toml
var builtins embed.FS

// DefaultProfile is the profile used when none is named.
const DefaultProfile = "agent"

// builtinPrefix marks a built-in profile's Source and error locations.
const builtinPrefix = "builtin:"

// Load reads the profile ref and applies what it extends. ref is a file when it contains a /
// or ends in .toml (relative to the host's working directory; an extends entry's relative file
// is relative to the file naming it); otherwise a name, looked up as NAME.toml in
// $XDG_CONFIG_HOME/jail (default ~/.config/jail), /etc/jail, then among the built-ins. The
// profiles in extends are merged first, in order, then the file itself; a cycle is an error
// naming the chain. The result has no extends left and its Source is the file it came from.
func Load(ref string, host Host) (*Profile, error) {
	return (&loader{host: host}).load(ref, host.Cwd)
}

// loader carries the chain of profiles being loaded, to report extends cycles.
type loader struct {
	host  Host
	chain []string
	// keepGoing loads what decodes of a file with unknown keys or wrong types, and collects
	// those errors in errs, for Check.
	keepGoing bool
	errs      ErrorList
}

func (l *loader) load(ref, dir string) (*Profile, error) {
	file, data, err := l.locate(ref, dir)
	if err != nil {
		return nil, err
	}
	if slices.Contains(l.chain, file) {
		return nil, fmt.Errorf("extends cycle: %s → %s", strings.Join(l.chain, " → "), file)
	}
	l.chain = append(l.chain, file)
	defer func() { l.chain = l.chain[:len(l.chain)-1] }()

	p, errs := parseAll(file, data)
	if len(errs) > 0 && (!l.keepGoing || p == nil) {
		return nil, errs.err()
	}
	l.errs = append(l.errs, errs...)
	merged := &Profile{}
	for i, parent := range p.Extends {
		if climbs(parent) {
			return nil, p.errorAt("extends", parent, "%s climbs out of the directory of %s: a relative extends stays beside the file naming it (or beneath), so that the directory a profile is kept in (.jail/, which agent protects) holds everything it extends; write an absolute path to reach further", parent, file)
		}
		base, err := l.load(parent, l.dirOf(file))
		var located *Error
		if err != nil && !errors.As(err, &located) {
			return nil, p.errorAt("extends", parent, "%w", err)
		}
		if err != nil {
			return nil, err
		}
		if i == 0 { // base is a merge result only this load holds: merging it onto nothing would copy it
			merged = base
			continue
		}
		merged.apply(base)
	}
	merged.apply(p)
	merged.Extends = nil
	merged.Source = file
	return merged, nil
}

// locate finds ref's content; file is its absolute path or "builtin:NAME".
func (l *loader) locate(ref, dir string) (file string, data []byte, err error) {
	if isFileRef(ref) {
		file = absFrom(dir, ref)
		data, err = readProfile(file)
		if err != nil {
			return "", nil, fmt.Errorf("profile %s: %w", ref, err)
		}
		return file, data, nil
	}
	if ref == "" {
		return "", nil, errors.New("empty profile name")
	}
	for _, dir := range l.host.searchDirs() {
		file = filepath.Join(dir, ref+".toml")
		data, err = readProfile(file)
		if err == nil {
			return file, data, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", nil, fmt.Errorf("profile %s: %w", ref, err)
		}
	}
	if data, err = builtins.ReadFile(ref + ".toml"); err == nil {
		return builtinPrefix + ref, data, nil
	}
	return "", nil, fmt.Errorf("profile %q not found in %s or the built-ins (%s)",
		ref, strings.Join(l.host.searchDirs(), ", "), strings.Join(builtinNames(), ", "))
}

// dirOf is the directory relative file references in file's extends start from.
func (l *loader) dirOf(file string) string {
	if strings.HasPrefix(file, builtinPrefix) {
		return l.host.Cwd
	}
	return filepath.Dir(file)
}

// climbs reports whether a relative file reference leaves its directory (../base.toml): the
// project directory around .jail/ is one an earlier sandboxed command could write.
func climbs(ref string) bool {
	return isFileRef(ref) && !filepath.IsAbs(ref) && !filepath.IsLocal(ref)
}

// isFileRef reports whether a profile reference names a file rather than a profile name.
func isFileRef(ref string) bool {
	return strings.Contains(ref, "/") || strings.HasSuffix(ref, ".toml")
}

// searchDirs are the directories holding NAME.toml profiles, in lookup order. The working
// directory's ./.jail is deliberately not one of them: the directory a command runs in is one
// that earlier sandboxed commands could write (a subdirectory of the project, say, where the
// harness later runs the next command), and a profile planted there would decide the next
// sandbox. A project's own profile is named by path (-p ./.jail/NAME.toml), which the person
// configuring the harness chooses.
func (h Host) searchDirs() []string {
	config := h.getenv("XDG_CONFIG_HOME")
	if config == "" {
		config = filepath.Join(h.Home, ".config")
	}
	return []string{filepath.Join(config, "jail"), "/etc/jail"}
}

// builtinNames lists the built-in profiles.
func builtinNames() []string {
	entries, _ := builtins.ReadDir(".") // an embed.FS root always reads
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".toml"))
	}
	return names
}

// Entry is one profile `jail profile list` shows.
type Entry struct {
	Name        string
	Source      string // the file, or "builtin:NAME"
	Description string // the profile's description, or why it does not parse
}

// List returns every profile a name can reach, sorted by name; a name found in several places
// is listed once, from where Load would take it.
func List(host Host) []Entry {
	found := map[string]Entry{}
	add := func(name, source string, data []byte) {
		if _, shadowed := found[name]; shadowed {
			return
		}
		e := Entry{Name: name, Source: source}
		if p, err := Parse(source, data); err != nil {
			e.Description = "does not parse: " + err.Error()
		} else {
			e.Description = p.Description
		}
		found[name] = e
	}
	for _, dir := range host.searchDirs() {
		files, _ := os.ReadDir(dir) // a missing or unreadable directory holds no profiles
		for _, f := range files {
			name, isProfile := strings.CutSuffix(f.Name(), ".toml")
			if !isProfile {
				continue
			}
			file := filepath.Join(dir, f.Name())
			if data, err := readProfile(file); err == nil {
				add(name, file, data)
			}
		}
	}
	for _, name := range builtinNames() {
		data, _ := builtins.ReadFile(name + ".toml") // listed by ReadDir just above
		add(name, builtinPrefix+name, data)
	}
	entries := slices.Collect(maps.Values(found))
	slices.SortFunc(entries, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	return entries
}
