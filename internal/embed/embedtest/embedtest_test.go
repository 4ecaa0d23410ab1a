package embedtest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sagasu-dev/sagasu/internal/embed"
)

func TestHashing(t *testing.T) {
	e := New(64)
	ctx := context.Background()
	v, err := e.EmbedDocuments(ctx, []string{"the cat sat on the mat", "The cat sat on a mat!", "quarterly revenue rose"})
	require.NoError(t, err)
	q, err := e.EmbedQuery(ctx, "the cat sat on the mat")
	require.NoError(t, err)
	assert.InDeltaSlice(t, v[0], q, 1e-6, "the same text, the same vector")
	assert.Greater(t, embed.Dot(v[0], v[1]), embed.Dot(v[0], v[2]))
	assert.InDelta(t, 1, embed.Dot(v[2], v[2]), 1e-5)
	assert.Equal(t, embed.Info{Driver: "test", Model: "hashing", Dim: 64}, e.Info())
}
