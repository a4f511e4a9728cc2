package keyspace_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/persimmon-db/persimmon/keyspace"
)

// hugeSetCleaning is what cleanHugeSet measured.
type hugeSetCleaning struct {
	maxRecord   int           // largest payload among the records cleaning wrote
	records     int           // records cleaning wrote (and recovery kept)
	maxLockWait time.Duration // longest a Lock() waited while cleaning ran
	clean       time.Duration // how long Clean took
}

// cleanHugeSet writes a set of n members (in batches of 10,000), buries
// it under garbage so the cleaner must rewrite it whole, runs the cleaner
// with the given record limit while another goroutine keeps taking the
// keyspace lock, and checks the set after a reopen.
func cleanHugeSet(t testing.TB, n, limit int) hugeSetCleaning {
	dir := t.TempDir()
	const segSize = 16 << 20
	ks := openKS(t, dir, segSize)
	key := []byte("huge")
	// The whole setup holds the lock, so the background cleaner (which
	// may start as soon as there is garbage) waits until the lock-wait
	// probe below is running and the record limit is set.
	ks.Lock()
	ks.SetRecordLimit(limit)
	b := ks.NewBatch()
	for i := 0; i < n; i += 10000 {
		b.Reset()
		for j := i; j < min(i+10000, n); j++ {
			b.SAdd(0, key, []byte(fmt.Sprintf("member:%08d", j)))
		}
		if err := ks.Commit(b); err != nil {
			t.Fatal(err)
		}
	}
	firstSeg, _ := ks.ObjectFirstSeg(0, key)
	junk := make([]byte, 4096)
	for i := 0; i < n/100+10000; i++ {
		b.Reset()
		b.Set(1, []byte("junk"), junk, 0)
		if err := ks.Commit(b); err != nil {
			t.Fatal(err)
		}
	}
	b.Reset()
	b.Del(1, []byte("junk"))
	if err := ks.Commit(b); err != nil {
		t.Fatal(err)
	}
	lsn := ks.LastLSN()

	var m hugeSetCleaning
	var maxWait atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{})
	started := make(chan struct{})
	go func() {
		defer close(done)
		close(started)
		for {
			select {
			case <-stop:
				return
			default:
			}
			start := time.Now()
			ks.Lock()
			w := time.Since(start)
			ks.Unlock()
			if int64(w) > maxWait.Load() {
				maxWait.Store(int64(w))
			}
			time.Sleep(100 * time.Microsecond)
		}
	}()
	<-started
	start := time.Now()
	ks.Unlock()
	ks.Clean() // (or waits for the background cleaner to finish the job)
	m.clean = time.Since(start)
	close(stop)
	<-done
	m.maxLockWait = time.Duration(maxWait.Load())
	if err := ks.Close(); err != nil {
		t.Fatal(err)
	}

	segs, _ := filepath.Glob(filepath.Join(dir, "seg-*.arena"))
	for _, p := range segs {
		img, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range segmentRecords(t, img) {
			if r.lsn > lsn {
				m.records++
				m.maxRecord = max(m.maxRecord, r.payload)
			}
		}
	}

	ks = openKS(t, dir, segSize)
	defer ks.Close()
	ks.Lock()
	defer ks.Unlock()
	if seg, _ := ks.ObjectFirstSeg(0, key); seg <= firstSeg {
		t.Fatalf("the set still starts in segment %d: the cleaner did not rewrite it", seg)
	}
	if got, _ := ks.SCard(0, key); got != n {
		t.Fatalf("SCARD %d after cleaning and reopen, want %d", got, n)
	}
	for _, i := range []int{0, n / 2, n - 1} {
		if in, _ := ks.SIsMember(0, key, []byte(fmt.Sprintf("member:%08d", i))); !in {
			t.Fatalf("member %d lost", i)
		}
	}
	return m
}

// TestCleanerRewritesHugeSetInBoundedRecords: the cleaner's rewrite of a
// 1,000,000-member set (about 16 MB of members) is a group of records of
// at most keyspace.RecordLimit bytes, not one 16 MB record.
func TestCleanerRewritesHugeSetInBoundedRecords(t *testing.T) {
	n := 1_000_000
	if testing.Short() {
		n = 100_000
	}
	m := cleanHugeSet(t, n, keyspace.RecordLimit)
	t.Logf("%d members: cleaning wrote %d records, the largest %d bytes; Clean took %v, a Lock waited at most %v", n, m.records, m.maxRecord, m.clean, m.maxLockWait)
	if m.maxRecord > keyspace.RecordLimit {
		t.Fatalf("a record of %d bytes, over the limit %d", m.maxRecord, keyspace.RecordLimit)
	}
}

// BenchmarkCleanHugeSet reports the largest record and the longest lock
// wait while the cleaner rewrites a 1,000,000-member set, with records
// bounded and with the whole set in one record (the behaviour before
// records were bounded). Run with -benchtime=1x.
func BenchmarkCleanHugeSet(b *testing.B) {
	for _, limit := range []int{keyspace.RecordLimit, math.MaxInt32} {
		b.Run(fmt.Sprintf("limit=%d", limit), func(b *testing.B) {
			for range b.N {
				m := cleanHugeSet(b, 1_000_000, limit)
				b.ReportMetric(float64(m.maxRecord), "max-record-bytes")
				b.ReportMetric(float64(m.records), "records")
				b.ReportMetric(float64(m.maxLockWait.Microseconds()), "max-lock-wait-µs")
				b.ReportMetric(float64(m.clean.Milliseconds()), "clean-ms")
			}
		})
	}
}
