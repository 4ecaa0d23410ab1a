package react

import (
	"fmt"
	"net/http"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/sagasu-dev/sagasu/internal/testcorpus"
)

// TestMain fails the package's tests when they leave goroutines running
// (once the shared VitePress index is closed).
func TestMain(m *testing.M) {
	code := m.Run()
	testcorpus.Close()
	// Keep-alive connections to a model server are not leaks.
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goroutines left running:", err)
			code = 1
		}
	}
	os.Exit(code)
}
