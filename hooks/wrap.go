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
//	JAIL -p PROFILE -- SHELL -c -- COMMAND
//
// command is passed through untouched as the one argument of the inner shell's -c, quoted once
// by Quote, so pipes, &&, heredocs, quotes, newlines and a leading cd keep exactly the meaning
// they had; nothing is re-parsed here. The two "--" end jail's options and the shell's, so a
// command that starts with - or + is never read as an option of either. jailPath must be
// absolute so the harness's PATH (and any jail-sh or alias on it) cannot change which binary
// runs.
func Command(jailPath, profile, shell, command string) (string, error) {
	if !filepath.IsAbs(jailPath) {
		return "", fmt.Errorf("jail path %q is not absolute", jailPath)
	}
	if profile == "" {
		profile = DefaultProfile
	}
	return quoteLine(jailPath, "-p", profile, "--", shell, "-c", "--", command)
}

// quoteLine quotes each word with Quote and joins them with spaces.
func quoteLine(words ...string) (string, error) {
	quoted := make([]string, len(words))
	for i, w := range words {
		q, err := Quote(w)
		if err != nil {
			if i == len(words)-1 {
				return "", fmt.Errorf("command: %w", err)
			}
			return "", fmt.Errorf("argument %q: %w", w, err)
		}
		quoted[i] = q
	}
	return strings.Join(quoted, " "), nil
}
