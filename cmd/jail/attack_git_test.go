package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/internal/testutil"
)

// Git's metadata is one class: whatever the sandbox can plant in a repository's git directory,
// or in a .git git would use instead, the host's next git command runs. Each test plants a
// payload the way issues 15 and 22 reproduced it and runs the host's git afterwards.

// fsmonitor is a core.fsmonitor payload: git runs it on status and refreshes. It prints
// nothing (the hook's answer is then "no changes known").
const fsmonitor = `touch $P; echo`

// gitAs runs git inside the sandbox with an identity, which the sandbox's private home lacks.
const gitAs = `git -c user.name=a -c user.email=a@example.com`

// TestCommondirRedirectRefused (15.3): a commondir file in .git redirects config and hooks to a
// copy the sandbox wrote; the host's git status then runs the copy's fsmonitor.
func TestCommondirRedirectRefused(t *testing.T) {
	for _, key := range []string{"core.fsmonitor", "core.hooksPath"} {
		payload, host := `'`+fsmonitor+`'`, hostGit("status")
		if key == "core.hooksPath" {
			payload = `"$(pwd)/x/hooks" && printf '#!/bin/sh\ntouch $P\n' >x/hooks/post-checkout && chmod +x x/hooks/post-checkout`
			host = hostGit("checkout", "-q", "HEAD")
		}
		t.Run(key, func(t *testing.T) {
			hostEffect{
				victim: func(t *testing.T) (string, []string) { return repository(t), nil },
				attack: `cp -r .git x && git config -f x/config ` + key + ` ` + payload + ` && echo ../x >.git/commondir`,
				host:   host,
			}.check(t)
		})
	}
}

// TestGitlinkInIndexRefused (15.4): a gitlink added to the index points the host's git status
// at a nested repository the sandbox made, whose fsmonitor it runs.
func TestGitlinkInIndexRefused(t *testing.T) {
	hostEffect{
		victim: func(t *testing.T) (string, []string) { return repository(t), nil },
		attack: `git init -q lib && echo x >lib/f && git -C lib add f && ` + gitAs + ` -C lib commit -q -m m && ` +
			`git -C lib config core.fsmonitor '` + fsmonitor + `' && ` +
			`git update-index --add --cacheinfo 160000,$(git -C lib rev-parse HEAD),lib`,
		host: hostGit("status"),
	}.check(t)
}

// TestSubmoduleGitDirKept: a submodule checked out in the working directory cannot be swapped
// for a repository of the sandbox's (its .git replaced, or the whole directory), which the
// host's git status would enter.
func TestSubmoduleGitDirKept(t *testing.T) {
	for name, attack := range map[string]string{
		"replace the directory": `rm -rf lib && git init -q lib && echo x >lib/f && git -C lib add f && git -C lib config core.fsmonitor '` + fsmonitor + `'`,
		"redirect its .git": `cp -r .git/modules/lib evil && git config -f evil/config core.worktree ../lib && ` +
			`git config -f evil/config core.fsmonitor '` + fsmonitor + `' && echo "gitdir: ../evil" >lib/.git`,
	} {
		t.Run(name, func(t *testing.T) {
			hostEffect{
				victim: func(t *testing.T) (string, []string) { return superproject(t), nil },
				attack: attack,
				host:   hostGit("status"),
			}.check(t)
		})
	}
}

// TestNestedRepositoryFromSubdirectoryRefused (15.5): run from a subdirectory, the sandbox
// made a repository there, which takes over from the enclosing one for the host's git.
func TestNestedRepositoryFromSubdirectoryRefused(t *testing.T) {
	hostEffect{
		victim: func(t *testing.T) (string, []string) { return filepath.Join(repository(t), "sub"), nil },
		attack: `git init -q && git config core.fsmonitor '` + fsmonitor + `'`,
		host:   hostGit("status"),
	}.check(t)
}

// TestPlantedGitFileWidensNothing (22.1): a .git file written by one run ("gitdir: $HOME"), or a
// linked worktree's commondir pointed at the home, used to make the next run bind the home
// writable; that run then appended to ~/.profile, which the host's next login shell runs. The
// control: the same second run, given the home writable as the pointer used to give it, does
// leave the payload for the login shell.
func TestPlantedGitFileWidensNothing(t *testing.T) {
	for name, plant := range map[string]string{
		"gitdir":    `echo "gitdir: $HOME" >.git`,
		"commondir": `echo "$HOME" >"$(git rev-parse --git-dir)/commondir"`,
	} {
		t.Run(name, func(t *testing.T) {
			for _, control := range []bool{true, false} {
				home := t.TempDir()
				o := runOpts{dir: t.TempDir(), env: []string{"HOME=" + home}}
				if name == "commondir" {
					o.dir = filepath.Join(o.dir, "wt")
					git(t, repository(t), "worktree", "add", "-q", o.dir)
				}
				marker := filepath.Join(t.TempDir(), "P")
				runJailWith(t, o, "--", "sh", "-c", plant)
				var widen []string
				if control {
					widen = []string{"--rw", home}
				}
				out, _, _ := runJailWith(t, o, append(widen, "--dry-run", "--", "true")...)
				runJailWith(t, o, append(widen, "--", "sh", "-c", `echo 'touch `+marker+`' >>"$HOME/.profile"`)...)
				login := exec.Command("sh", "-c", `. "$HOME/.profile"`)
				login.Env = append(os.Environ(), o.env...)
				login.Run()
				switch {
				case control && !exists(marker):
					t.Fatalf("control: with the home writable, the login shell did not run the payload: the test shows nothing")
				case !control && exists(marker):
					t.Errorf("after %q, the next run wrote ~/.profile and the host's login shell ran it", plant)
				case !control && strings.Contains(out, `"source": "`+home+`"`):
					t.Errorf("after %q, the next run's plan grants the home:\n%s", plant, out)
				}
			}
		})
	}
}

// TestGitWorksReadOnly: inside, git status, diff, log, blame and grep work on a repository whose
// metadata is read-only (status without complaining about the index lock), from the top level
// and from a subdirectory; git add and commit fail with a read-only error, not a crash.
func TestGitWorksReadOnly(t *testing.T) {
	top := repository(t)
	testutil.WriteFile(t, filepath.Join(top, "sub", "file"), "one\ntwo\n")
	testutil.WriteFile(t, filepath.Join(top, "sub", "new"), "new\n")
	for _, dir := range []string{top, filepath.Join(top, "sub")} {
		out, errOut, code := runJailIn(t, dir, "", "--", "sh", "-c",
			`set -e; git status --porcelain; git diff --stat; git log --oneline | wc -l; git blame -s file 2>/dev/null || git blame -s sub/file; git grep -c two -- .`)
		for _, want := range []string{" M sub/file", "?? sub/new", "1 file changed", "\n1\n", "two", ":1"} {
			if code != 0 || !strings.Contains(out, strings.TrimPrefix(want, " ")) {
				t.Errorf("in %s: exit %d, output %q lacks %q; stderr %q", dir, code, out, want, errOut)
			}
		}
		if errOut != "" {
			t.Errorf("in %s: git complained: %q", dir, errOut)
		}
		_, errOut, code = runJailIn(t, dir, "", "--", "sh", "-c", gitAs+` commit -qam two`)
		if code == 0 || code == exitFailure || !strings.Contains(errOut, "Read-only file system") {
			t.Errorf("in %s: git commit: exit %d, %q; want a read-only error", dir, code, errOut)
		}
	}
	if out, _ := exec.Command("git", "-C", top, "log", "--oneline").Output(); strings.Count(string(out), "\n") != 1 {
		t.Errorf("the host's history changed: %q", out)
	}
}

// superproject makes a repository with a submodule checked out at lib.
func superproject(t *testing.T) string {
	t.Helper()
	sub := repository(t)
	top := repository(t)
	git(t, top, "-c", "protocol.file.allow=always", "submodule", "add", "-q", sub, "lib")
	git(t, top, "commit", "-q", "-m", "lib")
	return top
}

// TestRefusedRepositoryKeepsItsHooks: run from a home that is itself a repository (dotfiles),
// granted by name (--rw ~: the working directory's grant alone is refused there), jail grants
// nothing from that repository — it holds the home — yet its .git, inside the writable home,
// stays read-only.
func TestRefusedRepositoryKeepsItsHooks(t *testing.T) {
	hostEffect{
		victim: func(t *testing.T) (string, []string) {
			home := repository(t)
			return home, []string{"HOME=" + home}
		},
		attack: `printf '#!/bin/sh\ntouch $P\n' >.git/hooks/post-checkout; chmod +x .git/hooks/post-checkout`,
		host:   hostGit("checkout", "-q", "HEAD"),
		jail:   []string{"--rw", "~"},
	}.check(t)
}
