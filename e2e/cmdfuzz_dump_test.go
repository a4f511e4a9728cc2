package e2e

import (
	"fmt"
	"strings"

	"github.com/persimmon-db/persimmon/rdb"
)

// fzStreamDump renders a stream's DUMP payload for the command fuzzer:
// what the payload holds that both servers must agree on (nodes with their
// master IDs and live entries, the counters, groups, pending entries with
// their consumers and delivery counts, consumers), without the delivery
// and seen times (each server's clock) and without the deleted entries
// Redis's listpacks keep and Persimmon's do not. ok is false for a payload
// that is not a stream.
func fzStreamDump(payload string) (string, bool) {
	if payload == "" || (payload[0] != rdb.TypeStream2 && payload[0] != rdb.TypeStream) {
		return "", false
	}
	v, err := rdb.Restore([]byte(payload))
	if err != nil || v.Kind != rdb.KindStream {
		return "", false
	}
	s := v.Stream
	var b strings.Builder
	id := func(x rdb.StreamID) string { return fmt.Sprintf("%d-%d", x.Ms, x.Seq) }
	fmt.Fprintf(&b, "stream len=%d last=%s first=%s maxdel=%s added=%d", s.Length, id(s.LastID), id(s.FirstID), id(s.MaxDeletedID), s.EntriesAdded)
	for _, nd := range s.Nodes {
		fmt.Fprintf(&b, " node(%s", id(nd.Master))
		for _, e := range nd.Entries {
			fmt.Fprintf(&b, " %s%q", id(e.ID), e.Fields)
		}
		b.WriteString(")")
	}
	for _, g := range s.Groups {
		fmt.Fprintf(&b, " group(%q last=%s read=%d", g.Name, id(g.LastID), g.EntriesRead)
		for _, p := range g.PEL {
			fmt.Fprintf(&b, " %s:%q:%d", id(p.ID), g.Consumers[p.Consumer].Name, p.DeliveryCount)
		}
		for _, c := range g.Consumers {
			fmt.Fprintf(&b, " consumer %q", c.Name)
		}
		b.WriteString(")")
	}
	return b.String(), true
}
