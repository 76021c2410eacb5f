package profiles

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"
)

// TestFormatRoundTrip: `profile show` output parses back to the same resolved profile.
func TestFormatRoundTrip(t *testing.T) {
	host := testHost(t)
	mkdir(t, host.Cwd+"/.git/hooks")
	refs := append(builtinNames(), fixture(t, "good.toml"))
	for _, ref := range refs {
		t.Run(filepath.Base(ref), func(t *testing.T) {
			p, err := Load(ref, host)
			if err != nil {
				t.Fatal(err)
			}
			want := resolveForCompare(t, p, host)
			e, err := Expand(p, host)
			if err != nil {
				t.Fatal(err)
			}
			text, err := Format(e)
			if err != nil {
				t.Fatal(err)
			}
			shown, err := Parse("shown.toml", text)
			if err != nil {
				t.Fatalf("Format output does not parse: %v\n%s", err, text)
			}
			if got := resolveForCompare(t, shown, host); got != want {
				t.Errorf("resolved differently after Format:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// resolveForCompare resolves p and renders the plan, without the profile's name, as JSON.
func resolveForCompare(t *testing.T, p *Profile, host Host) string {
	t.Helper()
	spec, err := Resolve(p, host, []string{"true"})
	if err != nil {
		t.Fatal(err)
	}
	spec.Profile = ""
	text, err := json.MarshalIndent(spec, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(text)
}

func TestFormatShowsWidening(t *testing.T) {
	p, err := Load(fixture(t, "good.toml"), testHost(t))
	if err != nil {
		t.Fatal(err)
	}
	text, err := Format(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(text, []byte(`# WIDENS: network.mode = "host"`)) {
		t.Errorf("network host not flagged:\n%s", text)
	}
}
