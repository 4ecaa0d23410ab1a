package planact

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/graph"
)

// The research brain plans and judges without a language model: the
// goal's aspects are the steps, each step searches the knowledge base, and
// the pool of everything found so far is judged for the step's aspect as
// the loop judges it; an aspect not covered gets a refined query (a replan
// of that step), at most DefaultMaxRefines times, and the answer lists the
// covered aspects with the best pages that cover each.

// researchPlan makes one step per aspect of the goal.
func (a *Agent) researchPlan(ctx context.Context, rc *graph.RunContext, s State) (State, error) {
	stages, err := a.opt.Research.Plan(ctx, s.Goal)
	if err != nil {
		if ctx.Err() != nil {
			return s, err
		}
		s.Outcome, s.Reason = OutcomeFailure, "plan the research: "+err.Error()
		return s, rc.Trace(graph.TypeThought, s.Reason)
	}
	s.Plan = nil
	for _, st := range stages {
		step := Step{Text: firstNonEmpty(st.Description, "Find out about "+st.Aspect), Status: StatusPending, Aspect: st.Aspect, Query: st.Query}
		if st.Query == "" {
			step.Status, step.Result = StatusFailed, "the index has none of its words"
		}
		s.Plan = append(s.Plan, step)
	}
	s.StepIdx = -1
	s.advance()
	if err := rc.Trace(graph.TypePlan, planText(s)); err != nil {
		return s, err
	}
	if s.current() == nil {
		s.conclude()
		return s, rc.Trace(graph.TypeThought, s.Reason)
	}
	return s, nil
}

// lastHits returns the hits of the last search.
func (s *State) lastHits() []doc.Hit { return s.hits(s.LastHits) }

// pool returns every hit the run's searches returned, in first-seen order:
// what an aspect is judged against, whichever step's search found it.
func (s *State) pool() []doc.Hit { return s.Passages.All() }

// hits returns the passages at positions (0-based) as hits.
func (s *State) hits(positions []int) []doc.Hit {
	out := make([]doc.Hit, 0, len(positions))
	for _, i := range positions {
		if h, ok := s.Passages.Get(i + 1); ok {
			out = append(out, h)
		}
	}
	return out
}

// researchEvaluate judges everything the run has found so far against the
// step's aspect (an earlier step's search may have found it), and cites the
// best pages that cover it.
func (a *Agent) researchEvaluate(ctx context.Context, rc *graph.RunContext, s State) (State, error) {
	step := s.current()
	var cov Coverage
	if s.ObsOK {
		var err error
		cov, err = a.opt.Research.Evaluate(ctx, s.Goal, step.Aspect, s.pool())
		if err != nil {
			if ctx.Err() != nil {
				return s, err
			}
			s.Why = fmt.Sprintf("evaluate %q: %v", step.Aspect, err)
		}
	} else {
		s.Why = s.Observation
	}
	if cov.Covered {
		cited := s.citeChunks(cov.Evidence)
		if len(cited) == 0 && len(s.LastHits) > 0 {
			i := s.LastHits[0]
			s.cite(i)
			h, _ := s.Passages.Get(i + 1)
			cited = append(cited, fmt.Sprintf("%s > %s [%d]", h.Source.URI, h.Chunk.HeadingPath(), i+1))
		}
		step.Status, step.Result = StatusDone, fmt.Sprintf("covered by %s (score %.2f)", strings.Join(cited, ", "), cov.Score)
		s.Decision = DecideNext
	} else {
		if s.Why == "" {
			s.Why = fmt.Sprintf("aspect %q is not covered by the results of %q (score %.2f)", step.Aspect, step.Query, cov.Score)
		}
		if step.Tries <= DefaultMaxRefines {
			s.Decision = DecideReplan
			return s, rc.Trace(graph.TypeThought, "Not covered: "+s.Why+"; refine the query")
		}
		step.Status, step.Result = StatusFailed, fmt.Sprintf("not found after %d searches (%s)", step.Tries, strings.Join(step.Tried, "; "))
		if leads := s.citeChunks(cov.Leads); len(leads) > 0 {
			step.Result += "; closest: " + strings.Join(leads, ", ")
		}
		s.Decision = DecideNext
	}
	if err := rc.Trace(graph.TypeThought, fmt.Sprintf("Step %d %s: %s", s.StepIdx+1, step.Status, step.Result)); err != nil {
		return s, err
	}
	s.advance()
	if s.current() == nil {
		s.conclude()
		s.Decision = DecideDone
		if s.Outcome == OutcomeFailure {
			s.Decision = DecideFail
		}
	}
	return s, nil
}

// citeChunks cites the passages of the given chunks and names them
// ("uri > heading [n]").
func (s *State) citeChunks(ids []int64) []string {
	var cited []string
	for _, id := range ids {
		if n, ok := s.Passages.Number(id); ok {
			s.cite(n - 1)
			h, _ := s.Passages.Get(n)
			cited = append(cited, fmt.Sprintf("%s > %s [%d]", h.Source.URI, h.Chunk.HeadingPath(), n))
		}
	}
	return cited
}

// researchReplan rewrites the current step's query with a refinement.
func (a *Agent) researchReplan(ctx context.Context, rc *graph.RunContext, s State) (State, error) {
	step := s.current()
	q, err := a.opt.Research.Refine(ctx, s.Goal, step.Aspect, step.Query, s.lastHits(), step.Tried)
	if err != nil && ctx.Err() != nil {
		return s, err
	}
	q = strings.TrimSpace(q)
	if err != nil || q == "" || slices.Contains(step.Tried, q) {
		why := "no new query"
		if err != nil {
			why = err.Error()
		}
		step.Status, step.Result = StatusFailed, fmt.Sprintf("not found: %s; refining gave %s", s.Why, why)
		msg := fmt.Sprintf("Step %d failed: %s", s.StepIdx+1, step.Result)
		s.Decision = ""
		s.advance()
		if s.current() == nil {
			s.conclude()
		}
		return s, rc.Trace(graph.TypeThought, msg)
	}
	step.Query = q
	step.Status = StatusPending
	step.Text = fmt.Sprintf("Find out about %s (refined query: %s)", step.Aspect, q)
	s.Replans++
	s.NeedsReplan, s.Attempt, s.Decision = false, 0, ""
	return s, rc.Trace(graph.TypeReplan, fmt.Sprintf("Replan %d (%s):\n%s", s.Replans, s.Why, planText(s)))
}

// conclude writes the research answer: the covered aspects with their
// citations, and those not found.
func (s *State) conclude() {
	var covered, missing, leads []string
	for _, st := range s.Plan {
		switch st.Status {
		case StatusDone:
			covered = append(covered, fmt.Sprintf("- %s: %s", st.Aspect, strings.TrimPrefix(st.Result, "covered by ")))
		default:
			missing = append(missing, st.Aspect)
			if _, closest, ok := strings.Cut(st.Result, "; closest: "); ok {
				leads = append(leads, fmt.Sprintf("- %s: %s", st.Aspect, closest))
			}
		}
	}
	var b strings.Builder
	if len(covered) > 0 {
		b.WriteString("Covered:\n" + strings.Join(covered, "\n") + "\n")
	}
	if len(missing) > 0 {
		b.WriteString("Not found in the knowledge base: " + strings.Join(missing, ", ") + "\n")
	}
	if len(leads) > 0 {
		b.WriteString("Closest, not confirmed:\n" + strings.Join(leads, "\n") + "\n")
	}
	s.Answer = strings.TrimSpace(b.String())
	switch {
	case len(covered) == 0:
		s.Outcome = OutcomeFailure
		s.Reason = fmt.Sprintf("the knowledge base covers none of the goal's aspects (%s)", strings.Join(missing, ", "))
	case len(missing) == 0:
		s.Outcome, s.Reason = OutcomeSuccess, fmt.Sprintf("all %d aspects covered", len(covered))
	default:
		s.Outcome = OutcomeSuccess
		s.Reason = fmt.Sprintf("%d of %d aspects covered; not found: %s", len(covered), len(covered)+len(missing), strings.Join(missing, ", "))
	}
}
