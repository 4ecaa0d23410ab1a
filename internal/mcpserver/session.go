package mcpserver

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A client that drives the loop itself (sagasu_search, sagasu_evaluate,
// sagasu_refine_query) and names no session gets one per MCP session and
// goal: the same goal in one connection is one session in the agent cache,
// another connection or another goal another session. Over HTTP an MCP
// session has its ID; a connection without one (stdio, in-process) gets a
// random one on its first call, kept while the connection lives. The
// session ID is a hash of the server's nonce, the connection and the goal.

// newNonce draws the server's nonce.
func newNonce() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

// sessionOf returns the session of a call toward goal: given, as the
// client named it, or derived.
func (s *Server) sessionOf(req *mcp.CallToolRequest, given, goal string) string {
	if given != "" {
		return given
	}
	conn := ""
	if req != nil && req.Session != nil {
		conn = s.connOf(req.Session)
	}
	sum := sha256.Sum256([]byte(s.nonce + "\x00" + conn + "\x00" + goal))
	return "mcp-" + hex.EncodeToString(sum[:6])
}

// connOf names a connection: its MCP session ID, or one drawn for it.
func (s *Server) connOf(ss *mcp.ServerSession) string {
	if id := ss.ID(); id != "" {
		return id
	}
	if v, ok := s.conns.Load(ss); ok {
		return v.(string)
	}
	v, loaded := s.conns.LoadOrStore(ss, newNonce())
	if !loaded {
		s.pruneConns()
	}
	return v.(string)
}

// pruneConns forgets the names of connections that have ended.
func (s *Server) pruneConns() {
	live := map[*mcp.ServerSession]bool{}
	for ss := range s.mcp.Sessions() {
		live[ss] = true
	}
	s.conns.Range(func(k, _ any) bool {
		if !live[k.(*mcp.ServerSession)] {
			s.conns.Delete(k)
		}
		return true
	})
}
