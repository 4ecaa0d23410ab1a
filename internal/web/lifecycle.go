package web

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/sagasu-dev/sagasu/internal/runs"
	"github.com/sagasu-dev/sagasu/internal/store"
)

// runOps are the run log's lifecycle operations, with the configured
// retention; a run or thread this server drives now is never deleted.
func (s *Server) runOps() *runs.Ops {
	return s.app.RunOps(s.rt.Store, func(id string) bool {
		return s.runs.Running(id) || s.running(threadKey(id)) || s.running(runKey(id))
	})
}

// lifecycleStatus is the HTTP status of a lifecycle operation's failure.
func lifecycleStatus(err error) int {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, store.ErrRunning):
		return http.StatusConflict
	}
	return http.StatusInternalServerError
}

func (s *Server) deleteRun(w http.ResponseWriter, r *http.Request) {
	s.deleteOf(w, r, store.RunAgent)
}

func (s *Server) deleteThread(w http.ResponseWriter, r *http.Request) {
	s.deleteOf(w, r, store.RunChat)
}

// deleteOf deletes one run of kind with its log; ?force=true deletes one
// whose status is still running (left by a killed process).
func (s *Server) deleteOf(w http.ResponseWriter, r *http.Request, kind string) {
	force, ok := s.flag(w, r, "force")
	if !ok {
		return
	}
	out, err := s.runOps().Delete(r.Context(), runs.DeleteInput{IDs: []string{r.PathValue("id")}, Kind: kind, Force: force})
	if err != nil {
		s.fail(w, lifecycleStatus(err), err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// flag reads a boolean query parameter: absent, true or false.
func (s *Server) flag(w http.ResponseWriter, r *http.Request, name string) (bool, bool) {
	switch v := r.URL.Query().Get(name); v {
	case "", "false":
		return false, true
	case "true":
		return true, true
	default:
		s.fail(w, http.StatusBadRequest, fmt.Errorf("%s=%q: want true or false", name, v))
		return false, false
	}
}

func (s *Server) exportRun(w http.ResponseWriter, r *http.Request) {
	s.exportOf(w, r, store.RunAgent)
}

func (s *Server) exportThread(w http.ResponseWriter, r *http.Request) {
	s.exportOf(w, r, store.RunChat)
}

// exportOf answers one run of kind exported as ?format=json (the default)
// or md, with a file name for the download.
func (s *Server) exportOf(w http.ResponseWriter, r *http.Request, kind string) {
	format := r.URL.Query().Get("format")
	if format != "" && format != runs.FormatJSON && format != runs.FormatMarkdown {
		s.fail(w, http.StatusBadRequest, fmt.Errorf("format=%q: want json or md", format))
		return
	}
	out, err := s.runOps().Export(r.Context(), runs.ExportInput{ID: r.PathValue("id"), Kind: kind, Format: format})
	if err != nil {
		s.fail(w, lifecycleStatus(err), err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// pruneRuns deletes the runs and threads a retention rule selects (the
// body's, or the configured one).
func (s *Server) pruneRuns(w http.ResponseWriter, r *http.Request) {
	var in runs.PruneInput
	if !s.decode(w, r, &in) {
		return
	}
	out, err := s.runOps().Prune(r.Context(), in)
	if err != nil {
		// Every refusal of Prune is the caller's: no rule, a bad age or kind.
		s.fail(w, http.StatusBadRequest, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}
