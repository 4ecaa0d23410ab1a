package app

import (
	"github.com/sagasu-dev/sagasu/internal/agent/react"
	"github.com/sagasu-dev/sagasu/internal/graph"
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

// Asker returns the ReAct + Reflection agent over the runtime's toolset
// (its functions sagasu_query, sagasu_get and sagasu_evaluate): with the
// configured model, or offline when there is none (or opt.Offline).
func (r *Runtime) Asker(opt AskOptions) *react.Agent {
	fns, err := r.Tools.Functions()
	if err != nil {
		panic(err) // the agents' functions are the toolset's own: a programming error
	}
	a := react.New(fns, react.Options{K: opt.K, Style: opt.Style, OnEvent: opt.OnEvent, Log: opt.Log})
	if r.LLM == nil || opt.Offline {
		return a
	}
	g := r.app.Config.Agent.Generation(RoleAsk, r.LLM.Info())
	return a.WithModel(react.LLMOptions{Model: r.LLM, MaxTurns: opt.MaxTurns, OnDelta: opt.OnDelta,
		Temperature: &g.Temperature, ReplyTokens: g.MaxTokens, ThinkingBudget: g.ThinkingBudget})
}
