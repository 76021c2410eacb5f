package profiles

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkResolve loads and resolves the default profile, as every `jail -- COMMAND` does, in an
// empty working directory:
//
//	go test -run '^$' -bench Resolve -benchmem ./profiles/
func BenchmarkResolve(b *testing.B) {
	home, cwd := b.TempDir(), b.TempDir()
	host := Host{
		Home: home, Cwd: cwd,
		Environ: []string{"HOME=" + home, "PATH=/usr/bin:/bin", "XDG_CONFIG_HOME=" + filepath.Join(home, ".config")},
		UID:     os.Getuid(), GID: os.Getgid(),
	}
	argv := []string{"true"}
	for b.Loop() {
		p, err := Load(DefaultProfile, host)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Resolve(p, host, argv); err != nil {
			b.Fatal(err)
		}
	}
}
