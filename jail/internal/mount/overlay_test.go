package mount

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/plan"
)

// The overlay scenario lays an overlay workspace over the fixture's rw/ (the lower layer) with
// its layers in state/, pins .git inside it and protects .git/config and a missing .envrc, as
// profiles plans `--workspace overlay`.
func overlayLayers(f string) (upper, work string) { return f + "/state/upper", f + "/state/work" }

// overlayFixture is newFixture with the overlay's layers made.
func overlayFixture(t *testing.T) (f, upper, work string) {
	t.Helper()
	f = newFixture(t)
	upper, work = overlayLayers(f)
	for _, d := range []string{upper, work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { exec.Command("chmod", "-R", "u+rwx", work).Run() }) // overlayfs makes work/work mode 0
	return f, upper, work
}

// overlayChecks run inside the overlay scenario.
var overlayChecks = map[string]func(fixture string) error{
	"the workspace is writable": func(f string) error {
		return errors.Join(
			os.WriteFile(rwDir(f)+"/written", []byte("from inside"), 0o644),
			os.WriteFile(rwDir(f)+"/token", []byte("changed"), 0o644),
			os.Remove(rwDir(f)+"/secret/key"),
			os.Mkdir(rwDir(f)+"/newdir", 0o755),
		)
	},
	"a protected file in the overlay is read-only": func(f string) error {
		p := rwDir(f) + "/.git/config"
		return errors.Join(
			wantErrno(writeFile(p), unix.EROFS, "write "+p),
			wantErrno(os.Rename(rwDir(f)+"/.git", rwDir(f)+"/.git.old"), unix.EBUSY, "rename the pinned .git"),
		)
	},
	"a missing protected path has a placeholder": func(f string) error {
		p := rwDir(f) + "/.envrc"
		return errors.Join(wantErrno(writeFile(p), unix.EROFS, "write "+p), wantContent(p, ""))
	},
	"the layers are out of reach": func(f string) error {
		upper, _ := overlayLayers(f)
		if _, err := os.Stat(upper); !errors.Is(err, os.ErrNotExist) {
			return errors.New("the upper layer is visible inside: " + upper)
		}
		return nil
	},
}

func TestSetupRootOverlay(t *testing.T) {
	f, upper, work := overlayFixture(t)
	rw := f + "/rw"
	sc := mountScenario{Fixture: f, Spec: plan.Spec{Mounts: []plan.Mount{
		{Kind: plan.MountOverlay, Source: rw, Target: rw, IsDir: true, Upper: upper, Work: work},
		{Kind: plan.MountPin, Target: rw + "/.git", IsDir: true},
		{Kind: plan.MountProtect, Source: rw + "/.git/config", Target: rw + "/.git/config"},
		{Kind: plan.MountProtect, Source: rw + "/.envrc", Target: rw + "/.envrc", Create: true},
	}}}
	runChecks(t, sc, overlayChecks)
	t.Run("the lower layer is untouched", func(t *testing.T) {
		for p, want := range map[string]string{rw + "/token": "tok", rw + "/secret/key": "s3cret", rw + "/.git/config": "[core]"} {
			if err := wantContent(p, want); err != nil {
				t.Error(err)
			}
		}
		for _, p := range []string{rw + "/written", rw + "/newdir", rw + "/.envrc"} {
			if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s exists in the lower layer: %v", p, err)
			}
		}
	})
	t.Run("the writes are in the upper layer, the placeholder is not", func(t *testing.T) {
		for p, want := range map[string]string{upper + "/written": "from inside", upper + "/token": "changed"} {
			if err := wantContent(p, want); err != nil {
				t.Error(err)
			}
		}
		if _, err := os.Lstat(upper + "/.envrc"); !errors.Is(err, os.ErrNotExist) {
			t.Errorf(".envrc's placeholder is in the upper layer: %v", err)
		}
		var st unix.Stat_t
		if err := unix.Lstat(upper+"/secret/key", &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFCHR || st.Rdev != 0 {
			t.Errorf("secret/key's deletion is not a whiteout in the upper layer: %v, mode %o", err, st.Mode)
		}
	})
}

// TestSetupRootOverlayFailsClosed lays an overlay whose work directory is on another
// filesystem than its upper layer (stage 1 mounts a tmpfs there), which overlayfs refuses: setup
// fails, naming the op, the errno and what the overlay needs, and writes nothing.
func TestSetupRootOverlayFailsClosed(t *testing.T) {
	f, upper, work := overlayFixture(t)
	rw := f + "/rw"
	op := plan.Mount{Kind: plan.MountOverlay, Source: rw, Target: rw, IsDir: true, Upper: upper, Work: work}
	sc := mountScenario{Fixture: f, Submount: work, Spec: plan.Spec{Mounts: []plan.Mount{op}}}
	got := runMountScenario(t, sc).setupErr
	for _, want := range []string{"overlay " + Object(op), "create overlay: invalid argument", "overlayfs in a user namespace", "--workspace bind"} {
		if !strings.Contains(got, want) {
			t.Errorf("setupRoot error %q does not say %q", got, want)
		}
	}
	if ents, err := os.ReadDir(upper); err != nil || len(ents) != 0 {
		t.Errorf("the upper layer was written: %v, %v", ents, err)
	}
}
