package e2b

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/api"
)

func TestMetadataFilter(t *testing.T) {
	for _, tc := range []struct {
		param string
		want  map[string]string
	}{
		{"", nil},
		// e2b 2.51 for {purpose: 'test', 'we ird': 'a&b'}, once the query itself is decoded.
		{"purpose=test&we%2520ird=a%2526b", map[string]string{"purpose": "test", "we ird": "a&b"}},
		// The Python SDK encodes one level less.
		{"we+ird=a%26b", map[string]string{"we ird": "a&b"}},
	} {
		got, err := metadataFilter(tc.param)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("metadataFilter(%q) = %v, %v; want %v", tc.param, got, err, tc.want)
		}
	}
	// A bare % is refused rather than misread.
	if got, err := metadataFilter("pct=50%"); err == nil {
		t.Errorf("metadataFilter(pct=50%%) = %v, want an error", got)
	}
}

func TestNetwork(t *testing.T) {
	no, yes := false, true
	for _, tc := range []struct {
		name     string
		internet *bool
		n        *networkConfig
		want     api.Network
		refused  string
	}{
		{name: "nothing: the profile's", want: api.Network{}},
		{name: "internet true (the Python SDK's default): the profile's", internet: &yes, want: api.Network{}},
		{name: "internet false", internet: &no, want: api.Network{Mode: "none"}},
		{name: "deny all", n: &networkConfig{DenyOut: []string{"0.0.0.0/0"}}, want: api.Network{Mode: "none"}},
		{name: "allowed hosts", n: &networkConfig{DenyOut: []string{"0.0.0.0/0"}, AllowOut: []string{"pypi.org", "*.pythonhosted.org"}},
			want: api.Network{Mode: "proxy", AllowHosts: []string{"pypi.org", "*.pythonhosted.org"}}},
		{name: "an address", n: &networkConfig{AllowOut: []string{"1.1.1.1"}}, refused: "allows host names, not addresses"},
		{name: "a CIDR", n: &networkConfig{AllowOut: []string{"10.0.0.0/8"}}, refused: "allows host names, not addresses"},
		{name: "deny some", n: &networkConfig{DenyOut: []string{"10.0.0.0/8"}}, refused: "cannot deny some and allow the rest"},
		{name: "rules", n: &networkConfig{Rules: []byte(`{"a.com":[]}`)}, refused: "does not rewrite requests"},
	} {
		got, err := network(tc.internet, tc.n)
		switch {
		case tc.refused != "" && (err == nil || !strings.Contains(err.Error(), tc.refused)):
			t.Errorf("%s: err %v, want one saying %q", tc.name, err, tc.refused)
		case tc.refused == "" && (err != nil || !reflect.DeepEqual(got, tc.want)):
			t.Errorf("%s: %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
	}
}

func TestCreateRequest(t *testing.T) {
	s := &Server{Templates: Templates{"base": "agent", "py": "/p/py.toml"}}
	secs := int64(90)
	req, err := s.createRequest(newSandbox{TemplateID: "py", Timeout: &secs, Metadata: map[string]string{"mastra-sandbox-id": "m1"}, EnvVars: map[string]string{"A": "1"}}, "/w")
	if err != nil {
		t.Fatal(err)
	}
	want := api.CreateRequest{
		Profile: "/p/py.toml", Workdir: "/w", Cwd: Home, Grants: api.Grants{Tmpfs: []string{Home, Workspace}},
		Env:    map[string]string{"HOME": Home, "A": "1"},
		Labels: map[string]string{labelTemplate: "py", "mastra-sandbox-id": "m1"}, TTL: api.Duration(90e9),
		Cache: []string{"none"},
	}
	if !reflect.DeepEqual(req, want) {
		t.Errorf("createRequest = %+v, want %+v", req, want)
	}
	if req, _ := s.createRequest(newSandbox{TemplateID: "mastra-5e041282b68ff13a"}, "/w"); req.Profile != "agent" || req.TTL != api.Duration(DefaultTimeout) {
		t.Errorf("an unknown template: profile %q, TTL %v; want base's profile and the default timeout", req.Profile, req.TTL)
	}
	for in, refused := range map[string]newSandbox{
		"jail's own":             {TemplateID: "base", Metadata: map[string]string{"e2b.template": "x"}},
		"metadata as its labels": {TemplateID: "base", Metadata: map[string]string{"we ird": "x"}},
		"runs no MCP gateway":    {TemplateID: "base", MCP: []byte(`{"x":{}}`)},
		"no E2B volumes":         {TemplateID: "base", VolumeMounts: []byte(`[{"name":"v","path":"/v"}]`)},
		"templateID":             {},
	} {
		if _, err := s.createRequest(refused, "/w"); err == nil || !strings.Contains(err.Error(), in) {
			t.Errorf("createRequest(%+v): err %v, want one saying %q", refused, err, in)
		}
	}
}

func TestCheckLoopback(t *testing.T) {
	for _, ok := range []string{"127.0.0.1:0", "127.0.0.1:8080", "[::1]:49983", "localhost:3000"} {
		if err := CheckLoopback(ok); err != nil {
			t.Errorf("CheckLoopback(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"0.0.0.0:8080", ":8080", "[::]:1", "192.168.1.2:80", "example.com:80", "127.0.0.1"} {
		if err := CheckLoopback(bad); err == nil {
			t.Errorf("CheckLoopback(%q) accepted it", bad)
		}
	}
}

func TestLoadKey(t *testing.T) {
	file := filepath.Join(t.TempDir(), "api-key")
	key, err := LoadKey(file)
	if err != nil || !keyFormat.MatchString(key) || len(key) != 44 {
		t.Fatalf("LoadKey made %q, %v; want e2b_ and 40 hex digits", key, err)
	}
	if fi, _ := os.Stat(file); fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, want 0600", fi.Mode().Perm())
	}
	if again, err := LoadKey(file); again != key || err != nil {
		t.Errorf("LoadKey again = %q, %v; want the same key", again, err)
	}
	os.Chmod(file, 0o644)
	if _, err := LoadKey(file); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("a key others may read: %v", err)
	}
}

func TestEndEvent(t *testing.T) {
	kill := "KILL"
	for _, tc := range []struct {
		exit           api.Exit
		code           int32
		exited         bool
		status, errors string
	}{
		{api.Exit{ExitCode: 0}, 0, true, "exit status 0", ""},
		{api.Exit{ExitCode: 3}, 3, true, "exit status 3", "exit status 3"},
		{api.Exit{ExitCode: 137, Signal: &kill}, -1, false, "signal: killed", "signal: killed"},
	} {
		e := endEvent(&tc.exit)
		if e.ExitCode != tc.code || e.Exited != tc.exited || e.Status != tc.status || e.GetError() != tc.errors {
			t.Errorf("endEvent(%+v) = %v", tc.exit, e)
		}
	}
}

func TestResolvePath(t *testing.T) {
	for in, want := range map[string]string{"": Home, "a.txt": Home + "/a.txt", "./d/a": Home + "/d/a", "/tmp/x": "/tmp/x"} {
		if got := resolvePath(in); got != want {
			t.Errorf("resolvePath(%q) = %q, want %q", in, got, want)
		}
	}
}
