package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestSearchCommand: the operation sagasu_search and the page's Search tab
// are `sagasu search` on the command line too. Its words are for people:
// one next step, with the command that takes it, and no tool names.
func TestSearchCommand(t *testing.T) {
	dir := docsFixture(t)
	mustRun(t, dir, "index", "docs")
	out := mustRun(t, dir, "search", "dynamic routes")
	if strings.Count(out, "next:") != 1 || strings.Contains(out, "sagasu_") || !strings.Contains(out, "Query: dynamic routes") {
		t.Errorf("sagasu search prints:\n%s", out)
	}
	var res struct {
		Detail  string `json:"detail"`
		Next    struct{ Action, Tool string }
		Results []struct {
			Rank      int     `json:"rank"`
			Relevance float64 `json:"relevance"`
			Text      string  `json:"text"`
		} `json:"results"`
	}
	raw := mustRun(t, dir, "search", "--json", "--goal", "make dynamic routes", "-k", "2", "dynamic routes")
	if err := json.Unmarshal([]byte(raw), &res); err != nil || res.Detail != "summary" || res.Next.Action == "" ||
		len(res.Results) == 0 || len(res.Results) > 2 || res.Results[0].Rank != 1 || res.Results[0].Relevance != 1 || res.Results[0].Text != "" {
		t.Errorf("sagasu search --json: %v\n%s", err, raw)
	}
	if code, _, errs := sagasu(t, dir, "", "search", "-k", "11", "x"); code != exitUsage || !strings.Contains(errs, "k") {
		t.Errorf("-k 11: exit %d, %q; want a usage error naming k", code, errs)
	}
}
