package loopeval

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/sagasu-dev/sagasu/internal/loop"
	"github.com/sagasu-dev/sagasu/internal/testcorpus"
)

// TestGoalBaselinesOnKumo runs the goal evaluation (one query, the goal
// text as a query, the loop) on the Kumo corpus in the repository, so the
// harness runs on every clone; the measurement on the labelled VitePress
// goal sets is TestLoopBeatsBaselines. Each goal's query finds one of its
// aspects at most; the loop, judging its results against the goal, finds
// the others.
func TestGoalBaselinesOnKumo(t *testing.T) {
	set, err := LoadGoalSet(filepath.Join(testcorpus.KumoDocs(), "..", "kumo-goals.json"))
	if err != nil {
		t.Fatal(err)
	}
	s := testcorpus.Kumo(t)
	e := loop.New(s, loop.Options{})
	// Three results judged, not ten: the corpus has a few dozen chunks.
	rep, err := EvaluateGoals(context.Background(), s, e, set, GoalOptions{K: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Goals) != len(set.Goals) || rep.K != 3 {
		t.Fatalf("%d goals at k %d, want %d at 3", len(rep.Goals), rep.K, len(set.Goals))
	}
	var single, looped float64
	for _, g := range rep.Goals {
		t.Logf("%s: single %d/%d, goal text %d/%d, loop %d/%d in %d iterations (aspects %q), missing %v",
			g.ID, g.Single.Covered, g.Single.Aspects, g.GoalText.Covered, g.GoalText.Aspects, g.Loop.Covered, g.Loop.Aspects,
			g.Iterations, g.LoopAspectNames, g.Loop.Missing)
		for _, c := range []Coverage{g.Single, g.GoalText, g.Loop, g.LoopFromGoal, g.LoopAspects} {
			if c.Aspects != len(aspectsOf(set, g.ID)) || c.Covered > c.Aspects || !near(c.Value, float64(c.Covered)/float64(c.Aspects)) {
				t.Errorf("%s: coverage %+v does not count the goal's labelled aspects", g.ID, c)
			}
		}
		if g.Single.Covered > 1 {
			t.Errorf("%s: the single query covers %d aspects; the set says at most one", g.ID, g.Single.Covered)
		}
		if g.Loop.Covered <= g.Single.Covered {
			t.Errorf("%s: the loop covers %d aspects, one query %d", g.ID, g.Loop.Covered, g.Single.Covered)
		}
		if g.Iterations < 1 || g.Iterations > loop.DefaultMaxIterations {
			t.Errorf("%s: %d iterations", g.ID, g.Iterations)
		}
		single += g.Single.Value
		looped += g.Loop.Value
	}
	n := float64(len(rep.Goals))
	if !near(rep.Average.Single, single/n) {
		t.Errorf("average single %.4f, mean of the goals %.4f", rep.Average.Single, single/n)
	}
	if !near(rep.Average.Loop, looped/n) {
		t.Errorf("average loop %.4f, mean of the goals %.4f", rep.Average.Loop, looped/n)
	}
}

func aspectsOf(set GoalSet, id string) []LabelledAspect {
	for _, g := range set.Goals {
		if g.ID == id {
			return g.Aspects
		}
	}
	return nil
}

// near compares a reported figure, rounded to three decimals, with its value.
func near(got, want float64) bool { return math.Abs(got-want) <= 0.0006 }
