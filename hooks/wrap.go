package hooks

import (
	"fmt"
	"path/filepath"
	"strings"
)

// DefaultProfile is the profile the hook adapters and the shell shim use when none is named.
const DefaultProfile = "agent"

// Command returns the shell command line that runs command under jail:
//
//	JAIL -p PROFILE -- SHELL -c COMMAND
//
// command is passed through untouched as the one argument of the inner shell's -c, quoted once
// by Quote, so pipes, &&, heredocs, quotes, newlines and a leading cd keep exactly the meaning
// they had; nothing is re-parsed here. jailPath must be absolute so the harness's PATH (and any
// jail-sh or alias on it) cannot change which binary runs.
func Command(jailPath, profile, shell, command string) (string, error) {
	if !filepath.IsAbs(jailPath) {
		return "", fmt.Errorf("jail path %q is not absolute", jailPath)
	}
	if profile == "" {
		profile = DefaultProfile
	}
	quotedCmd, err := Quote(command)
	if err != nil {
		return "", fmt.Errorf("command: %w", err)
	}
	words := []string{jailPath, "-p", profile, "--", shell, "-c"}
	for i, w := range words {
		if words[i], err = Quote(w); err != nil {
			return "", fmt.Errorf("argument %q: %w", w, err)
		}
	}
	return strings.Join(append(words, quotedCmd), " "), nil
}
