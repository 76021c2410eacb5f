package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/internal/testutil"
)

// Paths are compared physically: a run started through a symlink, or a grant named through one,
// is exactly as protected as one using the real path.

// TestSymlinkedWorkingDirectoryKeepsProtections: `ln -s ~/proj /tmp/pl; cd /tmp/pl && jail …`
// used to lose every protect (the grant sat at the logical path, the masks at the physical one),
// so a hook planted in .git/hooks ran at the host's next checkout.
func TestSymlinkedWorkingDirectoryKeepsProtections(t *testing.T) {
	hostEffect{
		victim: func(t *testing.T) (string, []string) { return through(t, repository(t)) },
		attack: `printf '#!/bin/sh\ntouch $P\n' >.git/hooks/post-checkout; chmod +x .git/hooks/post-checkout`,
		host:   hostGit("checkout", "-q", "HEAD"),
	}.check(t)
}

// TestSymlinkedHomeKeepsSecretsHidden: run from a symlink to the home, granted writable by name
// (the working directory's grant alone is refused there), the hides hold as they do from the
// home itself.
func TestSymlinkedHomeKeepsSecretsHidden(t *testing.T) {
	home := t.TempDir()
	testutil.WriteFile(t, filepath.Join(home, ".ssh", "id_ed25519"), "PRIVATE KEY\n")
	testutil.WriteFile(t, filepath.Join(home, ".aws", "credentials"), "SECRET\n")
	link, env := through(t, home)
	env = append(env, "HOME="+home)
	out, errOut, code := runJailWith(t, runOpts{dir: link, env: env}, "--rw", "~", "--", "sh", "-c",
		"cat .ssh/id_ed25519 .aws/credentials "+link+"/.ssh/id_ed25519; ls -a .ssh .aws")
	if code == exitFailure || strings.Contains(out, "PRIVATE") || strings.Contains(out, "SECRET") {
		t.Fatalf("secrets read from a home reached through a symlink: exit %d, %q %q", code, out, errOut)
	}
}

// TestSymlinkedGrantKeepsSecretsHidden: `ln -s ~ /tmp/hl; jail --ro /tmp/hl -- cat
// /tmp/hl/.ssh/id_ed25519` printed the key: the grant was mounted at the link, where no mask
// applied. A grant of a link to the key itself, or to ~/.ssh, loses to the mask too.
func TestSymlinkedGrantKeepsSecretsHidden(t *testing.T) {
	home := t.TempDir()
	key := filepath.Join(home, ".ssh", "id_ed25519")
	testutil.WriteFile(t, key, "PRIVATE KEY\n")
	testutil.WriteFile(t, filepath.Join(home, "notes"), "not secret\n")
	links := t.TempDir()
	for name, target := range map[string]string{"hl": home, "sl": filepath.Dir(key), "kl": key} {
		link := filepath.Join(links, name)
		writeLink(t, target, link)
		o := runOpts{dir: t.TempDir(), env: []string{"HOME=" + home}}
		out, errOut, code := runJailWith(t, o, "--ro", link, "--", "sh", "-c",
			"cat "+links+"/hl/.ssh/id_ed25519 "+links+"/sl/id_ed25519 "+links+"/kl "+key+"; ls "+link)
		if code == exitFailure || strings.Contains(out, "PRIVATE") {
			t.Errorf("--ro %s (→ %s): the key was read: exit %d, %q %q", link, target, code, out, errOut)
		}
	}
	// The control: the same grant shows the rest of the home.
	out, errOut, code := runJailWith(t, runOpts{dir: t.TempDir(), env: []string{"HOME=" + home}},
		"--ro", filepath.Join(links, "hl"), "--", "cat", filepath.Join(links, "hl", "notes"))
	if code != 0 || out != "not secret\n" {
		t.Errorf("--ro of a link to the home does not show it: exit %d, %q %q", code, out, errOut)
	}
}

// TestDotfileLinksStillWork: a home whose ~/.gitconfig is a symlink into a dotfiles directory
// keeps working inside: git reads it, and the grant sits at the link's place; from a project
// directory and from the home granted by name (the working directory's grant alone is refused
// there).
func TestDotfileLinksStillWork(t *testing.T) {
	home := t.TempDir()
	testutil.WriteFile(t, filepath.Join(home, "dotfiles", "gitconfig"), "[user]\n\tname = Linked Name\n")
	writeLink(t, filepath.Join(home, "dotfiles", "gitconfig"), filepath.Join(home, ".gitconfig"))
	for dir, grants := range map[string][]string{t.TempDir(): nil, home: {"--rw", "~"}} {
		args := append(grants, "--", "git", "config", "--global", "user.name")
		out, errOut, code := runJailWith(t, runOpts{dir: dir, env: []string{"HOME=" + home}}, args...)
		if code != 0 || out != "Linked Name\n" {
			t.Errorf("from %s: git config --global user.name: exit %d, %q %q", dir, code, out, errOut)
		}
	}
}
