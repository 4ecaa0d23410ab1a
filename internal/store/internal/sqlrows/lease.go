package sqlrows

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/sagasu-dev/sagasu/internal/store"
)

// LeaseColumns are a run's lease columns, in the order ScanLease reads
// them: its owner as JSON ("" for none) and the lease's end in Unix
// microseconds. The owner's token is also a column of its own,
// owner_token, that conditional updates compare.
const LeaseColumns = `owner, lease_until`

// ScanLease reads LeaseColumns.
func ScanLease(r Scanner) (store.Lease, error) {
	var owner string
	var until int64
	if err := r.Scan(&owner, &until); err != nil {
		return store.Lease{}, err
	}
	return LeaseOf(owner, until)
}

// LeaseOf is the lease of a stored owner and end.
func LeaseOf(owner string, until int64) (store.Lease, error) {
	var l store.Lease
	if owner == "" {
		return l, nil
	}
	if err := json.Unmarshal([]byte(owner), &l.Owner); err != nil {
		return l, fmt.Errorf("the run's owner cannot be read: %w", err)
	}
	l.Until = time.UnixMicro(until).UTC()
	return l, nil
}

// OwnerJSON is the stored form of an owner.
func OwnerJSON(o store.Owner) string {
	b, _ := json.Marshal(o)
	return string(b)
}
