package hooks

import (
	"encoding/json"
	"fmt"
	"time"
)

// Installed is what Install did: one line per file written (with its backup) and anything left
// for the user to do, as instructions.
type Installed struct {
	Lines []string
	Todo  []string
}

func (in *Installed) wrote(path, backup, what string) {
	line := fmt.Sprintf("wrote %s (%s)", path, what)
	if backup != "" {
		line += "; the previous version is in " + backup
	}
	in.Lines = append(in.Lines, line)
}

// Install puts jail's pre-tool hook into harnessName's settings for scope and does what the
// harness needs for it to run: Codex's trust record and feature flag. It merges into existing
// files (every other setting kept, a backup of each file changed) and replaces an earlier jail
// entry, so running it again is harmless. The hook runs e.Jail, an absolute path.
func Install(harnessName, profile string, scope Scope, e Env) (Installed, error) {
	jailPath := e.Jail
	var in Installed
	s, ok := setups[harnessName]
	h := harnesses[harnessName]
	if !ok {
		return in, fmt.Errorf("unknown harness %q (known: %q)", harnessName, Harnesses())
	}
	if scope != ScopeUser && scope != ScopeProject {
		return in, fmt.Errorf("unknown scope %q (user or project)", scope)
	}
	if profile == "" {
		profile = DefaultProfile
	}
	command, err := HookCommand(harnessName, jailPath, profile)
	if err != nil {
		return in, err
	}
	now := time.Now()
	path := s.settings(e, scope)
	gi, hi, err := mergeHook(path, h.event, harnessName, jailPath, group{Matcher: h.tool}, s.handler(command), now, &in)
	if err != nil {
		return in, fmt.Errorf("%s: %w", path, err)
	}
	switch harnessName {
	case "codex":
		err = installCodex(e, scope, path, gi, hi, h.tool, command, now, &in)
	}
	return in, err
}

// mergeHook writes jail's handler into the settings file at path, under event, with g's matcher,
// and returns its group and handler index. An earlier jail handler for harnessName is replaced
// where it stands (positions name hooks in Codex's trust records, so the user's other hooks keep
// theirs); without one, or where it shares a group whose matcher is not g's, jail's handler gets
// a group of its own at the end. Any further jail handler is removed.
func mergeHook(path, event, harnessName, jailPath string, g group, handlerObj map[string]any, now time.Time, in *Installed) (int, int, error) {
	settings, _, err := readObject(path)
	if err != nil {
		return 0, 0, err
	}
	hooksTable, err := settings.child("hooks")
	if err != nil {
		return 0, 0, err
	}
	var groups []object
	if raw, ok := hooksTable.vals[event]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &groups); err != nil {
			return 0, 0, fmt.Errorf("hooks.%s: %w", event, err)
		}
	}
	var mine object
	if err := mine.set("matcher", g.Matcher); err != nil {
		return 0, 0, err
	}
	if err := mine.set("hooks", []any{handlerObj}); err != nil {
		return 0, 0, err
	}
	newHandler, err := marshal(handlerObj)
	if err != nil {
		return 0, 0, err
	}
	gi, hi := -1, -1
	var kept []object
	for _, grp := range groups {
		var handlers []json.RawMessage
		if raw, ok := grp.vals["hooks"]; ok {
			if err := json.Unmarshal(raw, &handlers); err != nil {
				return 0, 0, fmt.Errorf("hooks.%s: %w", event, err)
			}
		}
		var matcher string
		json.Unmarshal(grp.vals["matcher"], &matcher) //nolint:errcheck // a group without one matches all
		var rest []json.RawMessage
		for _, raw := range handlers {
			var hd handler
			if json.Unmarshal(raw, &hd) != nil || hd.Type != "command" {
				rest = append(rest, raw)
				continue
			}
			if _, _, ok := jailHandler(hd.Command, harnessName, jailPath); !ok {
				rest = append(rest, raw)
				continue
			}
			if gi < 0 && len(handlers) == 1 {
				gi, hi = len(kept), 0
				grp = mine
				rest = []json.RawMessage{newHandler}
			} else if gi < 0 && matcher == g.Matcher {
				gi, hi = len(kept), len(rest)
				rest = append(rest, newHandler)
			}
		}
		if len(rest) == 0 {
			continue
		}
		if len(rest) != len(handlers) || gi == len(kept) {
			if err := grp.set("hooks", rest); err != nil {
				return 0, 0, err
			}
		}
		kept = append(kept, grp)
	}
	if gi < 0 {
		gi, hi = len(kept), 0
		kept = append(kept, mine)
	}
	if err := hooksTable.set(event, kept); err != nil {
		return 0, 0, err
	}
	if err := settings.set("hooks", hooksTable); err != nil {
		return 0, 0, err
	}
	data, err := indentJSON(settings)
	if err != nil {
		return 0, 0, err
	}
	backup, err := writeFile(path, data, now)
	if err != nil {
		return 0, 0, err
	}
	in.wrote(path, backup, fmt.Sprintf("%s hook for %s", event, g.Matcher))
	return gi, hi, nil
}
