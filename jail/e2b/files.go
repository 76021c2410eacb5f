package e2b

import (
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"path"

	"github.com/jail-sandbox/jail/api"
)

// envd's HTTP file routes: GET /files?path=P (the bytes) and POST /files (a multipart form whose
// parts are named by their paths, or the raw bytes of ?path=P), on jail's file operations.

// GET /files?path=P → 200 and the file's bytes; 404 when it does not exist, 400 for a directory.
func (s *Server) download(w http.ResponseWriter, r *http.Request) {
	id, p := sandboxOf(r.Context()), resolvePath(r.URL.Query().Get("path"))
	out := &lazyWriter{w: w}
	err := s.Client.ReadFile(id, p, 0, -1, out)
	if err != nil && !out.started {
		e := api.AsError(err)
		writeError(w, api.Status(e.Code), e.Message)
		return
	}
	if !out.started {
		// An empty file: net/http sends Content-Length: 0, which the SDK wants for it.
		w.Header().Set("Content-Type", "application/octet-stream")
		w.WriteHeader(http.StatusOK)
	}
}

// lazyWriter sends the 200 status and headers with the first bytes, so that an error that
// comes before any can still be answered as one.
type lazyWriter struct {
	w       http.ResponseWriter
	started bool
}

func (l *lazyWriter) Write(b []byte) (int, error) {
	if !l.started {
		l.started = true
		l.w.Header().Set("Content-Type", "application/octet-stream")
		l.w.WriteHeader(http.StatusOK)
	}
	return l.w.Write(b)
}

// writtenJSON is envd's EntryInfo of a written file.
type writtenJSON struct {
	Name string `json:"name"`
	Type string `json:"type"`
	Path string `json:"path"`
}

// POST /files → 200 [EntryInfo…], one per file written; parents are created, files replaced.
func (s *Server) upload(w http.ResponseWriter, r *http.Request) {
	id, target := sandboxOf(r.Context()), r.URL.Query().Get("path")
	var written []writtenJSON
	write := func(p string, body io.Reader) error {
		p = resolvePath(p)
		if _, err := s.Client.WriteFile(id, p, "", body); err != nil {
			return err
		}
		written = append(written, writtenJSON{Name: path.Base(p), Type: "file", Path: p})
		return nil
	}
	mt, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	var err error
	switch {
	case mt == "multipart/form-data":
		err = eachPart(multipart.NewReader(r.Body, params["boundary"]), target, write)
	case target == "":
		err = api.Errorf(api.InvalidArgument, "upload: a raw upload needs ?path=")
	default:
		err = write(target, r.Body)
	}
	if err != nil {
		e := api.AsError(err)
		writeError(w, api.Status(e.Code), e.Message)
		return
	}
	writeJSON(w, http.StatusOK, written)
}

// eachPart writes each file part of a form, to the request's path when it names one, else to
// the part's file name (the SDK names each part by its path).
func eachPart(mr *multipart.Reader, target string, write func(string, io.Reader) error) error {
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return api.Errorf(api.InvalidArgument, "upload: the multipart form: %s", err)
		}
		p := target
		if p == "" {
			// The file name as sent: Part.FileName would keep only its last element.
			_, params, _ := mime.ParseMediaType(part.Header.Get("Content-Disposition"))
			p = params["filename"]
		}
		if p == "" {
			return api.Errorf(api.InvalidArgument, "upload: a part names no file (neither ?path= nor a filename)")
		}
		err = write(p, part)
		part.Close()
		if err != nil {
			return err
		}
	}
}
