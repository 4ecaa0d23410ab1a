package graph

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
)

// START and END are the graph's entry and exit. An edge from START names
// the first node; an edge (or route) to END finishes the run.
const (
	START = "__start__"
	END   = "__end__"
)

// Node is one step of work: it reads the state and returns the new one.
// It reports what it did (thoughts, actions, tokens) through rc.
type Node[S any] func(ctx context.Context, rc *RunContext, s S) (S, error)

// Cloner is a state that copies itself deeply. When S implements it, each
// node gets its own copy, so that a node may change the state's slices and
// maps in place: the state from before the node, which the runner keeps
// when the node fails (and checkpoints compare against), stays untouched.
type Cloner[S any] interface {
	Clone() S
}

// Branch chooses a route key from the state after a node has run.
type Branch[S any] func(s S) string

// conditional is a node's branching exit.
type conditional struct {
	branch string
	routes map[string]string // route key -> node; empty: the key is the node
}

// Graph is a state graph under construction. Build it with AddNode,
// AddEdge, AddConditionalEdges (or ApplyTable), then Compile it. A Graph is
// not safe for concurrent use; the Compiled graph is.
type Graph[S any] struct {
	nodes    map[string]Node[S]
	order    []string // nodes in the order they were added
	edges    map[string]string
	conds    map[string]conditional
	branches map[string]Branch[S]
	errs     []error

	fingerprint func(S) string
	restore     func(context.Context, S) (S, error)
}

// New returns an empty graph over state type S. S must round-trip through
// encoding/json: checkpoints store it as JSON.
func New[S any]() *Graph[S] {
	return &Graph[S]{
		nodes:    map[string]Node[S]{},
		edges:    map[string]string{},
		conds:    map[string]conditional{},
		branches: map[string]Branch[S]{},
	}
}

// AddNode adds a node. Mistakes (an empty, reserved or duplicate name) are
// reported by Compile, so a graph can be built in one block.
func (g *Graph[S]) AddNode(name string, fn Node[S]) *Graph[S] {
	switch {
	case name == "" || name == START || name == END:
		g.errs = append(g.errs, fmt.Errorf("add node %q: the name is empty or reserved", name))
	case fn == nil:
		g.errs = append(g.errs, fmt.Errorf("add node %q: the function is nil", name))
	case g.nodes[name] != nil:
		g.errs = append(g.errs, fmt.Errorf("add node %q: a node with that name already exists", name))
	default:
		g.nodes[name] = fn
		g.order = append(g.order, name)
	}
	return g
}

// AddEdge makes to run after from. A node has one exit: an edge or a
// conditional edge.
func (g *Graph[S]) AddEdge(from, to string) *Graph[S] {
	if err := g.exitFree(from); err != nil {
		g.errs = append(g.errs, fmt.Errorf("add edge %s -> %s: %w", from, to, err))
		return g
	}
	g.edges[from] = to
	return g
}

// RegisterBranch names a branch function so that AddConditionalEdges and
// JSON routing tables can refer to it.
func (g *Graph[S]) RegisterBranch(name string, fn Branch[S]) *Graph[S] {
	switch {
	case name == "" || fn == nil:
		g.errs = append(g.errs, fmt.Errorf("register branch %q: the name is empty or the function nil", name))
	case g.branches[name] != nil:
		g.errs = append(g.errs, fmt.Errorf("register branch %q: a branch with that name already exists", name))
	default:
		g.branches[name] = fn
	}
	return g
}

// AddConditionalEdges routes from's exit through the registered branch:
// the key it returns is looked up in routes. With nil routes the key itself
// is the next node's name. A key with no route fails the run, naming it.
func (g *Graph[S]) AddConditionalEdges(from, branch string, routes map[string]string) *Graph[S] {
	if err := g.exitFree(from); err != nil {
		g.errs = append(g.errs, fmt.Errorf("add conditional edges from %s: %w", from, err))
		return g
	}
	if g.branches[branch] == nil {
		g.errs = append(g.errs, fmt.Errorf("add conditional edges from %s: branch %q is not registered; call RegisterBranch first", from, branch))
		return g
	}
	g.conds[from] = conditional{branch: branch, routes: cloneMap(routes)}
	return g
}

func (g *Graph[S]) exitFree(from string) error {
	if _, ok := g.edges[from]; ok {
		return fmt.Errorf("%s already has an edge; a node has one exit", from)
	}
	if _, ok := g.conds[from]; ok {
		return fmt.Errorf("%s already has conditional edges; a node has one exit", from)
	}
	return nil
}

func cloneMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// targets lists where from can go next; all is true when a conditional edge
// has no routes, so any node may follow.
func (g *Graph[S]) targets(from string) (out []string, all bool) {
	if to, ok := g.edges[from]; ok {
		return []string{to}, false
	}
	c, ok := g.conds[from]
	if !ok {
		return nil, false
	}
	if len(c.routes) == 0 {
		return nil, true
	}
	for _, to := range c.routes {
		out = append(out, to)
	}
	sort.Strings(out)
	return out, false
}

// validate checks the structure: START has an exit, every target exists,
// every node has an exit and is reachable from START.
func (g *Graph[S]) validate() error {
	errs := slices.Clone(g.errs)
	known := func(n string) bool { return n == END || g.nodes[n] != nil }
	if ts, all := g.targets(START); len(ts) == 0 && !all {
		errs = append(errs, errors.New("no entry point: add an edge from graph.START to the first node"))
	}
	froms := append([]string{START}, g.order...)
	for from := range g.edges {
		if from != START && g.nodes[from] == nil {
			errs = append(errs, fmt.Errorf("edge from unknown node %q", from))
		}
	}
	for from := range g.conds {
		if from != START && g.nodes[from] == nil {
			errs = append(errs, fmt.Errorf("conditional edges from unknown node %q", from))
		}
	}
	for _, from := range froms {
		ts, all := g.targets(from)
		if from != START && len(ts) == 0 && !all {
			errs = append(errs, fmt.Errorf("node %q has no exit; add an edge to graph.END if the run should finish there", from))
		}
		for _, to := range ts {
			if !known(to) {
				errs = append(errs, fmt.Errorf("edge %s -> %s: no node %q", from, to, to))
			}
		}
	}
	seen := map[string]bool{START: true}
	queue := []string{START}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		ts, all := g.targets(n)
		if all {
			ts = g.order
		}
		for _, to := range ts {
			if !seen[to] && g.nodes[to] != nil {
				seen[to] = true
				queue = append(queue, to)
			}
		}
	}
	for _, n := range g.order {
		if !seen[n] {
			errs = append(errs, fmt.Errorf("node %q is unreachable from graph.START", n))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("compile graph: %w", errors.Join(errs...))
	}
	return nil
}
