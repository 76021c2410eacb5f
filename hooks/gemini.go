package hooks

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// Gemini CLI reads its user configuration from ~/.gemini, where ~ is $GEMINI_CLI_HOME if set,
// else the home directory; $HOME itself is left alone.
//
// For `jail hook check gemini` the CLI must use API-key auth, the only kind that takes the fake
// model's base URL, whatever auth the user chose. Gemini CLI 0.61 offers no clean handle on it:
// the auth type in the settings wins over the environment, no flag sets it, the base URL alone
// selects "gateway" auth, which a non-interactive run refuses (exit 41, "Invalid auth method
// selected"), and a system settings file is read only when it and every directory above it are
// owned by root and writable by no one else. So the check runs Gemini with $GEMINI_CLI_HOME
// pointing at a mirror of the user's: every entry a symlink to the real one (hooks, trusted
// folders, policies, extensions, memory), except settings.json, a copy that selects API-key
// auth. The user's own files are not changed.

// geminiHome is the directory holding Gemini CLI's .gemini.
func geminiHome(e Env) string {
	if d := e.getenv("GEMINI_CLI_HOME"); d != "" {
		return d
	}
	return e.Home
}

// geminiMirrored are the entries of geminiHome that Gemini CLI reads besides .gemini: the
// global agents directory and an .env file.
var geminiMirrored = []string{".agents", ".env"}

// geminiCheckHome builds the mirror described above in a new temporary directory and returns
// it; the caller removes it (RemoveAll removes the symlinks, never what they point to).
func geminiCheckHome(e Env) (string, error) {
	real := geminiHome(e)
	settings, _, err := readObject(filepath.Join(real, ".gemini", "settings.json"))
	if err != nil {
		return "", err
	}
	security, err := settings.child("security")
	if err != nil {
		return "", err
	}
	auth, err := security.child("auth")
	if err != nil {
		return "", err
	}
	if err := auth.set("selectedType", "gemini-api-key"); err != nil {
		return "", err
	}
	if err := security.set("auth", auth); err != nil {
		return "", err
	}
	if err := settings.set("security", security); err != nil {
		return "", err
	}
	data, err := indentJSON(settings)
	if err != nil {
		return "", err
	}
	home, err := os.MkdirTemp("", "jail-hook-check-gemini-")
	if err != nil {
		return "", err
	}
	fail := func(err error) (string, error) {
		os.RemoveAll(home)
		return "", err
	}
	mirror := filepath.Join(home, ".gemini")
	if err := os.Mkdir(mirror, 0o700); err != nil {
		return fail(err)
	}
	entries, err := os.ReadDir(filepath.Join(real, ".gemini"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fail(err)
	}
	for _, ent := range entries {
		if ent.Name() == "settings.json" {
			continue
		}
		if err := os.Symlink(filepath.Join(real, ".gemini", ent.Name()), filepath.Join(mirror, ent.Name())); err != nil {
			return fail(err)
		}
	}
	for _, name := range geminiMirrored {
		if _, err := os.Lstat(filepath.Join(real, name)); err != nil {
			continue
		}
		if err := os.Symlink(filepath.Join(real, name), filepath.Join(home, name)); err != nil {
			return fail(err)
		}
	}
	if err := os.WriteFile(filepath.Join(mirror, "settings.json"), data, 0o600); err != nil {
		return fail(err)
	}
	return home, nil
}
