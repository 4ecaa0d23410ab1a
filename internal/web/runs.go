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

// runInput starts an agent run.
type runInput struct {
	Goal     string              `json:"goal"`
	Offline  bool                `json:"offline,omitempty" jsonschema:"run without the configured model (a research run over the index)"`
	MCP      []string            `json:"mcp,omitempty" jsonschema:"configured MCP servers the run may use, by name (GET /api/info lists them)"`
	Settings planact.TuningInput `json:"settings,omitzero" jsonschema:"the run's models, temperature, reply cap, thinking budget and limits over the configured ones"`
}

// resumeInput resumes an agent run.
type resumeInput struct {
	Settings planact.TuningInput `json:"settings,omitzero" jsonschema:"settings over the ones the run recorded"`
}

// runAccepted answers a run that was started or resumed.
type runAccepted struct {
	ID   string   `json:"id"`
	Mode string   `json:"mode,omitempty" jsonschema:"offline, or the model as driver/model"`
	MCP  []string `json:"mcp,omitempty"`
}

// runDetail is a run as the Runs tab shows it.
type runDetail struct {
	Run      runView              `json:"run"`
	State    *planView            `json:"state,omitempty" jsonschema:"the latest plan"`
	Outcome  *graph.Outcome       `json:"outcome,omitempty"`
	Events   []graph.Event        `json:"events,omitempty" jsonschema:"the timeline"`
	Settings *planact.RunSettings `json:"settings,omitempty" jsonschema:"what the run runs with, as it recorded it"`
	Error    string               `json:"error,omitempty" jsonschema:"why the run failed before it logged an outcome"`
}

// startRun starts a Plan-and-Act run toward a goal in the background, with
// the configured MCP servers it names (a browser through Playwright MCP,
// for one) and its settings: a research run over the index unless a model
// is configured. It answers 202 with the run's ID at once.
func (s *Server) startRun(w http.ResponseWriter, r *http.Request) {
	var in runInput
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
	opt.Face = store.FacePage
	if s.full() {
		// Refused before the agent (and any MCP server it starts) is built.
		s.failFull(w)
		return
	}
	id, err := s.runs.Start(r.Context(), opt)
	if err != nil {
		s.fail(w, runStatus(err), fmt.Errorf("start the agent: %w", err))
		return
	}
	writeJSON(w, http.StatusAccepted, runAccepted{ID: id, Mode: s.mode(opt.Offline), MCP: in.MCP})
}

// runStatus is the HTTP status of a run that could not start.
func runStatus(err error) int {
	switch {
	case errors.Is(err, app.ErrTooManyRuns):
		return http.StatusTooManyRequests
	case errors.Is(err, app.ErrRunning), errors.Is(err, store.ErrLeased):
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
	var in resumeInput
	if !s.decode(w, r, &in) {
		return
	}
	opt, err := s.runs.Options("", nil, false, in.Settings)
	if err != nil {
		s.fail(w, http.StatusBadRequest, err)
		return
	}
	opt.Face = store.FacePage
	run, err := s.rt.Store.Run(r.Context(), id)
	if err != nil || run.Kind != store.RunAgent {
		s.fail(w, http.StatusNotFound, fmt.Errorf("no agent run %q: the Runs tab lists them", id))
		return
	}
	if s.full() {
		s.failFull(w)
		return
	}
	if err := s.runs.Resume(r.Context(), id, opt); err != nil {
		s.fail(w, runStatus(err), fmt.Errorf("resume run %s: %w", id, err))
		return
	}
	writeJSON(w, http.StatusAccepted, runAccepted{ID: id})
}

func (s *Server) stopRun(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !s.runs.Stop(id) {
		s.fail(w, http.StatusConflict, fmt.Errorf("run %s is not running", id))
		return
	}
	writeJSON(w, http.StatusAccepted, stopping{Stopping: true})
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
		writeJSON(w, http.StatusOK, runDetail{Run: runView{ID: id, Kind: store.RunAgent, Title: "(starting)", Status: "running", Running: true}})
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
	out := runDetail{Run: runsView([]store.Run{run}, s)[0]}
	var shaper agentShaper
	for _, e := range evs {
		ev, ok := shaper.shape(e)
		if !ok {
			continue
		}
		switch d := ev.Data.(type) {
		case planView:
			out.State = &d
		case graph.Event:
			if d.Type == graph.TypeOutcome {
				var o graph.Outcome
				if json.Unmarshal(d.Result, &o) == nil {
					out.Outcome = &o
				}
			}
			out.Events = append(out.Events, d)
		}
	}
	if len(run.Meta) > 0 {
		var set planact.RunSettings
		if json.Unmarshal(run.Meta, &set) == nil {
			out.Settings = &set
		}
	}
	out.Error = s.runs.Failure(id)
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) runEvents(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var shaper agentShaper
	after, err := lastEventID(r)
	if err != nil {
		s.fail(w, http.StatusBadRequest, err)
		return
	}
	if after > 0 {
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
