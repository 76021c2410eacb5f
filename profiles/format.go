package profiles

import (
	"bytes"
	"fmt"
	"slices"

	toml "github.com/pelletier/go-toml/v2"
)

// Format renders p as TOML for `jail profile show` (pass it through Load and Expand first to
// show the fully resolved profile). Grants that widen the sandbox beyond its defaults are
// listed first in a comment block, so they cannot go unnoticed. The output parses back to p.
func Format(p *Profile) ([]byte, error) {
	var buf bytes.Buffer
	if p.Source != "" {
		fmt.Fprintf(&buf, "# profile: %s\n", p.Source)
	}
	for _, w := range widenings(p) {
		fmt.Fprintf(&buf, "# WIDENS: %s\n", w)
	}
	var body bytes.Buffer
	if err := toml.NewEncoder(&body).SetArraysMultiline(true).Encode(p); err != nil {
		return nil, fmt.Errorf("format profile: %w", err)
	}
	if buf.Len() > 0 && body.Len() > 0 {
		buf.WriteString("\n")
	}
	buf.Write(body.Bytes())
	return buf.Bytes(), nil
}

// widenings lists the settings that give the command more than the default sandbox does.
func widenings(p *Profile) []string {
	var w []string
	if p.Network.Mode == "host" {
		w = append(w, `network.mode = "host": the command shares the host's network (localhost services included)`)
	}
	for _, dir := range p.Filesystem.Write {
		if dir == "/" || dir == "/?" {
			w = append(w, "filesystem.write includes /: the whole host filesystem is writable")
		}
	}
	if len(p.Syscalls.Allow) > 0 && p.Syscalls.Default != "deny" {
		w = append(w, fmt.Sprintf("syscalls.allow removes %v from the default seccomp deny-list", p.Syscalls.Allow))
	}
	if p.Syscalls.Default == "off" {
		w = append(w, `syscalls.default = "off": no seccomp filter at all (for measuring its cost)`)
	}
	if p.Landlock.Read != nil || p.Landlock.Write != nil {
		w = append(w, "landlock.read/write replace the Landlock rules mirrored from [filesystem]")
	}
	if p.Landlock.Mode == "off" {
		w = append(w, `landlock.mode = "off": no Landlock layer under the mounts`)
	}
	if p.Sandbox.Fallback != "" {
		w = append(w, fmt.Sprintf("sandbox.fallback = %q: runs without namespaces where they are unavailable", p.Sandbox.Fallback))
	}
	if p.Sandbox.AllowWeaker != nil && *p.Sandbox.AllowWeaker {
		w = append(w, "sandbox.allow_weaker = true: a run starts even when protections cannot hold (a fallback run's, or a /proc of the sandbox's own under a container's masks)")
	}
	switch p.Git.Mode {
	case "commit":
		w = append(w, `git.mode = "commit": commits made inside are imported at exit as refs/jail/RUN/... (objects and refs only)`)
	case "off":
		w = append(w, `git.mode = "off": the repository's git directory is as writable as [filesystem] makes it (hooks, config)`)
	}
	if slices.Contains(p.Process.Env, "*") {
		w = append(w, `process.env includes "*": every host environment variable (and its secrets) passes`)
	}
	return w
}
