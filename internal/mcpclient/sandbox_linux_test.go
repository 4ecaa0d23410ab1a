package mcpclient

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestChromiumSandboxSaysWhy: as root the sandbox is off and the reason
// names root; as an ordinary user it is on when user namespaces work.
// (TestPlaywrightBrowserGuard checks the real browser's flags and
// namespaces either way.)
func TestChromiumSandboxSaysWhy(t *testing.T) {
	ok, why := ChromiumSandbox()
	if os.Geteuid() == 0 {
		assert.False(t, ok)
		assert.Contains(t, why, "root")
		assert.Contains(t, why, "--no-sandbox")
		return
	}
	if err := probeUserNamespace(); err != nil {
		assert.False(t, ok)
		assert.Contains(t, why, "user namespace")
		return
	}
	assert.True(t, ok, why)
	assert.Empty(t, why)
}
