package graph

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
)

// Table is a routing table kept outside the code, so a deployment can
// change how the graph branches without a rebuild:
//
//	{
//	  "edges": [{"from": "__start__", "to": "planner"}, {"from": "planner", "to": "executor"}],
//	  "conditional": [{"from": "evaluate", "branch": "should_replan",
//	                   "routes": {"replan": "planner", "next": "executor", "done": "__end__"}}]
//	}
//
// Node and branch names must already be in the graph; "__start__" and
// "__end__" are START and END.
type Table struct {
	Edges       []TableEdge   `json:"edges,omitempty"`
	Conditional []TableBranch `json:"conditional,omitempty"`
}

// TableEdge is a plain edge.
type TableEdge struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// TableBranch is a conditional edge: the registered branch named Branch
// picks a key, Routes maps it to a node.
type TableBranch struct {
	From   string            `json:"from"`
	Branch string            `json:"branch"`
	Routes map[string]string `json:"routes,omitempty"`
}

// ParseTable decodes a routing table, refusing unknown fields.
func ParseTable(data []byte) (Table, error) {
	var t Table
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t); err != nil {
		return Table{}, fmt.Errorf("parse routing table: %w", err)
	}
	return t, nil
}

// LoadTableFile reads the routing table at path and applies it.
func (g *Graph[S]) LoadTableFile(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read routing table: %w", err)
	}
	t, err := ParseTable(data)
	if err != nil {
		return fmt.Errorf("routing table %s: %w", path, err)
	}
	if err := g.ApplyTable(t); err != nil {
		return fmt.Errorf("routing table %s: %w", path, err)
	}
	return nil
}

// ApplyTable replaces the exit of every node the table names with the
// table's edge or conditional edge; exits of other nodes stay as built in
// code. It changes nothing and names the culprit when the table mentions a
// node or branch the graph does not have, or gives one node two exits.
func (g *Graph[S]) ApplyTable(t Table) error {
	from := map[string]bool{}
	node := func(role, name string) error {
		if name == START && role == "from" || name == END && role == "to" || g.nodes[name] != nil {
			return nil
		}
		return fmt.Errorf("unknown node %q (%s); the graph has %v", name, role, g.order)
	}
	claim := func(name string) error {
		if from[name] {
			return fmt.Errorf("node %q has more than one exit in the table", name)
		}
		from[name] = true
		return nil
	}
	for i, e := range t.Edges {
		for _, err := range []error{node("from", e.From), node("to", e.To), claim(e.From)} {
			if err != nil {
				return fmt.Errorf("edges[%d]: %w", i, err)
			}
		}
	}
	for i, c := range t.Conditional {
		for _, err := range []error{node("from", c.From), claim(c.From)} {
			if err != nil {
				return fmt.Errorf("conditional[%d]: %w", i, err)
			}
		}
		if g.branches[c.Branch] == nil {
			return fmt.Errorf("conditional[%d]: unknown branch %q; register it with RegisterBranch", i, c.Branch)
		}
		for key, to := range c.Routes {
			if err := node("to", to); err != nil {
				return fmt.Errorf("conditional[%d] route %q: %w", i, key, err)
			}
		}
	}
	for name := range from {
		delete(g.edges, name)
		delete(g.conds, name)
	}
	for _, e := range t.Edges {
		g.edges[e.From] = e.To
	}
	for _, c := range t.Conditional {
		g.conds[c.From] = conditional{branch: c.Branch, routes: cloneMap(c.Routes)}
	}
	return nil
}
