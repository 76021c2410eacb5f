package proxy

import (
	"os"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

// TestAgentNetDraft checks the draft built-in profile: every allow entry is a valid pattern
// and is documented in the header, and the proxy built from it admits the registries.
func TestAgentNetDraft(t *testing.T) {
	data, err := os.ReadFile("testdata/agent-net.toml")
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Network struct {
			Mode  string
			Allow []string
		}
	}
	if err := toml.Unmarshal(data, &p); err != nil {
		t.Fatal(err)
	}
	if p.Network.Mode != "proxy" || len(p.Network.Allow) == 0 {
		t.Fatalf("network table %+v", p.Network)
	}
	pol := mustPolicy(t, Policy{Allow: p.Network.Allow})
	for _, a := range p.Network.Allow {
		if !strings.Contains(string(data), "#   "+a+" ") {
			t.Errorf("%s is not documented in the header", a)
		}
	}
	for _, host := range []string{"pypi.org", "files.pythonhosted.org", "registry.npmjs.org", "static.crates.io", "proxy.golang.org", "sum.golang.org", "github.com", "codeload.github.com"} {
		if _, d := pol.decide(host, 443); d != nil {
			t.Errorf("%s refused: %v", host, d)
		}
	}
	for _, host := range []string{"storage.googleapis.com", "evil.github.com", "gist.githubusercontent.com", "pypi.org.evil.test"} {
		if _, d := pol.decide(host, 443); d == nil {
			t.Errorf("%s allowed", host)
		}
	}
}
