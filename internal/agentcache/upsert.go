package agentcache

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/sagasu-dev/sagasu/internal/userfile"
)

// keyID is the last part of the ID of a record kept under key: "k" and 16
// hex digits of the key's hash. Save's IDs end in a decimal sequence
// number, so the two never meet, and any key (a client's session ID)
// makes a safe file name.
func keyID(key string) string {
	sum := sha256.Sum256([]byte(key))
	return "k" + hex.EncodeToString(sum[:8])
}

// Upsert writes the record of kind k kept under key: the first call creates
// it, later calls replace it in place (same ID, new timestamp). update gets
// the record as it stands (found is false the first time) and returns the
// new one; an update error leaves the record as it was. Calls through one
// Cache are serialized; two processes updating one key at once may lose
// one of their updates (the last rename wins), never a whole record.
func (c *Cache) Upsert(k Kind, key string, update func(old Record, found bool) (Record, error)) (Record, error) {
	p := k.prefix()
	if p == "" {
		return Record{}, fmt.Errorf("save agent cache record: unknown kind %q", k)
	}
	if strings.TrimSpace(key) == "" {
		return Record{}, errors.New("save agent cache record: empty key")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old, found, err := c.Keyed(k, key)
	if err != nil {
		return Record{}, err
	}
	rec, err := update(old, found)
	if err != nil {
		return Record{}, err
	}
	now := time.Now().UTC()
	rec.Kind, rec.Timestamp = k, now
	rec.ID = old.ID
	if !found {
		rec.ID = fmt.Sprintf("%s-%s-%s", p, now.Format(stampLayout), keyID(key))
	}
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return Record{}, fmt.Errorf("save agent cache record: %w", err)
	}
	dir := filepath.Join(c.dir, string(k))
	if err := userfile.MkdirAll(dir); err != nil {
		return Record{}, fmt.Errorf("create agent cache folder %q: %w: check its permissions, or choose another with --cache-dir", dir, err)
	}
	if err := userfile.Write(filepath.Join(dir, rec.ID+".json"), append(data, '\n')); err != nil {
		return Record{}, fmt.Errorf("save agent cache record in %q: %w", dir, err)
	}
	if !found {
		c.prune(k)
	}
	if err := c.WriteSummary(); err != nil {
		c.log.Warn("agent cache summary not updated", "dir", c.dir, "err", err)
	}
	return rec, nil
}

// Keyed returns the record of kind k kept under key by Upsert; found is
// false when there is none.
func (c *Cache) Keyed(k Kind, key string) (rec Record, found bool, err error) {
	suffix := "-" + keyID(key) + ".json"
	names, err := c.names(k)
	if err != nil {
		return Record{}, false, err
	}
	for i := len(names) - 1; i >= 0; i-- {
		if strings.HasSuffix(names[i], suffix) {
			rec, err = c.read(k, names[i])
			if errors.Is(err, fs.ErrNotExist) {
				return Record{}, false, nil
			}
			return rec, err == nil, err
		}
	}
	return Record{}, false, nil
}
