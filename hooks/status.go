package hooks

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	toml "github.com/pelletier/go-toml/v2"
)

// Status is how a harness's setup came out, as `jail doctor` grades its lines.
type Status string

const (
	StatusOK   Status = "OK"
	StatusWarn Status = "WARN"
	StatusFail Status = "FAIL"
)

// Finding is the static check of one harness's setup: whether its settings hold jail's hook in a
// form the harness will run. Problem names the cause in a few words (hook missing, untrusted,
// matcher wrong, …); Fix is the command or edit that mends it.
type Finding struct {
	Harness string
	Status  Status
	Problem string
	Detail  string
	Fix     string
}

func (f Finding) String() string {
	if f.Problem == "" {
		return fmt.Sprintf("%s: %s", f.Harness, f.Detail)
	}
	return fmt.Sprintf("%s: %s: %s", f.Harness, f.Problem, f.Detail)
}

// located is jail's hook found in one settings file.
type located struct {
	found
	path  string
	scope Scope
	raw   json.RawMessage // the handler object as the file holds it
}

// locate finds jail's handlers for harnessName in the user's and the project's settings.
func locate(harnessName string, e Env) ([]located, []string, error) {
	s, h := setups[harnessName], harnesses[harnessName]
	var all []located
	var read []string
	for _, scope := range []Scope{ScopeUser, ScopeProject} {
		path := s.settings(e, scope)
		settings, exists, err := readObject(path)
		if err != nil {
			return nil, read, err
		}
		if !exists {
			continue
		}
		read = append(read, path)
		list, err := findJail(settings, h.event, harnessName, e.Jail)
		if err != nil {
			return nil, read, fmt.Errorf("%s: %w", path, err)
		}
		for _, f := range list {
			all = append(all, located{found: f, path: path, scope: scope, raw: handlerAt(settings, h.event, f)})
		}
	}
	return all, read, nil
}

// handlerAt is the raw handler object at f's place.
func handlerAt(settings object, event string, f found) json.RawMessage {
	hooksTable, _ := settings.child("hooks")
	var groups []group
	json.Unmarshal(hooksTable.vals[event], &groups) //nolint:errcheck // findJail parsed it already
	return groups[f.group].Hooks[f.index]
}

// Inspect checks, without running anything, that harnessName's settings (the user's, and the
// project's in e.Dir) hold jail's hook in a form the harness runs: present, selecting the
// harness's shell tool, pointing at a jail binary that exists, and whatever else the harness
// requires (Codex: trusted, its hooks feature on; Claude Code and Gemini CLI: hooks not disabled).
func Inspect(harnessName string, e Env) Finding {
	f := Finding{Harness: harnessName}
	s, ok := setups[harnessName]
	if !ok {
		f.Status, f.Problem = StatusFail, fmt.Sprintf("unknown harness (known: %q)", Harnesses())
		return f
	}
	install := "jail hook install " + harnessName
	fail := func(problem, detail, fix string) Finding {
		f.Status, f.Problem, f.Detail, f.Fix = StatusFail, problem, detail, fix
		return f
	}
	all, read, err := locate(harnessName, e)
	if err != nil {
		return fail("settings unreadable", err.Error(), "fix the file, then "+install)
	}
	if len(all) == 0 {
		where := s.settings(e, ScopeUser)
		if len(read) > 0 {
			where = fmt.Sprintf("%q", read)
		}
		return fail("hook missing", "no jail hook in "+where+": shell commands run unsandboxed", install)
	}
	tool := harnesses[harnessName].tool
	hook := all[0]
	switch {
	case !matcherMatches(hook.matcher, tool):
		return fail("matcher wrong", fmt.Sprintf("the hook in %s matches %q, which does not select the shell tool %s", hook.path, hook.matcher, tool), install)
	case !isExecutable(hook.jailPath):
		return fail("jail missing", fmt.Sprintf("the hook in %s runs %s, which is not an executable file", hook.path, hook.jailPath), install)
	}
	f.Status, f.Detail = StatusOK, fmt.Sprintf("hook in %s, profile %s, runs %s", hook.path, hook.profile, hook.jailPath)
	switch harnessName {
	case "claude-code":
		for _, path := range read {
			if settings, _, err := readObject(path); err == nil && string(settings.vals["disableAllHooks"]) == "true" {
				return fail("hooks disabled", path+" sets disableAllHooks", `remove "disableAllHooks" from `+path)
			}
		}
	case "codex":
		return inspectCodex(f, hook, e, install)
	case "gemini":
		return inspectGemini(f, read)
	}
	return f
}

// inspectCodex checks Codex's trust record for the hook and its hooks feature.
func inspectCodex(f Finding, hook located, e Env, install string) Finding {
	config := filepath.Join(codexHome(e), "config.toml")
	var parsed map[string]any
	if data, err := os.ReadFile(config); err == nil {
		if err := toml.Unmarshal(data, &parsed); err != nil {
			f.Status, f.Problem, f.Detail, f.Fix = StatusFail, "config unreadable", fmt.Sprintf("%s: %v", config, err), "fix "+config
			return f
		}
	}
	if codexHooksOff(parsed) {
		f.Status, f.Problem, f.Detail, f.Fix = StatusFail, "hooks off", config+" sets [features] hooks = false: Codex runs no hook", install
		return f
	}
	key := codexTrustKey(codexHooksPath(e, hook.scope), hook.group, hook.index)
	want, err := codexHandlerHash(hook.matcher, hook.raw)
	if err != nil {
		f.Status, f.Problem, f.Detail, f.Fix = StatusFail, "hook unreadable", err.Error(), install
		return f
	}
	switch got := codexTrusted(parsed, key); {
	case got == "":
		f.Status, f.Problem = StatusFail, "untrusted"
		f.Detail = "Codex skips the hook in " + hook.path + " until it is trusted, and runs commands unsandboxed"
		f.Fix = install
	case got != want:
		f.Status, f.Problem = StatusFail, "untrusted"
		f.Detail = "the hook in " + hook.path + " changed since it was trusted: Codex skips it"
		f.Fix = install
	}
	return f
}

// inspectGemini checks that hooks are on.
func inspectGemini(f Finding, read []string) Finding {
	for _, path := range read {
		settings, _, err := readObject(path)
		if err != nil {
			continue
		}
		cfg, _ := settings.child("hooksConfig")
		if string(cfg.vals["enabled"]) == "false" {
			f.Status, f.Problem, f.Detail, f.Fix = StatusFail, "hooks disabled", path+` sets "hooksConfig": {"enabled": false}`, `set "enabled": true in `+path
			return f
		}
	}
	return f
}
