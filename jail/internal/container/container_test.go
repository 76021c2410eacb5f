package container

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// fakeFiles is a filesystem and environment for detect.
type fakeFiles struct {
	files map[string]string
	env   map[string]string
}

func (f fakeFiles) ReadFile(p string) ([]byte, error) {
	if s, ok := f.files[p]; ok {
		return []byte(s), nil
	}
	return nil, os.ErrNotExist
}
func (f fakeFiles) Exists(p string) bool      { _, ok := f.files[p]; return ok }
func (f fakeFiles) Getenv(name string) string { return f.env[name] }

func TestDetect(t *testing.T) {
	dockerMounts := "1 0 0:1 / / rw - overlay overlay rw,lowerdir=/var/lib/docker/overlay2/l/X\n" +
		"2 1 254:0 /var/lib/docker/containers/abc/hostname /etc/hostname rw - ext4 /dev/vda rw\n"
	for _, tc := range []struct {
		name  string
		files map[string]string
		env   map[string]string
		want  string
	}{
		{"nothing", nil, nil, ""},
		{"a stray /.dockerenv", map[string]string{"/.dockerenv": "", "/proc/self/mountinfo": "1 0 254:0 / / rw - ext4 /dev/vda rw\n"}, nil, ""},
		{"docker", map[string]string{"/.dockerenv": "", "/proc/self/mountinfo": dockerMounts}, nil, "docker"},
		{"podman", map[string]string{"/run/.containerenv": ""}, nil, "podman"},
		{"kubernetes", nil, map[string]string{"KUBERNETES_SERVICE_HOST": "10.0.0.1"}, "kubernetes"},
		{"kubernetes by cgroup", map[string]string{"/proc/1/cgroup": "0::/kubepods/besteffort/pod1\n"}, nil, "kubernetes"},
		{"lxc", map[string]string{"/proc/1/environ": "PATH=/bin\x00container=lxc\x00"}, nil, "lxc"},
	} {
		if got := detect(fakeFiles{tc.files, tc.env}).Name; got != tc.want {
			t.Errorf("%s: engine %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestMaskedProc(t *testing.T) {
	mountinfo := `22 27 0:21 / /proc rw,nosuid - proc proc rw
50 22 0:21 /sys /proc/sys ro,nosuid - proc proc rw
55 22 0:44 /null /proc/keys rw,nosuid - tmpfs tmpfs rw
23 27 0:22 / /sys rw - sysfs sysfs rw
`
	if got := maskedProc(strings.NewReader(mountinfo)); !slices.Equal(got, []string{"/proc/sys", "/proc/keys"}) {
		t.Errorf("masked %q", got)
	}
}

func TestFixesForEveryEngine(t *testing.T) {
	for _, engine := range []string{"docker", "podman", "kubernetes", "lxc"} {
		f := FixesFor(engine)
		if f.UserNS == "" || f.Proc == "" || f.AppArmor == "" {
			t.Errorf("%s: a fix is missing: %+v", engine, f)
		}
	}
	if f := FixesFor("podman"); !strings.Contains(f.Proc, "unmask=ALL") {
		t.Errorf("podman's /proc fix: %q", f.Proc)
	}
	if f := FixesFor("docker"); !strings.Contains(f.Proc, "systempaths=unconfined") {
		t.Errorf("docker's /proc fix: %q", f.Proc)
	}
}
