// Command testreport reads `go test -json` on stdin and prints what ran, what
// failed (with its output) and what was skipped and why, then a closing line
// "N passed, N failed, N skipped". It exits 1 when a test or a package failed,
// so `make test` cannot pass on a run that did not build or did not finish.
//
//	go test -json ./... | go run ./scripts/testreport
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

type key struct{ pkg, test string }

// reasonLine is a t.Log/t.Skip line: "    file_test.go:12: text".
var reasonLine = regexp.MustCompile(`^\s+\S+\.go:\d+: (.*)$`)

func main() {
	code, err := report(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		os.Exit(2)
	}
	os.Exit(code)
}

// report summarises the events read from r onto w and returns the exit code.
func report(r io.Reader, w io.Writer) (int, error) {
	out := map[key][]string{}
	var passed, failed, skipped []key
	pkgFailed := map[string]bool{}
	pkgResult := map[string]string{}
	var pkgs []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if err := json.Unmarshal(line, &e); err != nil {
			// go test prints build errors as plain text before the JSON.
			fmt.Fprintln(w, string(line))
			continue
		}
		k := key{e.Package, e.Test}
		switch e.Action {
		case "output":
			out[k] = append(out[k], e.Output)
		case "pass", "fail", "skip":
			if e.Test == "" {
				if _, seen := pkgResult[e.Package]; !seen {
					pkgs = append(pkgs, e.Package)
				}
				pkgResult[e.Package] = fmt.Sprintf("%-4s %s (%.1fs)", strings.ToUpper(e.Action), e.Package, e.Elapsed)
				if e.Action == "fail" {
					pkgFailed[e.Package] = true
				}
				continue
			}
			switch e.Action {
			case "pass":
				passed = append(passed, k)
			case "fail":
				failed = append(failed, k)
			case "skip":
				skipped = append(skipped, k)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return 2, err
	}

	sort.Strings(pkgs)
	fmt.Fprintln(w, "== packages")
	for _, p := range pkgs {
		fmt.Fprintln(w, pkgResult[p])
	}
	if len(skipped) > 0 {
		fmt.Fprintln(w, "\n== skipped tests, and why")
		for _, k := range skipped {
			fmt.Fprintf(w, "SKIP %s %s: %s\n", short(k.pkg), k.test, reason(out[k]))
		}
	}
	failedTests := map[string]bool{}
	for _, k := range failed {
		failedTests[k.pkg] = true
		fmt.Fprintf(w, "\n== FAIL %s %s\n%s", short(k.pkg), k.test, strings.Join(out[k], ""))
	}
	// A package that failed without a failing test did not build or crashed.
	for _, p := range pkgs {
		if pkgFailed[p] && !failedTests[p] {
			fmt.Fprintf(w, "\n== FAIL %s (no failing test: build error, panic or timeout)\n%s", p, strings.Join(out[key{p, ""}], ""))
		}
	}
	pkgFails := 0
	for _, p := range pkgs {
		if pkgFailed[p] && !failedTests[p] {
			pkgFails++
		}
	}
	fmt.Fprintln(w, "\n== not tested against the real part")
	fmt.Fprintln(w, qdrantLine(out, passed, failed))
	fmt.Fprintf(w, "\n%d passed, %d failed, %d skipped\n", len(passed), len(failed)+pkgFails, len(skipped))
	if len(failed) > 0 || len(pkgFailed) > 0 {
		return 1, nil
	}
	if len(passed) == 0 {
		fmt.Fprintln(w, "no test ran")
		return 1, nil
	}
	return 0, nil
}

// reason is the message a skipped test gave: its last log lines.
func reason(lines []string) string {
	var msgs []string
	for _, l := range lines {
		if m := reasonLine.FindStringSubmatch(strings.TrimRight(l, "\n")); m != nil {
			msgs = append(msgs, m[1])
		}
	}
	if len(msgs) == 0 {
		return "(no reason given)"
	}
	return msgs[len(msgs)-1]
}

// short drops the module path from a package path.
func short(pkg string) string {
	return strings.TrimPrefix(pkg, "github.com/sagasu-dev/sagasu/")
}

// qdrantServer is what the Qdrant driver's tests log when they ran against
// a real server (internal/store/qdrant, reportServer).
const qdrantServer = "Qdrant server: tested at"

// qdrantLine says whether a real Qdrant server was tested: only when a test
// that passed logged so. Without a server (CI builds none: Qdrant takes
// about 100 minutes to build from source there) the driver's tests run on
// an in-process model of Qdrant's API, which proves nothing about the
// server, and the line says so.
func qdrantLine(out map[key][]string, passed, failed []key) string {
	logged := func(ks []key) string {
		for _, k := range ks {
			for _, l := range out[k] {
				if i := strings.Index(l, qdrantServer); i >= 0 {
					return strings.TrimSpace(l[i:])
				}
			}
		}
		return ""
	}
	if l := logged(passed); l != "" {
		return l
	}
	if l := logged(failed); l != "" {
		return "Qdrant server: not tested: the tests against it failed (above): " + strings.TrimSpace(strings.TrimPrefix(l, qdrantServer))
	}
	return "Qdrant server: not tested. No Qdrant server ran (SAGASU_TEST_QDRANT unset), so the Qdrant driver's tests ran on an in-process model of Qdrant's API, which proves nothing about the server; CI builds none (about 100 minutes from source). See docs/qdrant.md to test one."
}
