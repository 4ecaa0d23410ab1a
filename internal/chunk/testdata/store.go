// Package store keeps values in memory under string keys.
package store

import (
	"errors"
	"sync"
)

// Sizes of a store.
const (
	DefaultSize = 64
	MaxSize     = 1 << 20
)

// ErrNotFound is returned by Get for a key that was never Put.
var ErrNotFound = errors.New("store: not found")

// Store is a map guarded by a mutex.
type Store struct {
	mu   sync.Mutex
	data map[string][]byte
}

// New returns an empty store.
func New() *Store {
	return &Store{data: make(map[string][]byte, DefaultSize)}
}

// Put stores value under key, replacing what was there.
func (s *Store) Put(key string, value []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.data[key] = value
}

// Get returns the value stored under key.
func (s *Store) Get(key string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.data[key]
	if !ok {
		return nil, ErrNotFound
	}
	return v, nil
}

type pair[K comparable, V any] struct {
	key K
	val V
}

func (p *pair[K, V]) Key() K { return p.key }
