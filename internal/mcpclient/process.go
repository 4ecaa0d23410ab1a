package mcpclient

import (
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// process is a stdio MCP server's operating-system process. It runs in its own
// process group so that stopping it also ends what it started (Playwright
// MCP's chromium), and it keeps the tails of stdout and stderr to explain a
// failure.
type process struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *sniffer // what the server writes, watched for lines that are not JSON
	errOut *tail
	exited chan struct{}
	err    error // cmd.Wait's result, set before exited is closed
}

// waitDelay bounds how long Wait waits for stdout/stderr to close after the
// process itself exited (a grandchild may hold them open).
const waitDelay = 2 * time.Second

// startProcess starts cfg's command with env (see childEnv) as its whole
// environment.
func startProcess(cfg ServerConfig, env []string) (*process, error) {
	cmd := exec.Command(cfg.Command, cfg.Args...)
	if cfg.Dir != "" && strings.ContainsAny(cfg.Command, "/"+string(filepath.Separator)) && !filepath.IsAbs(cfg.Command) {
		// A relative command is the config folder's, like a relative path
		// in the file.
		cmd = exec.Command(filepath.Join(cfg.Dir, cfg.Command), cfg.Args...)
	}
	cmd.Dir = cfg.Dir
	cmd.Env = env
	ownGroup(cmd)
	cmd.WaitDelay = waitDelay
	p := &process{cmd: cmd, errOut: newTail(4096), exited: make(chan struct{})}
	cmd.Stderr = p.errOut
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("stdin pipe: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("stdout pipe: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("run %q: %w (check mcp_servers.%s.command)", cfg.Command, err, cfg.Name)
	}
	p.stdin = stdin
	p.stdout = &sniffer{r: stdout, atLineStart: true}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// hasExited reports whether the process has ended.
func (p *process) hasExited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// awaitExit waits up to d for the process to end and reports whether it did.
func (p *process) awaitExit(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}

// stop ends the process: it closes stdin (the MCP way to ask a stdio server to
// leave), waits up to grace, then sends SIGTERM and SIGKILL to the whole
// process group. It returns once the process has been reaped.
func (p *process) stop(grace time.Duration) {
	_ = p.stdin.Close()
	if !p.awaitExit(grace) {
		terminateGroup(p.cmd)
		if !p.awaitExit(2 * time.Second) {
			killGroup(p.cmd)
			<-p.exited
		}
	}
	// Whatever the server started and left behind goes too.
	killGroup(p.cmd)
}

// describe says why the connection to the process failed, for error messages.
func (p *process) describe() string {
	var b strings.Builder
	if g := p.stdout.garbage(); g != "" {
		fmt.Fprintf(&b, "the process wrote something that is not JSON-RPC on stdout (%q); a stdio MCP server must log to stderr only", g)
	} else if p.hasExited() {
		if p.err != nil {
			fmt.Fprintf(&b, "the process exited (%v)", p.err)
		} else {
			b.WriteString("the process exited")
		}
	} else {
		b.WriteString("the connection to the process broke")
	}
	if e := strings.TrimSpace(p.errOut.String()); e != "" {
		fmt.Fprintf(&b, "; its stderr ends with: %s", lastLines(e, 5))
	}
	return b.String()
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// tail keeps the last bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func newTail(max int) *tail { return &tail{max: max} }

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = bytes.Clone(t.buf[len(t.buf)-t.max:])
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// sniffer passes a server's stdout through and keeps the first line that
// does not start like a JSON-RPC message (with { or [), to name it in errors.
type sniffer struct {
	r           io.ReadCloser
	mu          sync.Mutex
	atLineStart bool
	capturing   bool
	bad         []byte
}

// maxGarbage bounds the stray output kept for an error message.
const maxGarbage = 200

func (s *sniffer) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range p[:n] {
		switch {
		case c == '\n':
			s.atLineStart = true
			if s.capturing {
				s.capturing = false
			}
		case s.capturing:
			if len(s.bad) < maxGarbage {
				s.bad = append(s.bad, c)
			}
		case s.atLineStart && (c == ' ' || c == '\t' || c == '\r'):
		case s.atLineStart:
			s.atLineStart = false
			if c != '{' && c != '[' && s.bad == nil {
				s.capturing = true
				s.bad = append(s.bad, c)
			}
		}
	}
	return n, err
}

func (s *sniffer) Close() error { return s.r.Close() }

// garbage returns the first stray line, or "".
func (s *sniffer) garbage() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.TrimSpace(string(s.bad))
}
