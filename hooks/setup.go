package hooks

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Scope says which of a harness's settings files holds jail's hook.
type Scope string

const (
	ScopeUser    Scope = "user"    // the user's own settings: every project
	ScopeProject Scope = "project" // the project's settings, in its directory
)

// Env is what the setup code reads from the host: the home directory, the project directory,
// the environment (os.Getenv) and the jail binary at work, passed in so that tests can point it
// at a fresh home.
type Env struct {
	Home   string
	Dir    string
	Getenv func(string) string
	Jail   string // this jail binary's path: a hook running a program of its name is jail's too
}

// getenv is e.Getenv, or nothing set.
func (e Env) getenv(key string) string {
	if e.Getenv == nil {
		return ""
	}
	return e.Getenv(key)
}

// setup is where a harness reads its pre-tool hooks and what jail's entry there looks like.
type setup struct {
	cli     string // the CLI's command name
	pkg     string // its npm package
	minimum string // the oldest release jail's integration is verified with
	// settings returns the settings file for scope.
	settings func(e Env, scope Scope) string
	// handler is jail's handler object for the hook command.
	handler func(command string) map[string]any
}

var setups = map[string]setup{
	"claude-code": {cli: "claude", pkg: "@anthropic-ai/claude-code", minimum: "2.1.0",
		settings: func(e Env, scope Scope) string {
			if scope == ScopeProject {
				return filepath.Join(e.Dir, ".claude", "settings.json")
			}
			return filepath.Join(claudeConfigDir(e), "settings.json")
		},
		handler: func(c string) map[string]any { return map[string]any{"type": "command", "command": c} }},
	"codex": {cli: "codex", pkg: "@openai/codex", minimum: "0.171.0",
		settings: func(e Env, scope Scope) string {
			if scope == ScopeProject {
				return filepath.Join(e.Dir, ".codex", "hooks.json")
			}
			return filepath.Join(codexHome(e), "hooks.json")
		},
		// Only type and command: Codex's trust hash covers every field, and it is computed
		// here from exactly these (codexTrustHash).
		handler: func(c string) map[string]any { return map[string]any{"type": "command", "command": c} }},
	"gemini": {cli: "gemini", pkg: "@google/gemini-cli", minimum: "0.61.0",
		settings: func(e Env, scope Scope) string {
			if scope == ScopeProject {
				return filepath.Join(e.Dir, ".gemini", "settings.json")
			}
			return filepath.Join(geminiHome(e), ".gemini", "settings.json")
		},
		handler: func(c string) map[string]any {
			return map[string]any{"name": "jail", "type": "command", "command": c, "timeout": 10000}
		}},
}

func claudeConfigDir(e Env) string {
	if d := e.getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return d
	}
	return filepath.Join(e.Home, ".claude")
}

func codexHome(e Env) string {
	if d := e.getenv("CODEX_HOME"); d != "" {
		return d
	}
	return filepath.Join(e.Home, ".codex")
}

// HookCommand is the command line a harness's settings run for jail's hook.
func HookCommand(harnessName, jailPath, profile string) (string, error) {
	if profile == "" {
		profile = DefaultProfile
	}
	return quoteLine(jailPath, "hook", harnessName, "-p", profile)
}

// jailHandler reports whether a hook command is jail's hook for harnessName: its program is
// named jail, or as self is (the jail binary at work, which may have another name), and its
// first arguments are `hook HARNESS`. It returns the jail path and profile.
func jailHandler(command, harnessName, self string) (jailPath, profile string, ok bool) {
	f := strings.Fields(command)
	if len(f) < 3 || f[1] != "hook" || f[2] != harnessName {
		return "", "", false
	}
	if name := filepath.Base(strings.Trim(f[0], `'"`)); name != "jail" && (self == "" || name != filepath.Base(self)) {
		return "", "", false
	}
	profile = DefaultProfile
	for i := 3; i+1 < len(f); i++ {
		if f[i] == "-p" || f[i] == "--profile" {
			profile = strings.Trim(f[i+1], `'"`)
		}
	}
	return strings.Trim(f[0], `'"`), profile, true
}

// group is one matcher group of a hooks table: {"matcher": …, "hooks": [handler…]}.
type group struct {
	Matcher string            `json:"matcher"`
	Hooks   []json.RawMessage `json:"hooks"`
}

type handler struct {
	Type    string `json:"type"`
	Command string `json:"command"`
}

// found is jail's hook as a settings file holds it.
type found struct {
	group, index int    // its place: the group's and the handler's index
	matcher      string // its group's matcher
	jailPath     string
	profile      string
}

// findJail lists jail's handlers for harnessName under event in a settings object (self: see
// jailHandler).
func findJail(settings object, event, harnessName, self string) ([]found, error) {
	hooksTable, err := settings.child("hooks")
	if err != nil {
		return nil, err
	}
	raw, ok := hooksTable.vals[event]
	if !ok {
		return nil, nil
	}
	var groups []group
	if err := json.Unmarshal(raw, &groups); err != nil {
		return nil, fmt.Errorf("hooks.%s: %w", event, err)
	}
	var list []found
	for gi, g := range groups {
		for hi, h := range g.Hooks {
			var hd handler
			if json.Unmarshal(h, &hd) != nil || hd.Type != "command" {
				continue
			}
			if path, profile, ok := jailHandler(hd.Command, harnessName, self); ok {
				list = append(list, found{gi, hi, g.Matcher, path, profile})
			}
		}
	}
	return list, nil
}

// matcherMatches reports whether a hook group's matcher selects tool: an empty matcher or "*"
// selects every tool, anything else is a regular expression that must match the whole name.
func matcherMatches(matcher, tool string) bool {
	if matcher == "" || matcher == "*" {
		return true
	}
	re, err := regexp.Compile("^(?:" + matcher + ")$")
	return err == nil && re.MatchString(tool)
}

// isExecutable reports whether path is a regular file someone may execute.
func isExecutable(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0
}

// CLIName is the command name of harnessName's CLI ("" for an unknown harness).
func CLIName(harnessName string) string { return setups[harnessName].cli }
