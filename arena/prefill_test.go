package arena

import (
	"bytes"
	"os"
	"testing"

	"github.com/persimmon-db/persimmon/pmem"
	"golang.org/x/sys/unix"
)

// TestPrefillKeepsRecords: appends through the mapping across many
// allocation chunks of a segment this process created (prefilled: its
// chunks are written with zeros as they are allocated) all read back
// intact, from the mapping and from the file, and the bytes after the
// last append are zeros; on ext4 the appends' stores take few major
// faults (without the prefill, one a page: 4,097 for 4,094 pages; with it
// 2, and 798 minor faults); a segment reopened at start-up is not
// prefilled.
func TestPrefillKeepsRecords(t *testing.T) {
	dir := t.TempDir()
	const segSize = 16 << 20
	a, err := Open(Options{Dir: dir, Mode: pmem.ModeNone, SegmentSize: segSize})
	if err != nil {
		t.Fatal(err)
	}
	want := make([]byte, segSize)
	for i := range want {
		want[i] = 1 // its pages faulted in before the faults are counted
	}
	want = want[:0]
	pat := make([]byte, 8*61)
	var seg *Segment
	var ru0, ru1 unix.Rusage
	unix.Getrusage(unix.RUSAGE_SELF, &ru0)
	for i := 0; ; i++ {
		n := int64(8 * (1 + i%61)) // record sizes that straddle pages and chunks
		s, off, err := a.Alloc(n, 24, HeaderSize, uint64(i))
		if err != nil {
			t.Fatal(err)
		}
		if seg != nil && s != seg {
			break // the segment is full
		}
		seg = s
		if !seg.prefill {
			t.Fatal("a segment this process created is not prefilled")
		}
		rec := pat[:n]
		for j := range rec {
			rec[j] = byte(i%255 + 1)
		}
		copy(seg.Bytes()[off:], rec)
		want = append(want, rec...)
	}
	unix.Getrusage(unix.RUSAGE_SELF, &ru1)
	// A store into a page never read in is a major fault (the page is
	// "read" from its unwritten extent); one into a prefilled page, whose
	// folio is in the page cache, a minor one (that maps the whole folio
	// where the kernel keeps large folios).
	minor, major := ru1.Minflt-ru0.Minflt, ru1.Majflt-ru0.Majflt
	pages := int64(len(want)) / pageSize
	t.Logf("%d bytes appended (%d pages): %d minor and %d major faults in the process", len(want), pages, minor, major)
	if fs, _ := pmem.Filesystem(dir); fs != "ext4" {
		t.Logf("faults not checked on %s (measured on ext4)", fs)
	} else if major*4 > pages {
		t.Errorf("%d major faults for %d pages appended: the prefill left the stores to read pages in", major, pages)
	}
	got := seg.Bytes()[HeaderSize : HeaderSize+int64(len(want))]
	if !bytes.Equal(got, want) {
		t.Fatal("appended bytes changed in the mapping")
	}
	f, err := os.Open(seg.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	file := make([]byte, segSize)
	if _, err := f.ReadAt(file, 0); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(file[HeaderSize:HeaderSize+len(want)], want) {
		t.Fatal("appended bytes changed in the file")
	}
	if rest := file[HeaderSize+len(want):]; !bytes.Equal(rest, make([]byte, len(rest))) {
		t.Fatal("bytes after the appends are not zeros")
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	a, err = Open(Options{Dir: dir, Mode: pmem.ModeNone, SegmentSize: segSize})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for _, s := range a.Segments() {
		if s.prefill && s.ID() <= seg.ID() {
			t.Errorf("segment %d, reopened, is prefilled", s.ID())
		}
	}
}
