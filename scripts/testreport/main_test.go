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

// TestReportSaysWhetherQdrantRan: "Qdrant server: not tested" unless a test
// that passed logged that it ran against a server.
func TestReportSaysWhetherQdrantRan(t *testing.T) {
	const model = `{"Action":"output","Package":"m/store/qdrant","Test":"TestConformance","Output":"    server_test.go:50: Qdrant server: not tested (this test ran on the in-process model)\n"}
{"Action":"pass","Package":"m/store/qdrant","Test":"TestConformance"}
`
	const server = `{"Action":"output","Package":"m/store/qdrant","Test":"TestConformance","Output":"    server_test.go:52: Qdrant server: tested at http://127.0.0.1:6334\n"}
{"Action":"pass","Package":"m/store/qdrant","Test":"TestConformance"}
`
	const failedOnServer = `{"Action":"output","Package":"m/store/qdrant","Test":"TestConformance","Output":"    server_test.go:52: Qdrant server: tested at http://127.0.0.1:6334\n"}
{"Action":"fail","Package":"m/store/qdrant","Test":"TestConformance"}
`
	for name, tc := range map[string]struct{ in, want string }{
		"model":            {model, "Qdrant server: not tested. No Qdrant server ran"},
		"no qdrant tests":  {`{"Action":"pass","Package":"m/a","Test":"TestOK"}`, "Qdrant server: not tested. No Qdrant server ran"},
		"server":           {server, "Qdrant server: tested at http://127.0.0.1:6334"},
		"failed on server": {failedOnServer, "Qdrant server: not tested: the tests against it failed (above): http://127.0.0.1:6334"},
	} {
		var b strings.Builder
		if _, err := report(strings.NewReader(tc.in), &b); err != nil {
			t.Fatal(err)
		}
		_, section, _ := strings.Cut(b.String(), "== not tested against the real part\n")
		line, _, _ := strings.Cut(section, "\n")
		if !strings.HasPrefix(line, tc.want) {
			t.Errorf("%s: the report says %q, want %q:\n%s", name, line, tc.want, b.String())
		}
	}
}
