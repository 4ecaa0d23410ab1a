package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sagasu-dev/sagasu/internal/loop"
	"github.com/sagasu-dev/sagasu/internal/search"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

// planOutput is what `sagasu plan --json` prints.
type planOutput struct {
	Plan   loop.Plan           `json:"plan"`
	Stages []tools.StageReport `json:"stages"`
}

func newPlanCmd(g *globals) *cobra.Command {
	var (
		goal, planFile, mode string
		aspects              []string
		stageIndex           int
		noRun                bool
		timeout              time.Duration
		af                   agentFlags
	)
	cmd := &cobra.Command{
		Use:   "plan --goal TEXT | --plan FILE",
		Short: "Plan a search in stages, one per aspect of a goal, and run them",
		Long: `Plan splits a goal into stages — one per aspect, each with a query made of the
aspect's words that the index has and the keywords its results should
contain — and runs them one by one, judging each stage's results against its
keywords. --no-run prints the plan only; --stage-index runs one stage (0-based).

An agent's own plan (the JSON that --no-run --json prints, perhaps edited)
runs with --plan FILE ("-" for stdin). Each stage's search is cancelled after
--timeout. Stage results are recorded in the agent cache.`,
		Example: `  sagasu plan --goal "VitePressで多言語サイトを構築する方法"
  sagasu plan --goal "deploy to GitHub Pages and generate a sitemap" --no-run --json > plan.json
  sagasu plan --plan plan.json --stage-index 1 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := g.load(cmd)
			if err != nil {
				return err
			}
			if (goal == "") == (planFile == "") {
				return usagef("give either --goal (to make a plan) or --plan FILE (to run one)")
			}
			k, err := searchK(a, 1)
			if err != nil {
				return err
			}
			if timeout <= 0 {
				return usagef("--timeout %s: give a positive duration such as 30s", timeout)
			}
			ctx := cmd.Context()
			rt, err := af.open(cmd, a)
			if err != nil {
				return err
			}
			defer rt.Close()
			eng := rt.Tools.Loop()
			var p loop.Plan
			if planFile != "" {
				if p, err = readPlan(planFile, g.stdin); err != nil {
					return err
				}
				if err := loop.ValidatePlan(p); err != nil {
					return err
				}
			} else {
				if strings.TrimSpace(goal) == "" {
					return usagef("--goal is empty: say what the search should find out")
				}
				if p, err = eng.Plan(ctx, goal, loop.PlanOptions{Aspects: aspects, Mode: search.Mode(mode)}); err != nil {
					return err
				}
			}
			out := planOutput{Plan: p, Stages: []tools.StageReport{}}
			if !noRun {
				indexes := make([]int, 0, len(p.Stages))
				if cmd.Flags().Changed("stage-index") {
					indexes = append(indexes, stageIndex)
				} else {
					for i := range p.Stages {
						indexes = append(indexes, i)
					}
				}
				for _, i := range indexes {
					r, err := rt.Tools.RunStage(ctx, p, i, loop.QueryOptions{K: k, Mode: search.Mode(mode), Timeout: timeout})
					if err != nil {
						return err
					}
					out.Stages = append(out.Stages, r)
				}
			}
			if a.Config.JSON {
				return writeJSON(g.stdout, out)
			}
			printPlan(g.stdout, out)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&goal, "goal", "", "goal to plan for")
	f.StringVar(&planFile, "plan", "", `plan to run (JSON as "plan --no-run --json" prints it; "-" for stdin)`)
	f.StringArrayVar(&aspects, "aspect", nil, "an aspect to give a stage (repeatable; default: from the goal)")
	f.IntVar(&stageIndex, "stage-index", 0, "run only this stage (0-based)")
	f.BoolVar(&noRun, "no-run", false, "print the plan without running it")
	f.DurationVar(&timeout, "timeout", loop.DefaultStageTimeout, "cancel a stage's search after this long")
	f.IntP("k", "k", 10, "results per stage")
	f.StringVar(&mode, "mode", "", "retrieval mode: keyword, semantic, hybrid (default: the index's, hybrid when it has an embedder)")
	af.register(f, true)
	return cmd
}

// readPlan reads a plan from a file or stdin. It accepts a bare plan or the
// {"plan": ...} object that plan --json prints.
func readPlan(file string, stdin io.Reader) (loop.Plan, error) {
	var data []byte
	var err error
	if file == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(file)
	}
	if err != nil {
		return loop.Plan{}, fmt.Errorf("read plan: %w", err)
	}
	var wrapped struct {
		Plan *loop.Plan `json:"plan"`
	}
	if json.Unmarshal(data, &wrapped) == nil && wrapped.Plan != nil {
		return *wrapped.Plan, nil
	}
	var p loop.Plan
	if err := json.Unmarshal(data, &p); err != nil {
		return loop.Plan{}, fmt.Errorf("malformed plan in %s: %w: give the JSON that `sagasu plan --no-run --json` prints", file, err)
	}
	return p, nil
}

// printPlan writes a plan and its stage results for people.
func printPlan(w io.Writer, out planOutput) {
	p := out.Plan
	fmt.Fprintf(w, "plan %s: %s\n", p.ID, p.Goal)
	for i, s := range p.Stages {
		fmt.Fprintf(w, "  stage %d (index %d): %s\n", s.StageNumber, i, s.Description)
		fmt.Fprintf(w, "    query     %q\n", s.Query)
		fmt.Fprintf(w, "    expect    %s (min confidence %.2f)\n", strings.Join(s.ExpectedResults.Keywords, ", "), s.ExpectedResults.MinConfidence)
	}
	for _, r := range out.Stages {
		verdict := "met"
		if !r.Evaluation.IsSuccessful {
			verdict = "not met"
		}
		fmt.Fprintf(w, "\nstage %d: %q  score %.2f, expectations %s\n", r.StageNumber, r.Query, r.Evaluation.Score, verdict)
		if len(r.Evaluation.MissingKeywords) > 0 {
			fmt.Fprintf(w, "  missing keywords: %s\n", strings.Join(r.Evaluation.MissingKeywords, ", "))
		}
		fmt.Fprintf(w, "  next: %s\n", r.Next.Reason)
		printResults(w, r.Results)
	}
}
