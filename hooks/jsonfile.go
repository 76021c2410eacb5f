package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// object is a JSON object that keeps its keys in file order, so that rewriting a harness's
// settings file changes only what jail adds: every other value is kept byte for byte (re-indented).
type object struct {
	keys []string
	vals map[string]json.RawMessage
}

func (o *object) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return errors.New("not a JSON object")
	}
	o.keys, o.vals = nil, map[string]json.RawMessage{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		key := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return err
		}
		if _, dup := o.vals[key]; !dup {
			o.keys = append(o.keys, key)
		}
		o.vals[key] = v
	}
	_, err := dec.Token()
	return err
}

func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		key, _ := json.Marshal(k)
		b.Write(key)
		b.WriteByte(':')
		b.Write(o.vals[k])
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// set puts v under key, at the end if key is new.
func (o *object) set(key string, v any) error {
	data, err := marshal(v)
	if err != nil {
		return err
	}
	if o.vals == nil {
		o.vals = map[string]json.RawMessage{}
	}
	if _, ok := o.vals[key]; !ok {
		o.keys = append(o.keys, key)
	}
	o.vals[key] = data
	return nil
}

// child decodes the object under key; a missing key or null gives an empty object.
func (o *object) child(key string) (object, error) {
	var c object
	raw, ok := o.vals[key]
	if !ok || string(raw) == "null" {
		return object{vals: map[string]json.RawMessage{}}, nil
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return c, fmt.Errorf("%q: %w", key, err)
	}
	return c, nil
}

// readObject reads a JSON settings file; a missing file is an empty object.
func readObject(path string) (object, bool, error) {
	var o object
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return object{vals: map[string]json.RawMessage{}}, false, nil
	}
	if err != nil {
		return o, false, err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return object{vals: map[string]json.RawMessage{}}, true, nil
	}
	if err := json.Unmarshal(data, &o); err != nil {
		return o, true, fmt.Errorf("%s is not plain JSON (comments?): %w; add jail's entry by hand", path, err)
	}
	return o, true, nil
}

// writeFile replaces path with data, keeping a copy of what was there (PATH.jail-backup-TIME)
// and its permissions; the replacement is atomic (a temporary file renamed over it). It returns
// the backup's path, "" when there was no file.
func writeFile(path string, data []byte, now time.Time) (backup string, err error) {
	mode := fs.FileMode(0o600)
	old, err := os.ReadFile(path)
	switch {
	case err == nil:
		if st, err := os.Stat(path); err == nil {
			mode = st.Mode().Perm()
		}
		backup = path + ".jail-backup-" + now.Format("20060102-150405")
		if err := os.WriteFile(backup, old, mode); err != nil {
			return "", fmt.Errorf("back up %s: %w", path, err)
		}
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return "", err
		}
	default:
		return "", err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".jail-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	return backup, os.Rename(tmp.Name(), path)
}

// indentJSON renders o as the harnesses write their settings: two-space indent, final newline.
func indentJSON(o object) ([]byte, error) {
	compact, err := marshal(o)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := json.Indent(&b, compact, "", "  "); err != nil {
		return nil, err
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}
