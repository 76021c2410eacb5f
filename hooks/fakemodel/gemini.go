package fakemodel

import (
	"encoding/json"
	"strings"

	"github.com/jail-sandbox/jail/internal/http1"
)

// The Gemini API, as Gemini CLI calls it (GOOGLE_GEMINI_BASE_URL):
// POST /v1beta/models/MODEL:streamGenerateContent?alt=sse (server-sent events),
// :generateContent and :countTokens.

type geminiRequest struct {
	Contents []struct {
		Parts []struct {
			FunctionResponse *struct {
				ID       string          `json:"id"`
				Name     string          `json:"name"`
				Response json.RawMessage `json:"response"`
			} `json:"functionResponse"`
		} `json:"parts"`
	} `json:"contents"`
	Tools []struct {
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
	GenerationConfig struct {
		ResponseSchema     json.RawMessage `json:"responseSchema"`
		ResponseJSONSchema json.RawMessage `json:"responseJsonSchema"`
		ResponseMIMEType   string          `json:"responseMimeType"`
	} `json:"generationConfig"`
}

// gemini answers POST /VERSION/models/CALL, where CALL is MODEL:METHOD.
func (s *Server) gemini(w *http1.Response, r *http1.Request, call string) {
	_, method, _ := strings.Cut(call, ":")
	if method == "countTokens" {
		writeJSON(w, map[string]any{"totalTokens": 1})
		return
	}
	if method != "streamGenerateContent" && method != "generateContent" {
		notFound(w)
		return
	}
	var req geminiRequest
	if err := readJSON(r, &req); err != nil {
		writeError(w, 400, err)
		return
	}
	var offered []string
	for _, t := range req.Tools {
		for _, f := range t.FunctionDeclarations {
			offered = append(offered, f.Name)
		}
	}
	var result *string
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			if f := p.FunctionResponse; f != nil && f.Name == "run_shell_command" {
				text := textOf(f.Response)
				result = &text
			}
		}
	}
	var part map[string]any
	if tool := s.turn(result, offered, "run_shell_command"); tool != "" {
		part = map[string]any{"functionCall": map[string]any{"id": callID, "name": tool,
			"args": map[string]any{"command": s.command, "description": "jail hook check"}}}
	} else if req.GenerationConfig.ResponseMIMEType == "application/json" {
		// Gemini CLI's own questions (who speaks next, which model to route to) want JSON.
		part = map[string]any{"text": `{"next_speaker":"user","reasoning":"done","model_choice":"flash","complexity_reasoning":"simple","complexity_score":1}`}
	} else {
		text := doneText
		if result == nil {
			text = "ok"
		}
		part = map[string]any{"text": text}
	}
	response := map[string]any{
		"candidates": []any{map[string]any{"index": 0, "finishReason": "STOP",
			"content": map[string]any{"role": "model", "parts": []any{part}}}},
		"usageMetadata": map[string]any{"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
		"modelVersion":  "jail-check",
	}
	if method == "generateContent" {
		writeJSON(w, response)
		return
	}
	startSSE(w)
	sse(w, "", response) //nolint:errcheck // the client sees a cut stream
}
