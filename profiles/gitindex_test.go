package profiles

import (
	"os"
	"testing"
)

// FuzzParseIndex feeds arbitrary bytes to the index parser: an index is the user's own file, but
// a corrupt or future one must give an error, never a panic or a hang. Seeds: indexes of each
// version git writes.
func FuzzParseIndex(f *testing.F) {
	for _, version := range []string{"2", "3", "4"} {
		dir := f.TempDir()
		if err := os.WriteFile(dir+"/a", []byte("a"), 0o644); err != nil {
			f.Fatal(err)
		}
		gitInit(f, dir, []string{"add", "a"},
			[]string{"update-index", "--add", "--cacheinfo", "160000,1111111111111111111111111111111111111111,sub/mod"},
			[]string{"update-index", "--index-version", version})
		data, err := os.ReadFile(dir + "/.git/index")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		links, _, err := parseIndex(data)
		if err != nil && links != nil {
			t.Errorf("links %q with error %v", links, err)
		}
	})
}
