package mcpserver

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sagasu-dev/sagasu/internal/store"
	"github.com/sagasu-dev/sagasu/internal/tools"
)

// Resources: sagasu://source/{id} is a source's original content and
// sagasu://chunk/{id} one chunk's text. Tool results link to them so a
// client can fetch what did not fit a budget; resources themselves are
// read by the client, whole.

func (s *Server) addResources() {
	s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{
		Name: "source", Title: "Indexed source", URITemplate: "sagasu://source/{id}",
		Description: "The original content of an indexed source (IDs from sagasu_list or any result).",
	}, s.readSource)
	s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{
		Name: "chunk", Title: "Indexed chunk", URITemplate: "sagasu://chunk/{id}", MIMEType: "text/plain",
		Description: "The text of one chunk (chunkId from a search result).",
	}, s.readChunk)
}

func (s *Server) readSource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	id, ok := strings.CutPrefix(uri, "sagasu://source/")
	if !ok || id == "" {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	src, err := s.store.Source(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	if err != nil {
		return nil, err
	}
	if err := s.tools.Readable(src); err != nil {
		return nil, err
	}
	content, err := s.store.Content(ctx, id)
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: tools.MIME(src.Format), Text: content}}}, nil
}

func (s *Server) readChunk(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	raw, ok := strings.CutPrefix(uri, "sagasu://chunk/")
	id, err := strconv.ParseInt(raw, 10, 64)
	if !ok || err != nil {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	hits, err := s.store.Hits(ctx, []int64{id})
	if err != nil {
		return nil, err
	}
	if len(hits) == 0 {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	if err := s.tools.Readable(hits[0].Source); err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: hits[0].Chunk.Text}}}, nil
}
