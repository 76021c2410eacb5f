package gitimport

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/jail-sandbox/jail/plan"
)

// Result is what an import did.
type Result struct {
	Imported []Imported // brought out, under the run's prefix
	Refused  []Refused  // left behind, with why
}

// Imported is one ref brought out: its name inside and on the host.
type Imported struct{ Name, As, Oid string }

// Refused is one ref left behind.
type Refused struct{ Name, Reason string }

// Import brings the refs the command changed, and the objects they need, from g.Import.Dir's
// upper directory into g.CommonDir under g.Import.Refs. It must run once every sandboxed
// process is gone. It leaves the directory for the caller to remove.
func Import(g *plan.Git) (Result, error) {
	var res Result
	imp := g.Import
	upper := filepath.Join(imp.Dir, "upper")
	headDir, err := filepath.Rel(g.CommonDir, g.GitDir)
	if err != nil || strings.HasPrefix(headDir, "..") {
		return res, fmt.Errorf("git directory %s is not inside %s", g.GitDir, g.CommonDir)
	}
	refs, bad := changedRefs(upper, g.CommonDir, headDir)
	for _, name := range bad {
		res.Refused = append(res.Refused, Refused{name, "not a plain ref name"})
	}
	if len(refs) > maxRefs {
		return res, fmt.Errorf("%d refs changed, more than the %d one run may bring out", len(refs), maxRefs)
	}
	if len(refs) == 0 {
		return res, nil
	}
	slices.SortFunc(refs, func(a, b ref) int { return strings.Compare(a.name, b.name) })
	objects := filepath.Join(imp.Dir, "objects")
	if err := quarantine(upper, objects); err != nil {
		return res, fmt.Errorf("quarantine the new objects: %w", err)
	}
	source := filepath.Join(imp.Dir, "source")
	if err := writeSource(source, []string{objects, filepath.Join(g.CommonDir, "objects")}, refs); err != nil {
		return res, fmt.Errorf("write the source repository: %w", err)
	}
	var refspecs []string
	for _, r := range refs {
		if reason := check(g, objects, r); reason != "" {
			res.Refused = append(res.Refused, Refused{r.name, reason})
			continue
		}
		as := imp.Refs + strings.TrimPrefix(r.name, "refs/")
		refspecs = append(refspecs, sourceName(r)+":"+as)
		res.Imported = append(res.Imported, Imported{Name: r.name, As: as, Oid: r.oid})
	}
	if len(refspecs) == 0 {
		return res, nil
	}
	args := append([]string{"-c", "protocol.file.allow=always", "-c", "fetch.fsckObjects=true", "-c", "gc.auto=0",
		"-c", "maintenance.auto=false", "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules", source}, refspecs...)
	if _, err := hostGit(g.CommonDir, nil, args...); err != nil {
		res.Imported = nil
		return res, fmt.Errorf("fetch the new commits: %w", err)
	}
	return res, nil
}

// writeSource writes the repository the host's git fetches from: a bare repository with a
// config and HEAD of jail's, refs as changedRefs found them, and objects only through
// alternates (the quarantined new ones, then the repository's own).
func writeSource(dir string, alternates []string, refs []ref) error {
	format := "[core]\n\trepositoryformatversion = 0\n\tbare = true\n"
	if len(refs[0].oid) == 64 {
		format = "[core]\n\trepositoryformatversion = 1\n\tbare = true\n[extensions]\n\tobjectformat = sha256\n"
	}
	files := map[string]string{
		"HEAD":                    "ref: refs/heads/jail-import\n",
		"config":                  format,
		"objects/info/alternates": strings.Join(alternates, "\n") + "\n",
	}
	for _, r := range refs {
		files[sourceName(r)] = r.oid + "\n"
	}
	for name, text := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			return err
		}
	}
	return os.MkdirAll(filepath.Join(dir, "refs", "heads"), 0o700)
}

// sourceName is where r lies in the source repository: its own name, a detached HEAD under refs/.
func sourceName(r ref) string {
	if r.name == "HEAD" {
		return "refs/jail-detached-head"
	}
	return r.name
}

// check looks at every commit r brings that the repository does not have yet, through the host's
// git (the new objects reached through the quarantine), and returns why r stays behind, or "".
// A commit that adds a gitlink would have the host's git enter a nested repository at that path
// (one the command could have made in the work tree); one that touches a protected name would
// bring in what the profile kept the command from writing (.envrc, .vscode, ...).
func check(g *plan.Git, objects string, r ref) string {
	out, err := hostGit(g.CommonDir, []string{"GIT_ALTERNATE_OBJECT_DIRECTORIES=" + objects},
		"log", "-z", "--format=commit %H", "--raw", "--no-renames", "--no-ext-diff", "--no-textconv", "-r", "-m", "--no-abbrev", r.oid, "--not", "--all")
	if err != nil {
		return fmt.Sprintf("its commits cannot be listed: %v", err)
	}
	commit := ""
	tokens := strings.Split(string(out), "\x00")
	for i := 0; i < len(tokens); i++ {
		t := strings.TrimLeft(tokens[i], "\n")
		if c, ok := strings.CutPrefix(t, "commit "); ok {
			commit = c
			continue
		}
		if !strings.HasPrefix(t, ":") || i+1 >= len(tokens) {
			continue
		}
		fields, path := strings.Fields(t), tokens[i+1]
		i++
		if len(fields) >= 2 && fields[1] == "160000" && fields[0] != ":160000" {
			return fmt.Sprintf("commit %.12s adds a submodule (gitlink) at %q", commit, path)
		}
		for _, part := range strings.Split(path, "/") {
			if slices.Contains(g.Import.Protected, part) {
				return fmt.Sprintf("commit %.12s changes %q, which the profile protects (%s)", commit, path, part)
			}
		}
	}
	return ""
}

// hostGit runs the host's git on the repository whose git directory is gitDir, with the
// caller's environment less every GIT_ variable (a GIT_DIR of the caller's must not redirect
// it), plus env; it returns the standard output. Its error carries git's last line of stderr,
// escaped: it may quote what the command wrote.
func hostGit(gitDir string, env []string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", append([]string{"--git-dir=" + gitDir}, args...)...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, append(env, "GIT_TERMINAL_PROMPT=0")...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		line := strconv.Quote(lastLine(stderr.String()))
		return nil, fmt.Errorf("%v: %s", err, line[1:len(line)-1])
	}
	return stdout.Bytes(), nil
}

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
