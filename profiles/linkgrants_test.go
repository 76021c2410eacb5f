package profiles

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/jail-sandbox/jail/plan"
)

// A grant naming a symlink that lies inside another bind: a read grant whose destination is
// visible anyway disappears; otherwise the grant moves to the link's destination.
func TestLinkGrantBeneathBind(t *testing.T) {
	host := testHost(t)
	etc, usr := filepath.Join(host.Cwd, "etc"), filepath.Join(host.Cwd, "usr")
	writeFile(t, filepath.Join(usr, "zone"), "UTC")
	mkdir(t, etc)
	link := filepath.Join(etc, "localtime")
	if err := os.Symlink(filepath.Join(usr, "zone"), link); err != nil {
		t.Fatal(err)
	}
	find := func(spec *plan.Spec, target string) *plan.Mount {
		for i, m := range spec.Mounts {
			if m.Target == target {
				return &spec.Mounts[i]
			}
		}
		return nil
	}
	spec := mustResolve(t, host, `[filesystem]
read = ["`+etc+`", "`+usr+`", "`+link+`"]`)
	if m := find(spec, link); m != nil {
		t.Errorf("read grant of a link inside a bind kept: %+v", m)
	}
	spec = mustResolve(t, host, `[filesystem]
read = ["`+etc+`", "`+usr+`"]
write = ["`+link+`"]`)
	if m := find(spec, filepath.Join(usr, "zone")); m == nil || m.Kind != plan.MountBind || find(spec, link) != nil {
		t.Errorf("write grant of a link inside a bind not moved to its destination: %+v", spec.Mounts)
	}
	// On a fresh tmpfs the grant stays at the link's own path.
	spec = mustResolve(t, host, `[filesystem]
read = ["`+link+`"]`)
	if m := find(spec, link); m == nil || m.Source != filepath.Join(usr, "zone") {
		t.Errorf("link grant on the tmpfs root: %+v", spec.Mounts)
	}
}
