package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sagasu-dev/sagasu/internal/app"
	"github.com/sagasu-dev/sagasu/internal/loop"
	"github.com/sagasu-dev/sagasu/internal/loop/loopeval"
	"github.com/sagasu-dev/sagasu/internal/search"
)

func newEvalGoalsCmd(g *globals) *cobra.Command {
	var setPath, docs, mode string
	var maxIt int
	var research, calibrate bool
	cmd := &cobra.Command{
		Use:   "goals --set FILE --docs DIR",
		Short: "Measure what the loop finds against a labelled goal set (aspect coverage)",
		Long: `Goals indexes --docs into a temporary index (URIs relative to --docs, so they
match the set's labels) and, for every goal, counts how many of its labelled
aspects the top -k results cover when searched

  single      the goal's stored query, once
  goal text   the goal itself used as one query
  loop        sagasu loop --goal G --query Q (the loop from the same query)
  from goal   sagasu loop --goal G (the loop's first query from the goal)
  aspects     sagasu loop --goal G --query Q --aspect ... (told the labelled aspects)
  research    with --research: the pages Plan-and-Act's research brain (no
              model) cites for the goal

and prints each goal, the averages, the iterations the loops used, and how
the loop's own confidence compares with labelled coverage. No agent cache is
used, so goals do not learn from one another. With an embedder (--embedder,
or SAGASU_EMBEDDER) the documents are embedded and every method searches in
the index's default mode (hybrid), with the loop's aspects judged by meaning
too; --db reuses an index built before. --calibrate measures that judging
alone: every labelled aspect against every chunk, precision, recall and F1
of "relatedness at least z" for z from 0.5 to 6 (the loop uses
loop.SemanticThreshold, chosen on the project's sets).`,
		Example: `  sagasu eval goals --set testdata/goals/vitepress.json --docs ../shared/data/vitepress-docs
  sagasu eval goals --set testdata/goals/vitepress.json --docs ../shared/data/vitepress-docs --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := g.load(cmd)
			if err != nil {
				return err
			}
			if setPath == "" || docs == "" {
				return usagef("--set and --docs are required: a goal set (JSON) and the folder of documents it labels")
			}
			k, err := searchK(a, maxIt)
			if err != nil {
				return err
			}
			set, err := loopeval.LoadGoalSet(setPath)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			mi, err := openCorpusIndex(ctx, cmd, g, a, "goals", docs)
			if err != nil {
				return err
			}
			defer mi.close()
			se := a.Engine(mi.store, mi.embedder)
			if calibrate {
				cal, err := loopeval.CalibrateMeaning(ctx, se, mi.store, set)
				if err != nil {
					return err
				}
				if a.Config.JSON {
					return writeJSON(g.stdout, cal)
				}
				printCalibration(g.stdout, cal)
				return nil
			}
			gopt := loopeval.GoalOptions{K: k, MaxIterations: maxIt, Mode: search.Mode(mode)}
			if research {
				gopt.Research = app.ResearchHits(se, a.Log)
			}
			rep, err := loopeval.EvaluateGoals(ctx, se, loop.New(se, loop.Options{Logger: a.Log}), set, gopt)
			if err != nil {
				return err
			}
			if a.Config.JSON {
				return writeJSON(g.stdout, rep)
			}
			printGoalReport(g.stdout, rep)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&setPath, "set", "", "goal set (JSON), e.g. testdata/goals/vitepress.json")
	f.StringVar(&docs, "docs", "", "folder of the documents the set labels")
	f.IntP("k", "k", 10, "results judged per method")
	f.IntVar(&maxIt, "max-iterations", loop.DefaultMaxIterations, "loop budget")
	f.StringVar(&mode, "mode", "", "retrieval mode: keyword, semantic, hybrid (default: hybrid with an embedder)")
	f.BoolVar(&research, "research", false, "also measure the pages Plan-and-Act's research brain cites (no model)")
	f.BoolVar(&calibrate, "calibrate", false, "instead, sweep the loop's threshold of similarity by meaning over every labelled aspect and chunk (needs an embedder)")
	addEmbedderFlags(f)
	return cmd
}

// printGoalReport prints the per-goal table, the averages and the calibration.
func printGoalReport(w io.Writer, rep loopeval.GoalReport) {
	fmt.Fprintf(w, "goal set %s: aspect coverage of the top %d results\n\n", rep.Set, rep.K)
	research := len(rep.Goals) > 0 && rep.Goals[0].Research != nil
	head := fmt.Sprintf("%-16s %7s %9s %7s %5s %9s %5s %7s %5s", "goal", "single", "goal text", "loop", "iter", "from goal", "iter", "aspects", "iter")
	if research {
		head += fmt.Sprintf(" %8s", "research")
	}
	fmt.Fprintln(w, head)
	cov := func(c loopeval.Coverage) string { return fmt.Sprintf("%d/%d", c.Covered, c.Aspects) }
	for _, s := range rep.Goals {
		line := fmt.Sprintf("%-16s %7s %9s %7s %5d %9s %5d %7s %5d", s.ID, cov(s.Single), cov(s.GoalText), cov(s.Loop), s.Iterations,
			cov(s.LoopFromGoal), s.IterationsFromGoal, cov(s.LoopAspects), s.IterationsAspects)
		if s.Research != nil {
			line += fmt.Sprintf(" %8s", cov(*s.Research))
		}
		fmt.Fprintln(w, line)
	}
	av := rep.Average
	line := fmt.Sprintf("%-16s %7.3f %9.3f %7.3f %5.1f %9.3f %5.1f %7.3f %5.1f", "average", av.Single, av.GoalText, av.Loop, av.Iterations,
		av.LoopFromGoal, av.IterationsFromGoal, av.LoopAspects, av.IterationsAspects)
	if research {
		line += fmt.Sprintf(" %8.3f", av.Research)
	}
	fmt.Fprintln(w, line)
	if len(rep.LoopWorseThanSingle) > 0 {
		fmt.Fprintf(w, "\nthe loop covered less than the single query on: %s\n", strings.Join(rep.LoopWorseThanSingle, ", "))
	}
	fmt.Fprintf(w, "\nloop aspects derived from the goals:\n")
	for _, s := range rep.Goals {
		fmt.Fprintf(w, "  %-16s %s\n", s.ID, strings.Join(s.LoopAspectNames, " · "))
	}
	fmt.Fprintf(w, "\ncalibration (every iteration of the loop): confidence → labelled coverage\n")
	for _, b := range rep.Calibration {
		if b.Lists == 0 {
			continue
		}
		hi := fmt.Sprintf("%.2f", b.High)
		if b.High > 1 {
			hi = "1.00]"
		} else {
			hi += ")"
		}
		fmt.Fprintf(w, "  [%.2f, %-6s %3d result lists, mean coverage %.2f, all aspects covered in %.0f%%\n", b.Low, hi, b.Lists, b.MeanCoverage, b.AllCovered*100)
	}
}

// printCalibration prints the threshold sweep of similarity by meaning.
func printCalibration(w io.Writer, cal loopeval.Calibration) {
	fmt.Fprintf(w, "goal set %s: %d labelled aspects × %d chunks, %d pairs in a labelled page or section\n\n", cal.Set, cal.Aspects, cal.Chunks, cal.Positives)
	fmt.Fprintf(w, "%6s %9s %7s %6s %6s %6s %6s\n", "z ≥", "precision", "recall", "F1", "TP", "FP", "FN")
	for _, s := range cal.Sweep {
		fmt.Fprintf(w, "%6.2f %9.3f %7.3f %6.3f %6d %6d %6d\n", s.Z, s.Precision, s.Recall, s.F1, s.TP, s.FP, s.FN)
	}
	fmt.Fprintf(w, "\nbest F1 at z ≥ %.2f (precision %.3f, recall %.3f, F1 %.3f); the loop's threshold %.2f: precision %.3f, recall %.3f, F1 %.3f\n",
		cal.Best.Z, cal.Best.Precision, cal.Best.Recall, cal.Best.F1, cal.AtDefault.Z, cal.AtDefault.Precision, cal.AtDefault.Recall, cal.AtDefault.F1)
}
