package hooks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	toml "github.com/pelletier/go-toml/v2"
)

// The hash Codex 0.171.0's own `codex app-server` reported (hooks/list, "currentHash") for this
// hook in ~/.codex/hooks.json; TestHarnessInstallAndCheck checks the live CLI accepts ours.
func TestCodexHandlerHash(t *testing.T) {
	got, err := codexHandlerHash("Bash", []byte(`{"type":"command","command":"/usr/local/bin/jail hook codex -p agent"}`))
	if want := "sha256:f3588f9282e5ec36ad6e2877349592084555ee0ed327ed97ba5d59b1f32100b2"; err != nil || got != want {
		t.Errorf("hash %q %v; want %q", got, err, want)
	}
	if serdeString("a\u2028\"\\\x01é") != "\"a\u2028\\\"\\\\\\u0001é\"" {
		t.Errorf("serdeString escapes like encoding/json, not serde_json: %s", serdeString("a\u2028\"\\\x01é"))
	}
}

// Install merges: the user's other settings, hooks and comments stay; running it twice changes
// nothing more; a backup of each changed file is kept.
func TestInstallMerges(t *testing.T) {
	home := t.TempDir()
	e := Env{Home: home, Dir: t.TempDir()}
	codex := filepath.Join(home, ".codex")
	if err := os.MkdirAll(codex, 0o755); err != nil {
		t.Fatal(err)
	}
	hooksJSON := `{"other": 1, "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "/usr/bin/audit"}]}]}}`
	config := "# mine\nmodel = \"x\"\n\n[features]\nhooks = false # off\n\n[hooks.state.\"k\"]\ntrusted_hash = \"sha256:1\"\n"
	os.WriteFile(filepath.Join(codex, "hooks.json"), []byte(hooksJSON), 0o644)
	os.WriteFile(filepath.Join(codex, "config.toml"), []byte(config), 0o644)
	e.Jail = filepath.Join(t.TempDir(), "jail")
	if err := os.WriteFile(e.Jail, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := Install("codex", "agent", ScopeUser, e); err != nil {
			t.Fatal(err)
		}
	}
	data, _ := os.ReadFile(filepath.Join(codex, "hooks.json"))
	if !strings.Contains(string(data), `"/usr/bin/audit"`) || strings.Count(string(data), "jail hook codex") != 1 || !strings.HasPrefix(string(data), "{\n  \"other\": 1") {
		t.Errorf("hooks.json:\n%s", data)
	}
	cfg, _ := os.ReadFile(filepath.Join(codex, "config.toml"))
	var parsed map[string]any
	if err := toml.Unmarshal(cfg, &parsed); err != nil {
		t.Fatal(err)
	}
	key := codexTrustKey(filepath.Join(codex, "hooks.json"), 1, 0)
	want, _ := codexHandlerHash("Bash", []byte(`{"type":"command","command":"`+e.Jail+` hook codex -p agent"}`))
	if codexTrusted(parsed, key) != want || codexTrusted(parsed, "k") != "sha256:1" || codexHooksOff(parsed) ||
		!strings.HasPrefix(string(cfg), "# mine\n") || strings.Count(string(cfg), key) != 1 {
		t.Errorf("config.toml:\n%s", cfg)
	}
	if f := Inspect("codex", e); f.Status != StatusOK {
		t.Errorf("Inspect after install: %v", f)
	}
	backups, _ := filepath.Glob(filepath.Join(codex, "*.jail-backup-*"))
	if len(backups) < 2 {
		t.Errorf("backups %q", backups)
	}
}
