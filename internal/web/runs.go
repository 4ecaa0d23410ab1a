package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/sagasu-dev/sagasu/internal/agent/planact"
	"github.com/sagasu-dev/sagasu/internal/app"
	"github.com/sagasu-dev/sagasu/internal/graph"
	"github.com/sagasu-dev/sagasu/internal/store"
)

func runKey(id string) string { return "run:" + id }

func (s *Server) listRuns(w http.ResponseWriter, r *http.Request) {
	runs, err := s.rt.Store.ListRuns(r.Context(), store.RunFilter{Kind: store.RunAgent, Limit: 100})
	if err != nil {
		s.fail(w, http.StatusInternalServerError, fmt.Errorf("list the agent's runs: %w", err))
		return
	}
	writeJSON(w, http.StatusOK, runsView(runs, s))
}

// startRun starts a Plan-and-Act run toward a goal in the background, with
// the configured MCP servers it names (a browser through Playwright MCP,
// for one) and its settings: a research run over the index unless a model
// is configured. It answers 202 with the run's ID at once.
func (s *Server) startRun(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Goal     string              `json:"goal"`
		Offline  bool                `json:"offline,omitempty"`
		MCP      []string            `json:"mcp,omitempty"`
		Settings planact.TuningInput `json:"settings,omitzero"`
	}
	if !s.decode(w, r, &in) {
		return
	}
	goal := strings.TrimSpace(in.Goal)
	if goal == "" {
		s.fail(w, http.StatusBadRequest, planact.ErrEmptyGoal)
		return
	}
	opt, err := s.runs.Options(goal, in.MCP, in.Offline, in.Settings)
	if err != nil {
		s.fail(w, http.StatusBadRequest, err)
		return
	}
	id, err := s.runs.Start(r.Context(), opt)
	if err != nil {
		s.fail(w, runStatus(err), fmt.Errorf("start the agent: %w", err))
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"id": id, "mode": s.mode(opt.Offline), "mcp": in.MCP})
}

// runStatus is the HTTP status of a run that could not start.
func runStatus(err error) int {
	switch {
	case errors.Is(err, app.ErrTooManyRuns):
		return http.StatusTooManyRequests
	case errors.Is(err, app.ErrRunning):
		return http.StatusConflict
	case errors.Is(err, planact.ErrNeedsModel), errors.Is(err, planact.ErrEmptyGoal), errors.Is(err, app.ErrNoMCPServer), errors.Is(err, app.ErrBadSetting):
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}

// resumeRun continues a stopped run from its last completed step, with the
// settings it recorded (its MCP servers, models and limits).
func (s *Server) resumeRun(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var in struct {
		Settings planact.TuningInput `json:"settings,omitzero"`
	}
	if !s.decode(w, r, &in) {
		return
	}
	opt, err := s.runs.Options("", nil, false, in.Settings)
	if err != nil {
		s.fail(w, http.StatusBadRequest, err)
		return
	}
	run, err := s.rt.Store.Run(r.Context(), id)
	if err != nil || run.Kind != store.RunAgent {
		s.fail(w, http.StatusNotFound, fmt.Errorf("no agent run %q: the Runs tab lists them", id))
		return
	}
	if err := s.runs.Resume(r.Context(), id, opt); err != nil {
		s.fail(w, runStatus(err), fmt.Errorf("resume run %s: %w", id, err))
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"id": id})
}

func (s *Server) stopRun(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !s.runs.Stop(id) {
		s.fail(w, http.StatusConflict, fmt.Errorf("run %s is not running", id))
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]bool{"stopping": true})
}

// planView is what the page shows of a checkpoint: the plan and answer.
type planView struct {
	Goal    string          `json:"goal"`
	Plan    []planact.Step  `json:"plan"`
	Answer  string          `json:"answer,omitempty"`
	Replans int             `json:"replans"`
	Results []planact.Cited `json:"results,omitempty"`
}

// agentShaper turns a run's stored events, in order, into what the page
// gets: checkpoints become the plan they hold (the state, rebuilt from the
// checkpoints' changes, is large and internal); other events are the
// graph.Event as the CLI prints it.
type agentShaper struct{ rep graph.Replayer }

// add folds e in, without shaping it: events a stream's client already has.
func (a *agentShaper) add(e store.Event) {
	var ev graph.Event
	if json.Unmarshal(e.Data, &ev) == nil {
		_, _ = a.rep.Add(ev)
	}
}

func (a *agentShaper) shape(e store.Event) (sseEvent, bool) {
	var ev graph.Event
	if err := json.Unmarshal(e.Data, &ev); err != nil {
		return sseEvent{}, false
	}
	switch ev.Type {
	case graph.TypeCheckpoint:
		var st planView
		if _, err := a.rep.Add(ev); err != nil || json.Unmarshal(a.rep.State(), &st) != nil {
			return sseEvent{}, false
		}
		return sseEvent{Event: "state", Data: st}, true
	case graph.TypeOnce:
		return sseEvent{}, false
	}
	ev.State, ev.Delta = nil, nil
	return sseEvent{Event: ev.Type, Data: ev}, true
}

// showRun returns a run's header, its latest plan, outcome and timeline.
func (s *Server) showRun(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	run, err := s.rt.Store.Run(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) && s.runs.Running(id) {
		// Started, but nothing logged yet.
		writeJSON(w, http.StatusOK, map[string]any{"run": runView{ID: id, Kind: store.RunAgent, Title: "(starting)", Status: "running", Running: true}})
		return
	}
	if errors.Is(err, store.ErrNotFound) || (err == nil && run.Kind != store.RunAgent) {
		s.fail(w, http.StatusNotFound, fmt.Errorf("no agent run %q: the Runs tab lists them", id))
		return
	}
	if err != nil {
		s.fail(w, http.StatusInternalServerError, err)
		return
	}
	evs, err := s.rt.Store.Events(r.Context(), id, 0)
	if err != nil {
		s.fail(w, http.StatusInternalServerError, err)
		return
	}
	out := map[string]any{"run": runsView([]store.Run{run}, s)[0]}
	var timeline []any
	var shaper agentShaper
	for _, e := range evs {
		ev, ok := shaper.shape(e)
		if !ok {
			continue
		}
		if ev.Event == "state" {
			out["state"] = ev.Data
			continue
		}
		if ev.Event == graph.TypeOutcome {
			var o graph.Outcome
			if json.Unmarshal(ev.Data.(graph.Event).Result, &o) == nil {
				out["outcome"] = o
			}
		}
		timeline = append(timeline, ev.Data)
	}
	out["events"] = timeline
	var set app.RunSettings
	if json.Unmarshal(run.Meta, &set) == nil && len(run.Meta) > 0 {
		out["settings"] = set
	}
	if msg := s.runs.Failure(id); msg != "" {
		out["error"] = msg
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) runEvents(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var shaper agentShaper
	if after := lastEventID(r); after > 0 {
		// The client has the events up to after: their checkpoints still
		// build the state the next ones change.
		prior, err := s.rt.Store.Events(r.Context(), id, 0)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			s.fail(w, http.StatusInternalServerError, fmt.Errorf("read run %s: %w", id, err))
			return
		}
		for _, e := range prior {
			if e.Seq <= after {
				shaper.add(e)
			}
		}
	}
	s.streamRun(w, r, id, runKey(id), shaper.shape)
}
