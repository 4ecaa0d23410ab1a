package main

import (
	"strings"
	"testing"
)

func TestReport(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"run","Package":"m/a","Test":"TestOK"}`,
		`{"Action":"pass","Package":"m/a","Test":"TestOK"}`,
		`{"Action":"run","Package":"m/a","Test":"TestSkip"}`,
		`{"Action":"output","Package":"m/a","Test":"TestSkip","Output":"    a_test.go:9: SAGASU_SCIFACT is not set\n"}`,
		`{"Action":"output","Package":"m/a","Test":"TestSkip","Output":"--- SKIP: TestSkip (0.00s)\n"}`,
		`{"Action":"skip","Package":"m/a","Test":"TestSkip"}`,
		`{"Action":"pass","Package":"m/a","Elapsed":0.5}`,
	}, "\n")
	var b strings.Builder
	code, err := report(strings.NewReader(in), &b)
	if err != nil || code != 0 {
		t.Fatalf("code %d, err %v\n%s", code, err, b.String())
	}
	for _, want := range []string{"SKIP m/a TestSkip: SAGASU_SCIFACT is not set", "1 passed, 0 failed, 1 skipped", "PASS m/a (0.5s)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}

func TestReportFailsOnBuildErrorsAndFailures(t *testing.T) {
	for name, in := range map[string]string{
		"failing test": `{"Action":"output","Package":"m/a","Test":"TestBad","Output":"    a_test.go:3: got 1, want 2\n"}
{"Action":"fail","Package":"m/a","Test":"TestBad"}
{"Action":"fail","Package":"m/a"}`,
		"build error": `# m/b
b.go:3:1: syntax error
{"Action":"fail","Package":"m/b"}`,
		"nothing ran": `{"Action":"skip","Package":"m/c"}`,
	} {
		var b strings.Builder
		code, err := report(strings.NewReader(in), &b)
		if err != nil {
			t.Fatal(err)
		}
		if code != 1 {
			t.Errorf("%s: exit %d, want 1\n%s", name, code, b.String())
		}
	}
}
