// Package testenv says what a test needs from the machine it runs on, and
// is the only place a test is skipped. A test that needs data or a service
// that is absent calls Need: it skips with the reason on a contributor's
// machine and fails under CI=true, where everything is installed and a
// missing part is a broken setup. Skips that are not about missing parts
// (-short, a platform that cannot do what the test checks, a helper
// process) have their own functions, so that a reader and TestSkipsGoThroughTestenv
// can tell them apart.
package testenv

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// CI reports whether the tests run under CI=true: every piece of data and
// every service the tests use must then be there.
func CI() bool { return os.Getenv("CI") == "true" }

// Need skips t with why when ok is false, or fails it under CI=true. why
// says what is missing and how to provide it.
func Need(t testing.TB, ok bool, why string) {
	t.Helper()
	if ok {
		return
	}
	if CI() {
		t.Fatalf("%s (CI=true: the data and services the tests use must be present)", why)
		return
	}
	t.Skip(why)
}

// QdrantServer skips t when ok is false: the test needs a real Qdrant
// server, the one service CI does not install (building Qdrant from source
// takes about 100 minutes there). It skips under CI=true too, and the test
// report then says "Qdrant server: not tested". Only the Qdrant driver's
// tests may call it (TestSkipsGoThroughTestenv checks).
func QdrantServer(t testing.TB, ok bool, why string) {
	t.Helper()
	if !ok {
		t.Skip(why)
	}
}

// Short skips t under -short; why says what makes it long.
func Short(t testing.TB, why string) {
	t.Helper()
	if testing.Short() {
		t.Skip(why + "; skipped with -short")
	}
}

// Platform skips t when ok is false because this system, user or build
// cannot do what the test checks (symbolic links, file permissions as
// root, a signal Windows lacks, the race detector's allocations). It skips
// under CI=true too: no installation would change it.
func Platform(t testing.TB, ok bool, why string) {
	t.Helper()
	if !ok {
		t.Skip(why)
	}
}

// HelperProcess skips t unless it runs as the child process another test
// started (which set env to a non-empty value), and returns the value.
func HelperProcess(t testing.TB, env string) string {
	t.Helper()
	v := os.Getenv(env)
	if v == "" {
		t.Skip("runs only as the child process of another test (" + env + " is set there)")
	}
	return v
}

// SharedData is ../shared/data beside the repository, or
// $SAGASU_SHARED_DATA: the real corpora of the measurements.
func SharedData() string {
	if d := os.Getenv("SAGASU_SHARED_DATA"); d != "" {
		return d
	}
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "data")
}

// Shared returns the folder of the shared corpus name ("vitepress-docs",
// "scifact"), or skips t (fails it under CI=true) when it is absent.
func Shared(t testing.TB, name string) string {
	t.Helper()
	dir := filepath.Join(SharedData(), name)
	_, err := os.Stat(dir)
	Need(t, err == nil, name+" is not at "+dir+": put the shared data beside the repository or set SAGASU_SHARED_DATA")
	return dir
}

// SciFactEnv names the BEIR SciFact folder (scripts/test.sh exports it).
const SciFactEnv = "SAGASU_SCIFACT"

// SciFact returns the BEIR SciFact folder: $SAGASU_SCIFACT, else
// scifact under SharedData. It skips t (fails it under CI=true) when
// neither is there.
func SciFact(t testing.TB) string {
	t.Helper()
	dir := os.Getenv(SciFactEnv)
	if dir == "" {
		dir = filepath.Join(SharedData(), "scifact")
	}
	_, err := os.Stat(filepath.Join(dir, "corpus.jsonl"))
	Need(t, err == nil, "no BEIR SciFact at "+dir+": set "+SciFactEnv+" to its folder (scripts/test.sh does when ../shared/data/scifact exists)")
	return dir
}
