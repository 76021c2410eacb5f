package server

import (
	"context"
	"strings"

	"github.com/jail-sandbox/jail/api"
	"github.com/jail-sandbox/jail/internal/http1"
	"github.com/jail-sandbox/jail/jail/client"
)

// list answers GET /v1/sandboxes.
func (s *Server) list(w *response, r *http1.Request) {
	opts := client.ListOptions{Labels: map[string]string{}, Name: r.Query.Get("name")}
	for _, l := range r.Query["label"] {
		k, v, err := client.ParseLabel(l)
		if err != nil {
			w.error(api.Errorf(api.InvalidArgument, "%s", err))
			return
		}
		opts.Labels[k] = v
	}
	if st := r.Query.Get("state"); st != "" {
		opts.States = strings.Split(st, ",")
	}
	list, err := s.Client.List(opts)
	if err != nil {
		w.error(err)
		return
	}
	w.json(200, api.ListResponse{Sandboxes: list})
}

// create answers POST /v1/sandboxes.
func (s *Server) create(w *response, r *http1.Request) {
	var req api.CreateRequest
	if err := decode(r, &req); err != nil {
		w.error(err)
		return
	}
	sb, err := s.Client.Create(context.Background(), req)
	if err != nil {
		w.error(err)
		return
	}
	w.json(201, sb)
}

// sandbox answers GET, PATCH and DELETE /v1/sandboxes/{id}.
func (s *Server) sandbox(w *response, r *http1.Request, id string) {
	switch r.Method {
	case "GET":
		sb, err := s.Client.Get(id)
		if err != nil {
			w.error(err)
			return
		}
		w.json(200, sb)
	case "PATCH":
		var p api.PatchRequest
		if err := decode(r, &p); err != nil {
			if strings.Contains(err.Error(), "unknown field") {
				err = api.Errorf(api.InvalidArgument, "the policy is fixed at create: only ttl, idle_timeout and labels change (%s)", strings.TrimPrefix(err.Error(), "jail: "))
			}
			w.error(err)
			return
		}
		sb, err := s.Client.Patch(id, p)
		if err != nil {
			w.error(err)
			return
		}
		w.json(200, sb)
	case "DELETE":
		if err := s.Client.Delete(id, queryBool(r, "force")); err != nil {
			w.error(err)
			return
		}
		w.noContent()
	default:
		w.error(wrongMethod(r))
	}
}

// prune answers POST /v1/prune.
func (s *Server) prune(w *response) {
	removed, err := s.Client.Prune()
	if err != nil {
		w.error(err)
		return
	}
	w.json(200, api.PruneResponse{Removed: removed})
}
