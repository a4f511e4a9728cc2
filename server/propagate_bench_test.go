package server

import (
	"testing"

	"github.com/persimmon-db/persimmon/repl"
)

// BenchmarkPropagateUnit: the cost of sending one write through a
// propagation unit (propBegin, alsoPropagate, propEnd) against calling
// Master.Propagate directly, with the stream recorded.
func BenchmarkPropagateUnit(b *testing.B) {
	args := [][]byte{[]byte("SET"), []byte("key:000000012345"), []byte("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")}
	newMaster := func() *repl.Master {
		m := repl.NewMaster(repl.MasterConfig{}, repl.NewReplIDs(), 0, nil)
		m.Restore(repl.NewReplID(), 0) // records the stream from now on
		return m
	}
	b.Run("direct", func(b *testing.B) {
		m := newMaster()
		for b.Loop() {
			m.Propagate(0, args...)
		}
	})
	b.Run("unit", func(b *testing.B) {
		s := &Server{master: newMaster()}
		for b.Loop() {
			s.propBegin()
			s.propBegin()
			s.alsoPropagate(0, args...)
			s.propEnd(nil)
			s.propEnd(nil)
		}
	})
}
