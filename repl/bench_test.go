package repl

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/persimmon-db/persimmon/rdb"
)

// nullApplier applies nothing and counts: the replica's own cost alone.
type nullApplier struct{ off atomic.Int64 }

type nullLoader struct {
	a   *nullApplier
	off int64
}

func (a *nullApplier) BeginSnapshot(_ string, off int64) (SnapshotLoader, error) {
	return &nullLoader{a, off}, nil
}
func (a *nullApplier) Apply(u *Unit) error              { a.off.Store(u.Offset); return nil }
func (a *nullApplier) ChangeReplID(string, int64) error { return nil }
func (a *nullApplier) DurableOffset() int64             { return a.off.Load() }
func (l *nullLoader) Load(*rdb.Entry) error             { return nil }
func (l *nullLoader) LoadFunction([]byte) error         { return nil }
func (l *nullLoader) Commit() error                     { l.a.off.Store(l.off); return nil }
func (l *nullLoader) Abort()                            {}

// BenchmarkStream measures the command stream from Master.Propagate to a
// Replica's Apply over loopback: a SET of a 16-byte key and a 64-byte
// value per op, until the replica has applied them all.
func BenchmarkStream(b *testing.B) {
	tm := newTestMaster(b, MasterConfig{Diskless: true, BacklogSize: 64 << 20, Logf: func(string, ...any) {}})
	app := &nullApplier{}
	r := NewReplica(ReplicaConfig{Addr: tm.ln.Addr().String()}, app)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go r.Run(ctx)
	for r.Status().State != StateConnected {
		time.Sleep(time.Millisecond) // a benchmark's set-up, not a test
	}
	val := make([]byte, 64)
	b.SetBytes(int64(len(appendCommand(nil, []byte("SET"), []byte("key:100000000000"), val))))
	b.ResetTimer()
	for i := range b.N {
		tm.m.Propagate(0, []byte("SET"), []byte("key:"+strconv.Itoa(1e11+i)), val)
	}
	want := tm.m.Offset()
	for app.DurableOffset() < want {
		time.Sleep(50 * time.Microsecond)
	}
}
