package hooks

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	toml "github.com/pelletier/go-toml/v2"
)

// Codex runs a hook from the user's or a project's hooks.json only once the user has trusted it:
// its interactive "Hooks need review" step records, in the user's config.toml,
//
//	[hooks.state."/abs/path/hooks.json:pre_tool_use:GROUP:HANDLER"]
//	trusted_hash = "sha256:…"
//
// and an untrusted hook is skipped without a word: the command then runs unsandboxed. The key
// is the file and the hook's position in it; the hash is over a normalized form of the hook
// (codex-rs/hooks/src/engine/discovery.rs, command_hook_hash, and codex-rs/config's
// version_for_toml, in Codex 0.171): the TOML value of
//
//	{event_name, matcher, hooks: [{type: "command", command, timeout, async}]}
//
// turned into JSON with every object's keys sorted, serialized compactly by serde_json, and
// hashed with SHA-256. timeout is the handler's, 600 seconds when unset; statusMessage would be
// included when set. Codex's own `codex app-server` reports the same value as "currentHash" in
// hooks/list (TestCodexHandlerHash holds the one the pinned release reported), and the pinned
// CLI runs a hook trusted this way (TestHarnessInstallAndCheck).

// codexEvent is Codex's key label for the PreToolUse event.
const codexEvent = "pre_tool_use"

// codexTimeout is the timeout Codex assumes for a handler that sets none.
const codexTimeout = 600

// codexTrustKey is the hooks.state key of the handler at (group, index) of the hooks.json at path.
func codexTrustKey(path string, group, index int) string {
	return fmt.Sprintf("%s:%s:%d:%d", path, codexEvent, group, index)
}

// codexHandler is a command handler's fields that Codex's trust hash covers.
type codexHandler struct {
	Type          string  `json:"type"`
	Command       string  `json:"command"`
	Timeout       *int64  `json:"timeout"`
	Async         bool    `json:"async"`
	StatusMessage *string `json:"statusMessage"`
}

// codexHandlerHash is the trusted_hash Codex expects for the command handler raw in a group with
// this matcher ("" for none).
func codexHandlerHash(matcher string, raw []byte) (string, error) {
	var h codexHandler
	if err := json.Unmarshal(raw, &h); err != nil {
		return "", fmt.Errorf("hook handler: %w", err)
	}
	timeout := int64(codexTimeout)
	if h.Timeout != nil {
		timeout = max(*h.Timeout, 1)
	}
	// The keys are written in sorted order, as Codex's canonical JSON has them.
	var b strings.Builder
	b.WriteString(`{"event_name":` + serdeString(codexEvent) + `,"hooks":[{"async":` + strconv.FormatBool(h.Async) +
		`,"command":` + serdeString(h.Command))
	if h.StatusMessage != nil {
		b.WriteString(`,"statusMessage":` + serdeString(*h.StatusMessage))
	}
	b.WriteString(`,"timeout":` + strconv.FormatInt(timeout, 10) + `,"type":"command"}]`)
	if matcher != "" {
		b.WriteString(`,"matcher":` + serdeString(matcher))
	}
	b.WriteString("}")
	return "sha256:" + sha256Hex([]byte(b.String())), nil
}

// serdeString encodes s as serde_json does: only ", \ and control characters escaped (the
// short forms where JSON has one, else \u00xx), everything else as it is, unlike
// encoding/json, which also escapes U+2028 and U+2029.
func serdeString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if c < 0x20 {
				fmt.Fprintf(&b, `\u%04x`, c)
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// codexHooksPath is the hooks.json path as Codex names it in trust keys: CODEX_HOME resolved
// (Codex canonicalizes it), or the project's directory resolved.
func codexHooksPath(e Env, scope Scope) string {
	if scope == ScopeProject {
		dir := e.Dir
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			dir = real
		}
		return filepath.Join(dir, ".codex", "hooks.json")
	}
	home := codexHome(e)
	if e.getenv("CODEX_HOME") != "" {
		if real, err := filepath.EvalSymlinks(home); err == nil {
			home = real
		}
	}
	return filepath.Join(home, "hooks.json")
}

// installCodex trusts the handler just written at (gi, hi) of path, the way Codex's review step
// does, and turns the hooks feature back on if config.toml turned it off.
func installCodex(e Env, scope Scope, path string, gi, hi int, matcher, command string, now time.Time, in *Installed) error {
	config := filepath.Join(codexHome(e), "config.toml")
	key := codexTrustKey(codexHooksPath(e, scope), gi, hi)
	raw, err := marshal(setups["codex"].handler(command))
	if err != nil {
		return err
	}
	hash, err := codexHandlerHash(matcher, raw)
	if err != nil {
		return err
	}
	if err := trustInConfig(config, key, hash, now, in); err != nil {
		return fmt.Errorf("%s: %w; add it by hand:\n%s", config, err, trustTable(key, hash))
	}
	if scope == ScopeProject {
		in.Todo = append(in.Todo, fmt.Sprintf("Codex reads %s only in a project you trust: "+
			"start codex in %s once and trust it (jail does not decide that for you)", path, e.Dir))
	}
	return nil
}

// trustTable is the config.toml text that trusts key with hash.
func trustTable(key, hash string) string {
	return fmt.Sprintf("[hooks.state.%s]\ntrusted_hash = %s\n", tomlString(key), tomlString(hash))
}

// tomlString quotes s as a TOML basic string (paths and hashes: printable text).
func tomlString(s string) string {
	return strconv.Quote(s)
}

// stateHeader matches a [hooks.state."KEY"] table header line; the key is decoded separately.
// Compiled on first use, as the package's other patterns: not on every jail start.
var stateHeader = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*\[\s*hooks\s*\.\s*state\s*\.\s*("(?:[^"\\]|\\.)*"|'[^']*')\s*\]\s*(?:#.*)?$`)
})

// featureOff matches the line that turns the hooks feature off, in [features] or dotted.
var featureOff = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(\s*(?:features\s*\.\s*)?hooks\s*=\s*)false(\s*(?:#.*)?)$`)
})

// trustInConfig edits config.toml as text, so that the user's comments and layout stay: any
// existing table for key is replaced by one holding hash, and a `hooks = false` feature line
// becomes true. The result is parsed again and must equal the original with exactly those
// changes, or nothing is written.
func trustInConfig(path, key, hash string, now time.Time, in *Installed) error {
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	var before map[string]any
	if err := toml.Unmarshal(data, &before); err != nil {
		return fmt.Errorf("parse: %w", err)
	}
	if before == nil {
		before = map[string]any{}
	}
	if codexTrusted(before, key) == hash && !codexHooksOff(before) {
		return nil
	}
	var out bytes.Buffer
	lines := strings.SplitAfter(string(data), "\n")
	section := ""
	for i := 0; i < len(lines); i++ {
		line := strings.TrimRight(lines[i], "\r\n")
		if m := stateHeader().FindStringSubmatch(line); m != nil && tomlKeyEquals(m[1], key) {
			for i+1 < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i+1]), "[") {
				i++ // drop the old table's body
			}
			continue
		}
		if t := strings.TrimSpace(line); strings.HasPrefix(t, "[") {
			section = t
		}
		if m := featureOff().FindStringSubmatch(line); m != nil && (section == "[features]" || strings.Contains(m[1], "features")) {
			lines[i] = m[1] + "true" + m[2] + "\n"
			in.Lines = append(in.Lines, "turned Codex's hooks feature back on in "+path)
		}
		out.WriteString(lines[i])
	}
	if out.Len() > 0 && !bytes.HasSuffix(out.Bytes(), []byte("\n")) {
		out.WriteByte('\n')
	}
	if out.Len() > 0 {
		out.WriteByte('\n')
	}
	out.WriteString(trustTable(key, hash))

	var after map[string]any
	if err := toml.Unmarshal(out.Bytes(), &after); err != nil {
		return fmt.Errorf("the edited file would not parse (%v)", err)
	}
	want := withTrust(before, key, hash)
	if !reflect.DeepEqual(after, want) {
		return errors.New("its layout is more than a plain text edit can change safely")
	}
	backup, err := writeFile(path, out.Bytes(), now)
	if err != nil {
		return err
	}
	in.wrote(path, backup, "trusted jail's hook as Codex's hook review would")
	return nil
}

// tomlKeyEquals reports whether the quoted TOML key q decodes to key.
func tomlKeyEquals(q, key string) bool {
	var v map[string]string
	if toml.Unmarshal([]byte("k = "+q), &v) != nil {
		return false
	}
	return v["k"] == key
}

// table returns m[k] as a table, or nil.
func table(m map[string]any, k string) map[string]any {
	t, _ := m[k].(map[string]any)
	return t
}

// codexTrusted is the trusted_hash config records for key, "" if none.
func codexTrusted(config map[string]any, key string) string {
	s, _ := table(table(table(config, "hooks"), "state"), key)["trusted_hash"].(string)
	return s
}

// codexHooksOff reports whether config turns the hooks feature off.
func codexHooksOff(config map[string]any) bool {
	off, ok := table(config, "features")["hooks"].(bool)
	return ok && !off
}

// withTrust is a deep copy of config with key trusted as hash and the hooks feature not off.
func withTrust(config map[string]any, key, hash string) map[string]any {
	var copied map[string]any
	data, _ := toml.Marshal(config)
	toml.Unmarshal(data, &copied) //nolint:errcheck // what Marshal wrote parses
	if copied == nil {
		copied = map[string]any{}
	}
	hooksT := table(copied, "hooks")
	if hooksT == nil {
		hooksT = map[string]any{}
		copied["hooks"] = hooksT
	}
	state := table(hooksT, "state")
	if state == nil {
		state = map[string]any{}
		hooksT["state"] = state
	}
	state[key] = map[string]any{"trusted_hash": hash}
	if codexHooksOff(copied) {
		table(copied, "features")["hooks"] = true
	}
	return copied
}

func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
