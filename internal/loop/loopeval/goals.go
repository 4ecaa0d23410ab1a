// Package loopeval measures the research loop on labelled goals: for each
// goal, the pages that cover each of its aspects, read by hand; the loop's
// results against one query's and the goal text's (sagasu eval goals). It is
// an evaluation harness, kept out of the loop the runtime uses.
package loopeval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"unicode"

	"github.com/sagasu-dev/sagasu/internal/doc"
	"github.com/sagasu-dev/sagasu/internal/index"
	"github.com/sagasu-dev/sagasu/internal/loop"
	"github.com/sagasu-dev/sagasu/internal/search"
	"github.com/sagasu-dev/sagasu/internal/source"
)

// GoalSet is a labelled set of goals over one corpus: for each goal, its
// aspects and the pages (or sections) that cover each.
type GoalSet struct {
	Name        string     `json:"name"`
	Corpus      string     `json:"corpus,omitempty"`      // where the documents are, for people
	Description string     `json:"description,omitempty"` // how the labels were made
	Goals       []GoalCase `json:"goals"`
}

// GoalCase is one labelled goal.
type GoalCase struct {
	ID   string `json:"id"`
	Goal string `json:"goal"`
	// Query is a short query a person would type for the goal: the
	// single-query baseline, and the loop's first query.
	Query   string           `json:"query"`
	Aspects []LabelledAspect `json:"aspects"`
}

// LabelledAspect is an aspect with the pages that cover it. A page is a
// path relative to the corpus ("en/guide/routing.md"), optionally with a
// section: "en/guide/deploy.md#GitHub Pages" or "…#Search > Local Search >
// i18n" is covered only by chunks under that heading (compared without case,
// markup and punctuation).
type LabelledAspect struct {
	Name  string   `json:"name"`
	Pages []string `json:"pages"`
}

// LoadGoalSet reads and checks a goal set.
func LoadGoalSet(file string) (GoalSet, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return GoalSet{}, fmt.Errorf("read goal set: %w", err)
	}
	var set GoalSet
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&set); err != nil {
		return GoalSet{}, fmt.Errorf("goal set %s is not valid JSON of the expected shape: %w", file, err)
	}
	if err := set.Validate(); err != nil {
		return GoalSet{}, fmt.Errorf("goal set %s: %w", file, err)
	}
	return set, nil
}

// Validate checks that every goal has an ID, a goal, a query and 1 to 8
// aspects each with at least one page.
func (s GoalSet) Validate() error {
	if len(s.Goals) == 0 {
		return errors.New("no goals")
	}
	ids := map[string]bool{}
	for i, g := range s.Goals {
		where := fmt.Sprintf("goal %d (%q)", i+1, g.ID)
		switch {
		case g.ID == "" || ids[g.ID]:
			return fmt.Errorf("%s: every goal needs a unique id", where)
		case strings.TrimSpace(g.Goal) == "":
			return fmt.Errorf("%s: empty goal", where)
		case strings.TrimSpace(g.Query) == "":
			return fmt.Errorf("%s: empty query", where)
		case len(g.Aspects) == 0 || len(g.Aspects) > 8:
			return fmt.Errorf("%s: has %d aspects; give 1 to 8", where, len(g.Aspects))
		}
		ids[g.ID] = true
		for _, a := range g.Aspects {
			if strings.TrimSpace(a.Name) == "" || len(a.Pages) == 0 {
				return fmt.Errorf("%s: aspect %q needs a name and at least one page", where, a.Name)
			}
		}
	}
	return nil
}

// IndexCorpus indexes every file under dir with URIs relative to dir
// ("en/guide/routing.md"), so that they match a goal set's labels.
func IndexCorpus(ctx context.Context, ix *index.Indexer, dir string, opt source.Options) (index.Report, error) {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return index.Report{}, fmt.Errorf("documents folder %q is not a folder: give the corpus the goal set labels, e.g. ../shared/data/vitepress-docs", dir)
	}
	// With the corpus as the root, URIs are relative to it, as the goal
	// set labels them.
	opt.Root = dir
	var docs []doc.Document
	err := source.Walk(ctx, []string{dir}, opt, func(d doc.Document) error {
		docs = append(docs, d)
		return nil
	}, nil)
	if err != nil {
		return index.Report{}, err
	}
	return ix.Documents(ctx, docs)
}

// GoalOptions tune EvaluateGoals.
type GoalOptions struct {
	K             int         // results judged per method (default 10)
	MaxIterations int         // loop budget (default 5)
	Mode          search.Mode // retrieval mode ("" for the index's default)
	// Research, when set, is another method to measure: it returns the
	// results an agent cites for a goal (the Plan-and-Act research brain).
	Research func(ctx context.Context, goal string) ([]doc.Hit, error)
	// Progress, when set, is called after each goal.
	Progress func(done, total int)
}

// Coverage is how many of a goal's labelled aspects a result list covers.
type Coverage struct {
	Covered int      `json:"covered"`
	Aspects int      `json:"aspects"`
	Value   float64  `json:"value"` // Covered / Aspects
	Missing []string `json:"missing,omitempty"`
}

// GoalScore is one goal's outcome under each method.
type GoalScore struct {
	ID    string `json:"id"`
	Goal  string `json:"goal"`
	Query string `json:"query"`
	// Single is the stored query run once; GoalText is the goal itself run
	// once as a query; Loop is `sagasu loop --goal G --query Q`;
	// LoopFromGoal is `sagasu loop --goal G` (its first query from the goal);
	// LoopAspects is the loop told the labelled aspect names (--aspect).
	Single       Coverage `json:"single"`
	GoalText     Coverage `json:"goalText"`
	Loop         Coverage `json:"loop"`
	LoopFromGoal Coverage `json:"loopFromGoal"`
	LoopAspects  Coverage `json:"loopAspects"`
	// Research is what GoalOptions.Research cited (absent without it).
	Research *Coverage `json:"research,omitempty"`
	// Iterations are the searches each loop ran.
	Iterations         int `json:"iterations"`
	IterationsFromGoal int `json:"iterationsFromGoal"`
	IterationsAspects  int `json:"iterationsAspects"`
	// LoopAspectNames are the aspects the loop derived from the goal.
	LoopAspectNames []string `json:"loopAspectNames"`
	// FinalConfidence is the loop's own confidence at its end.
	FinalConfidence float64 `json:"finalConfidence"`
}

// GoalReport is the outcome over a goal set.
type GoalReport struct {
	Set   string      `json:"set"`
	K     int         `json:"k"`
	Goals []GoalScore `json:"goals"`
	// Average holds the mean coverage of each method and the mean iterations.
	Average struct {
		Single             float64 `json:"single"`
		GoalText           float64 `json:"goalText"`
		Loop               float64 `json:"loop"`
		LoopFromGoal       float64 `json:"loopFromGoal"`
		LoopAspects        float64 `json:"loopAspects"`
		Research           float64 `json:"research,omitempty"`
		Iterations         float64 `json:"iterations"`
		IterationsFromGoal float64 `json:"iterationsFromGoal"`
		IterationsAspects  float64 `json:"iterationsAspects"`
	} `json:"average"`
	// LoopWorseThanSingle lists goals where the loop covered fewer labelled
	// aspects than the single query (none, when the loop does its job).
	LoopWorseThanSingle []string `json:"loopWorseThanSingle"`
	// Calibration compares the loop's own confidence with the labelled
	// coverage of the same results, over every iteration of every loop.
	Calibration []CalibrationBin `json:"calibration"`
}

// CalibrationBin is the labelled coverage of the result lists whose
// confidence fell in [Low, High).
type CalibrationBin struct {
	Low          float64 `json:"low"`
	High         float64 `json:"high"`
	Lists        int     `json:"lists"`
	MeanCoverage float64 `json:"meanCoverage"`
	AllCovered   float64 `json:"allCovered"` // fraction of lists covering every aspect
}

// EvaluateGoals measures, for every goal, the labelled aspect coverage of
// the top-k results of one query, of the goal text as a query, and of the
// loop e, which searches with s. The loop should have no cache: a cache
// would let later goals learn from earlier ones.
func EvaluateGoals(ctx context.Context, s loop.Searcher, e *loop.Engine, set GoalSet, opt GoalOptions) (GoalReport, error) {
	if err := set.Validate(); err != nil {
		return GoalReport{}, err
	}
	if s == nil || e == nil {
		return GoalReport{}, errors.New("evaluate goals: give an index to search and a loop over it")
	}
	k := opt.K
	if k <= 0 {
		k = search.DefaultK
	}
	rep := GoalReport{Set: set.Name, K: k, Goals: []GoalScore{}, LoopWorseThanSingle: []string{}}
	bins := []CalibrationBin{{Low: 0, High: 0.5}, {Low: 0.5, High: 0.7}, {Low: 0.7, High: 0.85}, {Low: 0.85, High: 1.01}}
	sums := make([]float64, len(bins))
	research := 0.0
	for i, g := range set.Goals {
		once := func(q string) (Coverage, error) {
			resp, err := s.Search(ctx, search.Request{Query: q, K: k, Mode: opt.Mode})
			if err != nil {
				return Coverage{}, fmt.Errorf("goal %s: %w", g.ID, err)
			}
			return labelledCoverage(g, resp.Hits), nil
		}
		run := func(q string, aspects []string) (loop.RunResult, Coverage, error) {
			res, err := e.Run(ctx, loop.RunOptions{Goal: g.Goal, Query: q, Aspects: aspects, K: k, Mode: opt.Mode, MaxIterations: opt.MaxIterations})
			if err != nil {
				return res, Coverage{}, fmt.Errorf("goal %s: loop: %w", g.ID, err)
			}
			return res, labelledCoverage(g, res.Hits), nil
		}
		sc := GoalScore{ID: g.ID, Goal: g.Goal, Query: g.Query}
		var err error
		if sc.Single, err = once(g.Query); err != nil {
			return rep, err
		}
		if sc.GoalText, err = once(g.Goal); err != nil {
			return rep, err
		}
		res, cov, err := run(g.Query, nil)
		if err != nil {
			return rep, err
		}
		sc.Loop, sc.Iterations, sc.LoopAspectNames = cov, len(res.Iterations), res.Aspects
		if n := len(res.Iterations); n > 0 {
			sc.FinalConfidence = res.Iterations[n-1].Evaluation.Confidence
		}
		// Calibration: the merged results after each iteration against the
		// confidence the loop gave them.
		for _, it := range res.Iterations {
			c := labelledCoverage(g, it.Hits)
			for b := range bins {
				if conf := it.Evaluation.Confidence; conf >= bins[b].Low && conf < bins[b].High {
					bins[b].Lists++
					sums[b] += c.Value
					if c.Covered == c.Aspects {
						bins[b].AllCovered++
					}
				}
			}
		}
		resG, covG, err := run("", nil)
		if err != nil {
			return rep, err
		}
		sc.LoopFromGoal, sc.IterationsFromGoal = covG, len(resG.Iterations)
		var names []string
		for _, a := range g.Aspects {
			names = append(names, a.Name)
		}
		resA, covA, err := run(g.Query, names)
		if err != nil {
			return rep, err
		}
		sc.LoopAspects, sc.IterationsAspects = covA, len(resA.Iterations)
		if opt.Research != nil {
			hits, err := opt.Research(ctx, g.Goal)
			if err != nil {
				return rep, fmt.Errorf("goal %s: research: %w", g.ID, err)
			}
			c := labelledCoverage(g, hits)
			sc.Research = &c
			research += c.Value
		}
		if sc.Loop.Covered < sc.Single.Covered {
			rep.LoopWorseThanSingle = append(rep.LoopWorseThanSingle, g.ID)
		}
		rep.Goals = append(rep.Goals, sc)
		if opt.Progress != nil {
			opt.Progress(i+1, len(set.Goals))
		}
	}
	n := float64(len(rep.Goals))
	a := &rep.Average
	for _, s := range rep.Goals {
		a.Single += s.Single.Value / n
		a.GoalText += s.GoalText.Value / n
		a.Loop += s.Loop.Value / n
		a.LoopFromGoal += s.LoopFromGoal.Value / n
		a.LoopAspects += s.LoopAspects.Value / n
		a.Iterations += float64(s.Iterations) / n
		a.IterationsFromGoal += float64(s.IterationsFromGoal) / n
		a.IterationsAspects += float64(s.IterationsAspects) / n
	}
	a.Research = research / n
	for _, p := range []*float64{&a.Single, &a.GoalText, &a.Loop, &a.LoopFromGoal, &a.LoopAspects, &a.Research, &a.Iterations, &a.IterationsFromGoal, &a.IterationsAspects} {
		*p = round3(*p)
	}
	for i := range bins {
		if bins[i].Lists > 0 {
			bins[i].MeanCoverage = round3(sums[i] / float64(bins[i].Lists))
			bins[i].AllCovered = round3(bins[i].AllCovered / float64(bins[i].Lists))
		}
	}
	rep.Calibration = bins
	return rep, nil
}

// LabelledCoverage is how many of g's labelled aspects some of results covers.
func LabelledCoverage(g GoalCase, results []doc.Hit) Coverage { return labelledCoverage(g, results) }

// labelledCoverage counts the aspects of g that some result covers.
func labelledCoverage(g GoalCase, results []doc.Hit) Coverage {
	c := Coverage{Aspects: len(g.Aspects)}
	for _, a := range g.Aspects {
		hit := false
		for _, r := range results {
			if coversLabel(a, r) {
				hit = true
				break
			}
		}
		if hit {
			c.Covered++
		} else {
			c.Missing = append(c.Missing, a.Name)
		}
	}
	c.Value = round3(float64(c.Covered) / float64(c.Aspects))
	return c
}

// coversLabel reports whether result r lies in one of a's pages or sections.
func coversLabel(a LabelledAspect, r doc.Hit) bool {
	for _, p := range a.Pages {
		page, section, _ := strings.Cut(p, "#")
		if r.Source.URI != page {
			continue
		}
		if section == "" {
			return true
		}
		// The chunk's own heading, or a section packed into its text.
		want := splitLabelPath(section)
		for _, path := range loop.HeadingPaths(r) {
			have := labelSegments(path)
			for i := 0; i+len(want) <= len(have); i++ {
				if slices.Equal(have[i:i+len(want)], want) {
					return true
				}
			}
		}
	}
	return false
}

// splitLabelPath splits a heading path into segments reduced to their
// letters and digits, lower-cased: "`<ClientOnly />` <Badge …/>" → "clientonly".
func splitLabelPath(s string) []string { return labelSegments(strings.Split(s, " > ")) }

// labelSegments reduces heading segments to their letters and digits,
// lower-cased.
func labelSegments(path []string) []string {
	var out []string
	for _, seg := range path {
		seg = loop.CleanHeading(seg)
		var b strings.Builder
		for _, r := range strings.ToLower(seg) {
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				b.WriteRune(r)
			}
		}
		out = append(out, b.String())
	}
	return out
}

func round3(f float64) float64 { return math.Round(f*1000) / 1000 }
