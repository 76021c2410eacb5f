package profiles

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse feeds arbitrary documents to Parse. Whatever parses must survive Expand and
// Resolve without a panic, also merged over and under the default profile, and Format must
// reach a fixed point: its output parses back and formats to the same text. Seeds:
// testdata/fuzz/FuzzParse, the fixtures, the built-ins.
func FuzzParse(f *testing.F) {
	fixtures, _ := filepath.Glob("testdata/profiles/*.toml")
	for _, file := range fixtures {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, name := range builtinNames() {
		data, err := builtins.ReadFile(name + ".toml")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	host := Host{Home: "/root", Cwd: "/tmp", TmpDir: "/tmp", Environ: []string{"PATH=/usr/bin", "LC_ALL=C"}}
	home := host
	home.Home = f.TempDir() // no profiles of this machine's user, whoever runs the test
	base, err := Load(DefaultProfile, home)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse("fuzz.toml", data)
		if err != nil {
			var located *Error
			if !errors.As(err, &located) {
				t.Fatalf("error %v (%T) is not a *profiles.Error", err, err)
			}
			return
		}
		text, err := Format(p)
		if err != nil {
			t.Fatalf("Format: %v", err)
		}
		again, err := Parse("fuzz.toml", text)
		if err != nil {
			t.Fatalf("Format output does not parse: %v\n%s", err, text)
		}
		if text2, err := Format(again); err != nil || !bytes.Equal(text, text2) {
			t.Fatalf("Format is not a fixed point (%v):\n%s\n---\n%s", err, text, text2)
		}
		p.Extends = nil // Load's job; Resolve must not read other files
		_, _ = Resolve(p, host, []string{"true"})
		// As a command line's overlay, and under one: Merge takes any profile either side.
		_, _ = Resolve(Merge(base, p), host, []string{"true"})
		_, _ = Resolve(Merge(p, base), host, []string{"true"})
	})
}
