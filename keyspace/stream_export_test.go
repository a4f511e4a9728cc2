package keyspace

import "fmt"

// StreamNodes renders the node structure of the stream at key (each
// node's valid and total entry counts and listpack estimate), which only the keyspace sees: a
// rebuild and a replay must reproduce it, or a later "~" trim would
// remove other entries live than after a restart.
func (ks *Keyspace) StreamNodes(db int, key []byte) string {
	s, _ := ks.stream(db, key)
	if s == nil {
		return "none"
	}
	out := ""
	for _, nd := range s.nodes {
		if nd.total > 0 {
			out += fmt.Sprintf("%d/%d lp=%d ", nd.valid, nd.total, nd.lpEstimate())
		}
	}
	return out
}
