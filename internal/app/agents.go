package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/sagasu-dev/sagasu/internal/agent/react"
	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/graph"
	"github.com/sagasu-dev/sagasu/internal/loop"
)

// AskOptions configure the question-answering agent.
type AskOptions struct {
	// Offline answers without the configured model (extractive answers).
	Offline  bool
	MaxTurns int // ReAct turns (default react.DefaultMaxTurns)
	K        int // results per search (default 8)
	Style    react.Style
	OnEvent  func(graph.Event)
	OnDelta  func(string)
	// Log keeps the run's events; nil keeps them in memory.
	Log graph.Log
}

// Asker returns the ReAct + Reflection agent over the runtime's index: with
// the configured model, or offline when there is none (or opt.Offline).
func (r *Runtime) Asker(opt AskOptions) *react.Agent {
	a := react.New(r.Engine, react.Options{K: opt.K, Style: opt.Style, OnEvent: opt.OnEvent})
	if r.LLM == nil || opt.Offline {
		return a
	}
	ev := loop.New(r.Engine, loop.Options{})
	return a.WithModel(react.LLMOptions{
		Model: r.LLM, Library: r.Store, MaxTurns: opt.MaxTurns, Log: opt.Log, OnDelta: opt.OnDelta,
		Evaluate: func(ctx context.Context, goal string, hits []doc.Hit) (string, error) {
			e, err := ev.Evaluate(ctx, loop.EvaluateInput{Goal: goal, Results: hits})
			if err != nil {
				return "", err
			}
			return describeEvaluation(e), nil
		},
	})
}

// describeEvaluation is an evaluation as a model reads it.
func describeEvaluation(e loop.Evaluation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "confidence %.2f, coverage %.2f of the goal's aspects\n", e.Confidence, e.Coverage)
	if len(e.FoundAspects) > 0 {
		fmt.Fprintf(&b, "found: %s\n", strings.Join(e.FoundAspects, "; "))
	}
	if len(e.MissingAspects) > 0 {
		fmt.Fprintf(&b, "missing: %s\n", strings.Join(e.MissingAspects, "; "))
	}
	fmt.Fprintf(&b, "next: %s (%s)", e.Recommendation.Action, e.Recommendation.Reason)
	return b.String()
}
