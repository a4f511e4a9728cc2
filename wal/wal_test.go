package wal

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/persimmon-db/persimmon/arena"
	"github.com/persimmon-db/persimmon/pmem"
)

func openWAL(t *testing.T, dir string, mode pmem.Mode) (*arena.Arena, *WAL) {
	t.Helper()
	a, err := arena.Open(arena.Options{Dir: dir, Mode: mode, SegmentSize: arena.MinSegmentSize})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a, Open(a, 0)
}

func TestRecordRoundTrip(t *testing.T) {
	for _, n := range []int{0, 1, 7, 8, 9, 100} {
		payload := bytes.Repeat([]byte{byte(n)}, n)
		buf := make([]byte, 4096)
		size := RecordSize(n)
		encodeRecord(buf[:size], TypeBatch, FlagTxn, 3, 42, payload)
		rec, err := DecodeRecord(buf, 0)
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		if rec.LSN != 42 || rec.Gap != 3 || rec.Flags != FlagTxn || rec.Type != TypeBatch || !bytes.Equal(rec.Payload, payload) || rec.Size != size {
			t.Fatalf("n=%d: got %+v", n, rec)
		}
		if _, err := DecodeRecord(buf, size); !errors.Is(err, ErrCleanEnd) {
			t.Fatalf("n=%d: after the record: %v, want clean end", n, err)
		}
		// every single-bit flip in the checksummed bytes is detected
		for i := 0; i < HeaderSize+n; i++ {
			for bit := 0; bit < 8; bit++ {
				buf[i] ^= 1 << bit
				if _, err := DecodeRecord(buf, 0); err == nil {
					t.Fatalf("n=%d: flip of byte %d bit %d not detected", n, i, bit)
				}
				buf[i] ^= 1 << bit
			}
		}
	}
}

func TestAppendScanAcrossSegments(t *testing.T) {
	dir := t.TempDir()
	a, w := openWAL(t, dir, pmem.ModeNone)
	var want [][]byte
	for i := 0; i < 500; i++ { // ~100 KiB: spans segments of 64 KiB
		p := []byte(fmt.Sprintf("record-%d-%s", i, bytes.Repeat([]byte("x"), i%300)))
		if _, err := w.Append(TypeBatch, 0, p); err != nil {
			t.Fatal(err)
		}
		want = append(want, p)
	}
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	segs := a.Segments()
	if len(segs) < 2 {
		t.Fatalf("%d segments, want several", len(segs))
	}
	var got [][]byte
	var last uint64
	for i, seg := range segs {
		if _, sealed := seg.Sealed(); sealed != (i < len(segs)-1) {
			t.Fatalf("segment %d sealed=%v", seg.ID(), sealed)
		}
		_, lsn, err := ScanSegment(seg, func(r Record) error {
			got = append(got, append([]byte(nil), r.Payload...))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		last = lsn
	}
	if last != 500 || len(got) != len(want) {
		t.Fatalf("scanned %d records, last LSN %d", len(got), last)
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("record %d differs", i)
		}
	}
}

// TestGroupCommit: concurrent writers each wait for their own LSN; every
// wait returns with the LSN durable, and flushes are shared (fewer flushes
// than records is typical but not guaranteed, so only <= is asserted).
func TestGroupCommit(t *testing.T) {
	for _, mode := range []pmem.Mode{pmem.ModePmem, pmem.ModeMsync} {
		t.Run(mode.String(), func(t *testing.T) {
			_, w := openWAL(t, t.TempDir(), mode)
			var mu sync.Mutex // the keyspace lock orders appends
			var wg sync.WaitGroup
			const writers, each = 8, 50
			for g := 0; g < writers; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < each; i++ {
						mu.Lock()
						loc, err := w.Append(TypeBatch, 0, []byte("payload"))
						mu.Unlock()
						if err != nil {
							t.Error(err)
							return
						}
						if err := w.WaitDurable(loc.LSN); err != nil {
							t.Error(err)
							return
						}
						if w.DurableLSN() < loc.LSN {
							t.Errorf("WaitDurable(%d) returned with durable LSN %d", loc.LSN, w.DurableLSN())
						}
					}
				}()
			}
			wg.Wait()
			if w.Flushes() > writers*each || w.SyncedRecords() != writers*each {
				t.Fatalf("flushes %d, synced records %d", w.Flushes(), w.SyncedRecords())
			}
			t.Logf("%d records in %d flushes", w.SyncedRecords(), w.Flushes())
		})
	}
}

func TestSealedCorruptionVsTornTail(t *testing.T) {
	a, w := openWAL(t, t.TempDir(), pmem.ModeNone)
	for i := 0; i < 400; i++ {
		if _, err := w.Append(TypeBatch, 0, bytes.Repeat([]byte("y"), 200)); err != nil {
			t.Fatal(err)
		}
	}
	segs := a.Segments()
	sealed, active := segs[0], segs[len(segs)-1]
	sealed.Bytes()[arena.HeaderSize+30] ^= 1
	if _, _, err := ScanSegment(sealed, func(Record) error { return nil }); !errors.Is(err, ErrCorruption) || IsTornTail(err) {
		t.Fatalf("sealed: %v, want corruption", err)
	}
	active.Bytes()[arena.HeaderSize+30] ^= 1
	if _, _, err := ScanSegment(active, func(Record) error { return nil }); !IsTornTail(err) {
		t.Fatalf("active: %v, want torn tail", err)
	}
}

func FuzzDecodeRecord(f *testing.F) {
	buf := make([]byte, 256)
	encodeRecord(buf[:RecordSize(5)], TypeBatch, 0, 1, 1, []byte("hello"))
	f.Add(buf[:64])
	f.Add(make([]byte, 24))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 1, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		rec, err := DecodeRecord(b, 0)
		if err != nil {
			return
		}
		if rec.Size > int64(len(b)) || int64(len(rec.Payload))+HeaderSize > rec.Size {
			t.Fatalf("record of %d bytes decoded from %d bytes", rec.Size, len(b))
		}
		// a decoded record re-encodes to the same bytes
		out := make([]byte, rec.Size)
		encodeRecord(out, rec.Type, rec.Flags, rec.Gap, rec.LSN, rec.Payload)
		if !bytes.Equal(out[:HeaderSize+len(rec.Payload)], b[:HeaderSize+len(rec.Payload)]) {
			t.Fatalf("re-encoding differs")
		}
	})
}

// TestSyncSizes checks the records-per-sync distribution: each group
// commit lands in the bucket of the records it covered, and the append
// path does not allocate (a regression once: the fail-stop error's address
// moved every append's error variable to the heap).
func TestSyncSizes(t *testing.T) {
	for n, want := range map[uint64]int{0: 0, 1: 0, 2: 1, 3: 2, 4: 2, 5: 3, 8: 3, 9: 4, 256: 8, 257: 9, 1 << 20: 9} {
		if got := sizeBucket(n); got != want {
			t.Errorf("sizeBucket(%d) = %d, want %d", n, got, want)
		}
	}
	_, w := openWAL(t, t.TempDir(), pmem.ModeNone)
	var wantSizes [SyncSizeBuckets]int64
	for _, batch := range []int{1, 3, 3, 20, 1} {
		for range batch {
			if _, err := w.Append(TypeBatch, 0, []byte("x")); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Sync(); err != nil {
			t.Fatal(err)
		}
		wantSizes[sizeBucket(uint64(batch))]++
	}
	st := w.SyncStats()
	if st.Sizes != wantSizes || st.Syncs != 5 || st.Records != 28 {
		t.Fatalf("SyncStats: %d syncs, %d records, sizes %v; want 5, 28, %v", st.Syncs, st.Records, st.Sizes, wantSizes)
	}
	payload := []byte("payload")
	if allocs := testing.AllocsPerRun(100, func() {
		if _, err := w.Append(TypeBatch, 0, payload); err != nil {
			t.Fatal(err)
		}
	}); allocs != 0 {
		t.Errorf("Append allocates %.1f times per call, want 0", allocs)
	}
}
