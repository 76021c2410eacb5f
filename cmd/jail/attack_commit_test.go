package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/internal/testutil"
)

// Commit mode (-p agent-commit): the command commits inside, into a private overlay of the git
// directory; at exit only new objects and changed refs come out, as refs/jail/RUN/..., and of
// those only refs whose new commits add no submodule and touch no protected name.

// importedRef matches jail's line for one imported ref: its name on the host.
var importedRef = regexp.MustCompile(`jail: git: imported (\S+) as (refs/jail/\S+) `)

// TestCommitModeBringsCommitsOut: add, commit, branch and stash work inside; each changed ref
// comes out under refs/jail/RUN/, the host's own branch, HEAD and index stay as they were, the
// commit merges, and the run leaves no directory behind.
func TestCommitModeBringsCommitsOut(t *testing.T) {
	top := repository(t)
	tmp := t.TempDir()
	head := hostOutput(t, top, "rev-parse", "HEAD")
	testutil.WriteFile(t, filepath.Join(top, "sub", "file"), "one\ntwo\n")
	script := `set -e; git add -A; ` + gitAs + ` commit -qm two; git branch feature; echo three >>sub/file; ` + gitAs + ` stash -q; git log --oneline | wc -l`
	out, errOut, code := runJailWith(t, runOpts{dir: top, env: []string{"TMPDIR=" + tmp}}, "-p", "agent-commit", "--", "sh", "-c", script)
	if code != 0 || strings.TrimSpace(out) != "2" {
		t.Fatalf("committing inside: exit %d, %q %q", code, out, errOut)
	}
	imported := map[string]string{}
	for _, m := range importedRef.FindAllStringSubmatch(errOut, -1) {
		imported[m[1]] = m[2]
	}
	for _, name := range []string{"refs/heads/master", "refs/heads/feature", "refs/stash"} {
		if imported[name] == "" {
			t.Errorf("%s not imported: %q", name, errOut)
		}
	}
	if now := hostOutput(t, top, "rev-parse", "HEAD"); now != head {
		t.Errorf("the host's branch moved: %s, was %s", now, head)
	}
	if st := hostOutput(t, top, "status", "--porcelain"); st != "M sub/file" {
		t.Errorf("host status %q, want the change unstaged (the host's index untouched)", st)
	}
	// As jail's line says: the work tree already holds what was committed.
	git(t, top, "stash", "-q", "-u")
	git(t, top, "merge", "-q", "--ff-only", imported["refs/heads/master"])
	git(t, top, "stash", "pop", "-q")
	if st := hostOutput(t, top, "status", "--porcelain"); st != "" {
		t.Errorf("after the merge, host status %q", st)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("the run left %v in $TMPDIR", entries)
	}
}

// TestCommitModeInLinkedWorktreeSubdirectory: from a subdirectory of a linked worktree, the
// commit lands in the shared repository's refs/jail/, and the worktree's branch stays.
func TestCommitModeInLinkedWorktreeSubdirectory(t *testing.T) {
	main := repository(t)
	wt := filepath.Join(t.TempDir(), "wt")
	git(t, main, "worktree", "add", "-q", "-b", "side", wt)
	testutil.WriteFile(t, filepath.Join(wt, "sub", "file"), "changed\n")
	_, errOut, code := runJailWith(t, runOpts{dir: filepath.Join(wt, "sub"), env: []string{"TMPDIR=" + t.TempDir()}},
		"-p", "agent-commit", "--", "sh", "-c", `git add file && `+gitAs+` commit -qm side`)
	m := importedRef.FindStringSubmatch(errOut)
	if code != 0 || m == nil || m[1] != "refs/heads/side" {
		t.Fatalf("exit %d, %q: want refs/heads/side imported", code, errOut)
	}
	if got := hostOutput(t, main, "log", "-1", "--format=%s", m[2]); got != "side" {
		t.Errorf("%s in the main repository: %q", m[2], got)
	}
	if got := hostOutput(t, main, "log", "-1", "--format=%s", "side"); got != "one" {
		t.Errorf("the worktree's branch moved: %q", got)
	}
}

// TestCommitModeDropsMetadata: what git would run later on the host — config (fsmonitor,
// hooksPath), hooks, a commondir redirection, a gitlink in the index, an interactive rebase
// stopped with an exec line still to run — is written into the overlay and dropped with it.
func TestCommitModeDropsMetadata(t *testing.T) {
	for name, a := range map[string]struct {
		attack string
		host   func(t *testing.T, dir string, env []string)
	}{
		"fsmonitor": {`git config core.fsmonitor '` + fsmonitor + `'`, hostGit("status")},
		"hook": {`printf '#!/bin/sh\ntouch $P\n' >.git/hooks/post-checkout && chmod +x .git/hooks/post-checkout`,
			hostGit("checkout", "-q", "HEAD")},
		"commondir": {`cp -r .git x && git config -f x/config core.fsmonitor '` + fsmonitor + `' && echo ../x >.git/commondir`,
			hostGit("status")},
		"gitlink": {`git init -q lib && echo x >lib/f && git -C lib add f && ` + gitAs + ` -C lib commit -q -m m && ` +
			`git -C lib config core.fsmonitor '` + fsmonitor + `' && git update-index --add --cacheinfo 160000,$(git -C lib rev-parse HEAD),lib`,
			hostGit("status")},
		"rebase exec": {`printf 'break\nexec touch $P\n' >todo && GIT_SEQUENCE_EDITOR="cp $(pwd)/todo" ` + gitAs + ` rebase -q -i HEAD`,
			hostGit("-c", "user.name=a", "-c", "user.email=a@example.com", "rebase", "--continue")},
	} {
		t.Run(name, func(t *testing.T) {
			hostEffect{
				victim: func(t *testing.T) (string, []string) { return repository(t), []string{"TMPDIR=" + t.TempDir()} },
				attack: a.attack,
				host:   a.host,
				jail:   []string{"-p", "agent-commit"},
			}.check(t)
		})
	}
}

// TestCommitModeRefusesSubmodulesAndProtected: a ref whose new commits add a gitlink, or change
// a protected name, is not imported: merging everything that was imported then brings no
// nested repository under the host's git, and no .envrc for direnv to load.
func TestCommitModeRefusesSubmodulesAndProtected(t *testing.T) {
	for name, attack := range map[string]string{
		"gitlink": `git init -q lib && echo x >lib/f && git -C lib add f && ` + gitAs + ` -C lib commit -q -m m && ` +
			`git -C lib config core.fsmonitor '` + fsmonitor + `' && git add lib 2>/dev/null; ` + gitAs + ` commit -qm lib`,
		"protected name": `echo 'touch $P' >envrc && git update-index --add --cacheinfo 100644,$(git hash-object -w envrc),sub/.envrc && ` +
			gitAs + ` commit -qm envrc`,
	} {
		t.Run(name, func(t *testing.T) {
			hostEffect{
				victim: func(t *testing.T) (string, []string) { return repository(t), []string{"TMPDIR=" + t.TempDir()} },
				attack: attack,
				host:   mergeImportedThenUse,
				jail:   []string{"-p", "agent-commit"},
			}.check(t)
		})
	}
}

// mergeImportedThenUse is what a person does after a commit-mode run: merge what came out,
// then use the tree — git status, and direnv loading sub/.envrc.
func mergeImportedThenUse(t *testing.T, dir string, env []string) {
	refs, _ := exec.Command("git", "-C", dir, "for-each-ref", "--format=%(refname)", "refs/jail/").Output()
	for _, ref := range strings.Fields(string(refs)) {
		exec.Command("git", "-C", dir, "merge", "-q", "--ff-only", ref).Run()
	}
	exec.Command("git", "-C", dir, "checkout", "-q", "--", ".").Run() // a commit made outside jail leaves the file in the index only
	hostGit("status")(t, dir, env)
	if _, err := os.Stat(filepath.Join(dir, "sub", ".envrc")); err == nil {
		exec.Command("sh", filepath.Join(dir, "sub", ".envrc")).Run()
	}
}

// hostOutput runs the host's git in dir and returns its trimmed output.
func hostOutput(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).Output()
	if err != nil {
		t.Fatalf("git %q: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}
