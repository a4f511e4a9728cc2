package keyindex

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/bits"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/cespare/xxhash/v2"
	"github.com/persimmon-db/persimmon/pmem"
)

// File layout.
const (
	headerSize  = 4096 // bytes before the first slot
	magic       = "PSMNIDX1"
	version     = 2   // 2: 15-bit tags and the expiring bit; 48 user words
	blockA      = 512 // offsets of the two checkpoint blocks (one sector each)
	blockB      = 1024
	blockWords  = 64 // 8-byte words in a checkpoint block (one sector), the CRC last
	minCapacity = 1 << 10
	pageSize    = 4096

	tombstone = uint64(1) << 63 // offset 0: never a location
	offMask   = uint64(1)<<32 - 1
	expBit    = uint64(1) << 48 // the operation has an expiry
	tagShift  = 49
)

// UserWords is the number of caller counters a checkpoint carries.
const UserWords = 48

// Errors.
var (
	// ErrFormat: the file is not a key index of this version, or its size
	// does not match its header. The caller rebuilds (Reset).
	ErrFormat = errors.New("keyindex: not a key index file of this version")
	// ErrLocation: a location the slot format cannot hold (an offset of 4
	// GiB or more, or offset 0).
	ErrLocation = errors.New("keyindex: location does not fit a slot")
)

// Checkpoint is a consistent point of the index: every operation of the
// records up to LSN is in the table.
type Checkpoint struct {
	LSN uint64
	// Seg and Off locate where replay starts: the first record after LSN
	// (the caller's convention; stored as given).
	Seg, Off uint64
	// User holds the caller's counters as of LSN (e.g. live bytes).
	User [UserWords]uint64
	// Applying: the checkpoint was being applied when the process
	// stopped: the table holds the state of the checkpoint before it
	// (BaseLSN, replay from BaseSeg/BaseOff) plus any part of the writes
	// up to LSN. Replay from the base in repair mode, then Sweep from
	// the base's location; User is as of LSN.
	Applying                  bool
	BaseLSN, BaseSeg, BaseOff uint64
	gen                       uint64
	live, tombs               int // the table's slot counts (a block that is not applying)
}

// Options configure Open.
type Options struct {
	Mode pmem.Mode // how Checkpoint persists (as the arena's mode)
	// KeyAt returns the key of the operation at loc (seg<<40 | offset);
	// ok is false if loc names no operation (the slot is then skipped as
	// a mismatch).
	KeyAt func(loc uint64) (key []byte, ok bool)
	// Newest is the id of the newest segment at Open (SetNewest moves it):
	// a slot's 16 segment bits name the newest live id with those low bits.
	Newest uint64
	// Capacity is the initial slot count of a new table (rounded up to a
	// power of two, at least 1024).
	Capacity int
	// Placed, when set, is called when Apply stores a key into a slot
	// that did not hold it (a key new to the table, not an update in
	// place), with the slot's position: a caller's cursor over slot
	// positions learns of a key stored behind it (SetPlaced).
	Placed func(slot int, key []byte)
	// Logf, when set, receives the index's log lines (what a growth's
	// table locked in memory: SetLockBudget).
	Logf func(format string, args ...any)
	// testHook, when set, is called at the stages of growth and
	// checkpoint ("grow:built", "grow:renamed", "ckpt:applying",
	// "ckpt:step" (a CheckpointStep with more to store), "ckpt:stored"
	// (a frozen job's stores done), "ckpt:pages", "ckpt:block").
	testHook func(stage string)
}

// Index is one table (one database's keys). It is not safe for concurrent
// use: the caller serialises every call (the keyspace lock), except a
// CheckpointJob's Run and a GrowJob's Run, which run without it.
type Index struct {
	path   string
	opts   Options
	region *pmem.Region
	slots  []uint64 // the mapping after the header, as words
	mask   uint64
	live   int // published live slots
	tombs  int
	dirty  []uint64 // one bit per page of the file written since the last checkpoint
	cp     Checkpoint
	hasCP  bool // cp is set (the generation goes on from it)
	valid  bool // the file's checkpoint block is cp (not invalidated)
	repair bool

	ov      overlay // writes since the last checkpoint (overlay.go)
	fz      *frozen // a checkpoint in steps still storing its writes (steps.go)
	spareOv overlay // a reset overlay for the next FreezeCheckpoint
	newest  uint64
	memo    lookupMemo // the last Lookup's answer (see lookupMemo)
	mig     *migration // a growth in progress (grow.go)

	pfHashes []uint64 // Prefetch's scratch

	Grows int // growths and rebuilds since Open

	last  CheckpointTimes // the last Checkpoint's breakdown
	job   *CheckpointJob  // a checkpoint whose pages and block are being persisted (Run), not ended yet
	spare []uint64        // a cleared dirty bitmap for the next BeginCheckpoint

	lockBudget int64 // bytes of the mapping to keep resident (lock.go)
	locked     int64 // bytes of the current mapping locked
}

// CheckpointTimes break down the last Checkpoint (for INFO): the staged
// writes it stored, how long storing them took (BeginCheckpoint, under
// the caller's lock), the dirty pages it persisted and how long
// persisting them and the final block took (the job's Run: without the
// lock when the caller runs it so; as of the last ended job).
type CheckpointTimes struct {
	Staged  int
	Apply   time.Duration
	Steps   int           // CheckpointStep calls of a checkpoint in steps (0: BeginCheckpoint's)
	StepMax time.Duration // the longest of them
	Faults  int64         // page faults (minor and major) of the thread during the apply (approximate: the goroutine may change threads)
	Pages   int
	Persist time.Duration
}

// LastCheckpointTimes returns the last Checkpoint's breakdown.
func (ix *Index) LastCheckpointTimes() CheckpointTimes { return ix.last }

// Open maps the index file at path, creating an empty table if it is
// missing. ok reports whether a valid checkpoint was found: if not (a new
// file, or every checkpoint block damaged) the table is empty and the
// caller must rebuild it from the whole log. A file that is not a key
// index is an error wrapping ErrFormat; Reset replaces it.
func Open(path string, opts Options) (ix *Index, cp Checkpoint, ok bool, err error) {
	_ = os.Remove(path + ".grow") // a growth cut short: the old table stands
	capacity := max(minCapacity, 1<<bits.Len(uint(max(opts.Capacity, 1)-1)))
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if ix, err = create(path, opts, uint64(capacity), Checkpoint{}, false); err != nil {
			return nil, Checkpoint{}, false, err
		}
		ix.opts.testHook = nil // the stages are a growth's
		err := ix.finishFile()
		ix.opts.testHook = opts.testHook
		if err != nil {
			ix.region.Close()
			return nil, Checkpoint{}, false, err
		}
		return ix, Checkpoint{}, false, nil
	case err != nil:
		return nil, Checkpoint{}, false, err
	}
	if fi.Size() < headerSize+minCapacity*8 {
		return nil, Checkpoint{}, false, fmt.Errorf("%w: %s is %d bytes", ErrFormat, path, fi.Size())
	}
	r, err := pmem.Map(path, fi.Size(), opts.Mode)
	if err != nil {
		return nil, Checkpoint{}, false, err
	}
	b := r.Bytes()
	n := binary.LittleEndian.Uint64(b[16:])
	if string(b[:8]) != magic || binary.LittleEndian.Uint64(b[8:]) != version || n == 0 || n&(n-1) != 0 || int64(headerSize+8*n) != fi.Size() {
		r.Close()
		return nil, Checkpoint{}, false, fmt.Errorf("%w: %s: bad header", ErrFormat, path)
	}
	ix = attach(path, opts, r)
	ix.cp, ix.hasCP = ix.readCheckpoint()
	ix.valid = ix.hasCP
	if !ix.hasCP {
		ix.clearSlots()
		return ix, Checkpoint{}, false, nil
	}
	if !ix.cp.Applying {
		// Between checkpoints the table is exactly the block's: its
		// counts are the block's (no pass over the slots).
		ix.live, ix.tombs = ix.cp.live, ix.cp.tombs
		return ix, ix.cp, true, nil
	}
	for _, w := range ix.slots {
		switch {
		case w == 0:
		case w&offMask == 0:
			ix.tombs++
		default:
			ix.live++
		}
	}
	return ix, ix.cp, true, nil
}

func attach(path string, opts Options, r *pmem.Region) *Index {
	b := r.Bytes()
	words := unsafeWords(b[headerSize:])
	return &Index{
		path: path, opts: opts, region: r, slots: words, mask: uint64(len(words) - 1),
		dirty:  make([]uint64, (len(b)/pageSize+63)/64),
		newest: opts.Newest,
	}
}

// create maps a new table file of capacity slots, carrying cp (if hasCP),
// at the side file path+".grow"; finishFile persists it and renames it
// over path.
func create(path string, opts Options, capacity uint64, cp Checkpoint, hasCP bool) (*Index, error) {
	tmp := path + ".grow"
	_ = os.Remove(tmp)
	r, err := pmem.Map(tmp, int64(headerSize+8*capacity), opts.Mode)
	if err != nil {
		return nil, err
	}
	b := r.Bytes()
	copy(b, magic)
	binary.LittleEndian.PutUint64(b[8:], version)
	binary.LittleEndian.PutUint64(b[16:], capacity)
	ix := attach(path, opts, r)
	if hasCP {
		ix.cp, ix.hasCP, ix.valid = cp, true, true
		ix.writeBlock(blockOff(cp.gen), cp)
	}
	return ix, nil
}

// blockOff is the header offset of the checkpoint block of generation gen.
func blockOff(gen uint64) int {
	if gen%2 == 0 {
		return blockB
	}
	return blockA
}

// finishFile persists the whole side file and renames it over ix.path.
func (ix *Index) finishFile() error {
	tmp := ix.path + ".grow"
	if err := ix.region.Persist(0, ix.region.Size()); err != nil {
		return err
	}
	if ix.opts.Mode == pmem.ModePmem && !ix.region.DAX() {
		// Flushes reach only the page cache off DAX; the rename must not
		// reach the disk before the file's contents (a power cut would
		// leave a table of zeros with no checkpoint: a rebuild, but say so).
		if err := ix.region.Msync(0, ix.region.Size()); err != nil {
			return err
		}
	}
	ix.hook("grow:built")
	if err := os.Rename(tmp, ix.path); err != nil {
		return err
	}
	if err := pmem.SyncDir(filepath.Dir(ix.path)); err != nil {
		return err
	}
	ix.hook("grow:renamed")
	return nil
}

// settle is Settle for the calls that cannot return its error: a failed
// job leaves the applying block and its pages dirty (EndCheckpoint), the
// next checkpoint retries them and reports it.
func (ix *Index) settle() { _ = ix.Settle() }

// threadFaults returns the calling thread's page faults so far (minor and
// major; 0 if unknown): a store into a page of the mapping faults the
// first time after the kernel wrote it back (a shared file mapping is
// write-protected again once clean), and after a restart.
func threadFaults() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru) != nil {
		return 0
	}
	return ru.Minflt + ru.Majflt
}

func (ix *Index) hook(stage string) {
	if ix.opts.testHook != nil {
		ix.opts.testHook(stage)
	}
	if pauseStage != "" && stage == pauseStage {
		if pauseSeen.Add(1) == int64(pauseAt) {
			fmt.Fprintf(os.Stderr, "keyindex: paused at %s (%s)\n", stage, pauseEnv)
			time.Sleep(time.Hour)
		}
	}
}

// PERSIMMON_KEYINDEX_PAUSE=stage:n stops the process (for an hour) the
// n-th time it reaches a stage of growth or checkpoint (testHook's names),
// after printing a line saying so, so that a crash test can kill -9 a real
// server there. Unset in production.
const pauseEnv = "PERSIMMON_KEYINDEX_PAUSE"

var pauseStage, pauseAt = parsePause(os.Getenv(pauseEnv))

// pauseSeen counts the stages met: hooks run under the caller's lock and
// in jobs without it (a checkpoint's or a growth's persist).
var pauseSeen atomic.Int64

func parsePause(v string) (string, int) {
	i := strings.LastIndexByte(v, ':')
	if i < 0 {
		return "", 0
	}
	n, err := strconv.Atoi(v[i+1:])
	if err != nil || n < 1 {
		return "", 0
	}
	return v[:i], n
}

// Reset replaces the file at path (damaged or of another format) with an
// empty table; the caller then rebuilds it from the whole log.
func Reset(path string, opts Options) (*Index, error) {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	ix, _, _, err := Open(path, opts)
	return ix, err
}

func (ix *Index) clearSlots() {
	ix.forget()
	clear(ix.slots)
	ix.live, ix.tombs = 0, 0
	for i := range ix.dirty {
		ix.dirty[i] = ^uint64(0)
	}
}

// Close unmaps the table. It persists nothing: call Checkpoint first.
func (ix *Index) Close() error {
	if ix.region == nil {
		return nil
	}
	ix.settle()
	ix.abandonMigration()
	err := ix.region.Close()
	ix.region, ix.slots, ix.locked = nil, nil, 0
	return err
}

// lookupMemo is the answer of the last Lookup, for the next Lookup or
// Stage of the same key: a write looks its key up (is it there? what did
// it hold?) and then stages it, with nothing in between that changes the
// index, so the second lookup and the staging need neither the table
// probe nor the key read back from the arena, and the staging learns the
// table's location for the key (staged.hint), and both skip hashing the
// key again (its hash and its overlay entry are kept). Any change to the
// slots, a reset of the overlay or a move of the newest segment voids it
// (forget); a staging of another key adds an entry but moves none. A
// probe that met a slot whose key could not be read (KeyAt's ok false:
// damage, which the caller notes during the probe) is not remembered, so
// that every lookup of such a key meets it again.
type lookupMemo struct {
	valid    bool
	key      []byte
	loc      uint64 // Lookup's answer
	expiring bool
	found    bool
	hash     uint64 // the key's xxhash
	ent      int    // the key's overlay entry (-1: none; the answer is the table's)
	hint     uint64 // without an entry: the table's location for the key (0: none)
	hinted   bool
}

func (ix *Index) forget() { ix.memo.valid = false }

// hashKey returns the key's xxhash, the one hash both the overlay and
// the table use.
func hashKey(key []byte) uint64 { return xxhash.Sum64(key) }

// tagHome returns the tag (15 bits) and home slot of a key's hash.
func (ix *Index) tagHome(h uint64) (tag uint64, home uint64) {
	return h >> tagShift, h & ix.mask
}

// pack makes a slot word of a tag, a location and the expiring bit.
func pack(tag, loc uint64, expiring bool) (uint64, error) {
	off := loc & (1<<40 - 1)
	if off == 0 || off > offMask {
		return 0, fmt.Errorf("%w: %#x", ErrLocation, loc)
	}
	w := tag<<tagShift | (loc>>40&0xffff)<<32 | off
	if expiring {
		w |= expBit
	}
	return w, nil
}

// unpack returns the location a slot word names.
func (ix *Index) unpack(w uint64) uint64 { return unpackAt(ix.newest, w) }

// unpackAt is unpack with newest the id of the newest segment.
func unpackAt(newest, w uint64) uint64 {
	low := w >> 32 & 0xffff
	seg := newest - (newest-low)&0xffff
	return seg<<40 | w&offMask
}

// SetNewest tells the index the id of the newest segment (it must only
// grow; every location staged or applied must be in a segment at most 65,535
// ids older).
func (ix *Index) SetNewest(id uint64) {
	if id > ix.newest {
		ix.newest = id
		ix.forget() // unpack's answers may change
	}
}

// CheckLocation reports whether loc fits a slot (ErrLocation if not).
func CheckLocation(loc uint64) error {
	_, err := pack(0, loc, false)
	return err
}

// Get returns the location of key's live operation: staged first, then
// the table.
func (ix *Index) Get(key []byte) (loc uint64, ok bool) {
	loc, _, ok = ix.Lookup(key)
	return loc, ok
}

// SetPlaced sets Options.Placed (nil removes it).
//
// A frozen job in flight is ended first: its stores make no notes.
func (ix *Index) SetPlaced(fn func(slot int, key []byte)) {
	if fn != nil {
		ix.settle()
	}
	ix.opts.Placed = fn
}

// IsStaged reports whether key has a staged write (one not yet in the
// table): a slot found for it in the table is not its newest state.
func (ix *Index) IsStaged(key []byte) bool {
	h := hashKey(key)
	return ix.ov.find(h, key) >= 0 || ix.findFrozen(h, key) != nil
}

// Lookup is Get that also says whether the operation at loc has an
// expiry (as its slot or staged write records it).
func (ix *Index) Lookup(key []byte) (loc uint64, expiring, ok bool) {
	m := &ix.memo
	if m.valid && string(m.key) == string(key) {
		return m.loc, m.expiring, m.found
	}
	m.valid = false
	m.key = append(m.key[:0], key...)
	h := hashKey(key)
	// The key's home slot is read before the overlay is probed, though
	// it is needed only after: both are cache misses at a high write rate
	// (the overlay holds a tick's writes), and reading both first lets
	// the processor wait for the two at once.
	home := ix.word(h & ix.mask)
	if e := ix.ov.find(h, key); e >= 0 {
		s := &ix.ov.ents[e]
		*m = lookupMemo{valid: true, key: m.key, loc: s.loc, expiring: s.expiring, found: s.loc != 0,
			hash: h, ent: e}
		return s.loc, s.expiring, s.loc != 0
	}
	if s := ix.findFrozen(h, key); s != nil {
		// A frozen write (a checkpoint in steps): its store may not have
		// happened yet, but once the steps are done the table holds
		// exactly it, which is what a staging after this lookup will
		// find there (its hint).
		*m = lookupMemo{valid: true, key: m.key, loc: s.loc, expiring: s.expiring, found: s.loc != 0,
			hash: h, ent: -1, hint: s.loc, hinted: true}
		return s.loc, s.expiring, s.loc != 0
	}
	slot, loc, found, bad := ix.findFrom(h, key, home)
	if found {
		expiring = ix.word(uint64(slot))&expBit != 0
	}
	if !bad {
		*m = lookupMemo{valid: true, key: m.key, loc: loc, expiring: expiring, found: found,
			hash: h, ent: -1, hint: loc, hinted: true}
	}
	return loc, expiring, found
}

// find returns the first slot holding key; bad reports whether the probe
// met a slot whose key could not be read (KeyAt's ok false).
func (ix *Index) find(key []byte) (slot int, loc uint64, ok, bad bool) {
	return ix.findHashed(hashKey(key), key)
}

// findHashed is find with the key's hash h.
func (ix *Index) findHashed(h uint64, key []byte) (slot int, loc uint64, ok, bad bool) {
	return ix.findFrom(h, key, ix.word(h&ix.mask))
}

// findFrom is findHashed given the word of the key's home slot, read.
func (ix *Index) findFrom(h uint64, key []byte, w uint64) (slot int, loc uint64, ok, bad bool) {
	tag, i := ix.tagHome(h)
	for n := 0; n <= int(ix.mask); n++ {
		if n > 0 {
			w = ix.word(i)
		}
		if w == 0 {
			return -1, 0, false, bad
		}
		if w&offMask != 0 && w>>tagShift == tag {
			l := ix.unpack(w)
			k, ok := ix.opts.KeyAt(l)
			if ok && string(k) == string(key) {
				return int(i), l, true, bad
			}
			bad = bad || !ok
		}
		i = (i + 1) & ix.mask
	}
	return -1, 0, false, bad
}

// Stage records a write: key's value is now at loc (loc 0: key deleted),
// in an operation with an expiry if expiring. Lookups see it at once; the
// table gets it at the next Checkpoint, whose LSN covers the write's
// record (so no slot is stored before its record is durable).
func (ix *Index) Stage(key []byte, loc uint64, expiring bool) error {
	if loc != 0 {
		if err := CheckLocation(loc); err != nil {
			return err
		}
	}
	expiring = expiring && loc != 0
	m := &ix.memo
	var h uint64
	e := -1
	if m.valid && string(m.key) == string(key) {
		// The lookup just before: its hash, and its entry or the
		// table's state (the hint) without a probe.
		h, e = m.hash, m.ent
		if e < 0 {
			e = ix.ov.insert(h, key, staged{hint: m.hint, hinted: m.hinted})
			m.ent = e
		}
		m.loc, m.expiring, m.found = loc, expiring, loc != 0
	} else {
		h = hashKey(key)
		if e = ix.ov.find(h, key); e < 0 {
			e = ix.ov.insert(h, key, staged{}) // the table's state unknown: no hint
		}
	}
	s := &ix.ov.ents[e] // an entry staged before keeps its hint
	s.loc, s.expiring = loc, expiring
	if ix.repair {
		// A staging in repair mode, whose lookups may have met a partial
		// image (duplicates, a cut-off run): its checkpoint reads keys.
		s.hint, s.hinted = 0, false
	}
	return nil
}

// Staged is the number of keys written since the last checkpoint (and
// the frozen writes of a checkpoint in steps, FreezeCheckpoint).
func (ix *Index) Staged() int {
	n := ix.ov.len()
	if ix.fz != nil {
		n += ix.fz.ov.len()
	}
	return n
}

// SetRepair turns repair mode on or off: Apply then scans a key's whole
// probe run and tombstones every duplicate of it (recovery's replay of
// the log after the checkpoint; see the package doc).
func (ix *Index) SetRepair(on bool) { ix.repair = on; ix.forget() }

// Repairing reports whether repair mode is on.
func (ix *Index) Repairing() bool { return ix.repair }

// Sweep is recovery's last step after replaying the log from the
// checkpoint in repair mode: every live slot naming a location at or
// after from (the checkpoint's replay start, so a slot stored after the
// checkpoint) must be the first slot of its key's probe run, or it is a
// leftover of a partial image (a duplicate, or cut off from its run by a
// slot that was empty at the checkpoint and filled only in memory) and is
// tombstoned. It reads every slot word and the keys of the slots after
// from; it returns the number of slots removed.
func (ix *Index) Sweep(from uint64) (removed int, err error) {
	ix.settle()
	ix.abandonMigration()
	for i, w := range ix.slots {
		if w == 0 || w&offMask == 0 {
			continue
		}
		loc := ix.unpack(w)
		if loc < from {
			continue
		}
		k, ok := ix.opts.KeyAt(loc)
		if ok {
			k = append([]byte(nil), k...) // KeyAt's bytes may not outlive the next call
			if slot, _, found, _ := ix.find(k); found && slot == i {
				continue
			}
		}
		ix.store(i, tombstone)
		ix.live--
		ix.tombs++
		removed++
	}
	return removed, nil
}

// Apply stores key's durable state into the table at once: its value is
// at loc (an operation with an expiry if expiring), or it is deleted (loc
// 0). Only for records already durable (recovery's replay in repair mode,
// Checkpoint), or for a deletion by expiry (absolute: it needs no record).
func (ix *Index) Apply(key []byte, loc uint64, expiring bool) error {
	if ix.fz != nil && !ix.fz.storing {
		// A frozen write of the key would be stored after this (an older
		// state over a newer one): finish the checkpoint in steps first.
		if err := ix.Settle(); err != nil {
			return err
		}
	}
	h := hashKey(key)
	if e := ix.ov.find(h, key); e >= 0 && ix.ov.ents[e].hinted {
		ix.ov.ents[e].hinted = false // the key's slots change under its staged write
		ix.forget()
	}
	return ix.apply(h, key, loc, expiring, 0, false)
}

// apply is Apply of key of hash h; with hinted (outside repair mode),
// hint is the table's location for key (0: the table does not hold it),
// and a slot matches the key if and only if it holds hint: no key is read
// back (staged.hint).
func (ix *Index) apply(h uint64, key []byte, loc uint64, expiring bool, hint uint64, hinted bool) error {
	hinted = hinted && !ix.repair
	var w uint64
	tag, home := ix.tagHome(h)
	if loc != 0 {
		var err error
		if w, err = pack(tag, loc, expiring); err != nil {
			return err
		}
	}
	ix.recordDelta(key, loc, expiring)
	free := -1 // first tombstone seen
	done := false
	i := home
	for n := 0; n <= int(ix.mask); n++ {
		cur := ix.slots[i]
		if cur == 0 {
			break
		}
		switch {
		case cur&offMask == 0:
			if free < 0 && !done {
				free = int(i)
			}
		case cur>>tagShift == tag:
			if ix.slotIs(cur, key, hint, hinted) {
				if done || loc == 0 {
					ix.store(int(i), tombstone)
					ix.live--
					ix.tombs++
				} else {
					ix.store(int(i), w)
				}
				done = true
				if !ix.repair {
					return nil
				}
			}
		}
		i = (i + 1) & ix.mask
	}
	if done || loc == 0 {
		return nil
	}
	if free >= 0 {
		ix.store(free, w)
		ix.tombs--
		ix.live++
		if ix.opts.Placed != nil {
			ix.opts.Placed(free, key)
		}
		return nil
	}
	if ix.mig != nil {
		used := ix.live + ix.tombs + 1
		if used*16 > len(ix.slots)*15 || !ix.mig.persisting && used*growDen > len(ix.slots)*growLimitNum {
			// The migration fell behind: finish it now (a stall). This
			// write is in the delta the finish applies, so the new table
			// may hold the key already: the retry finds it by its key, as
			// the hint describes the old table (trusting it added a
			// second slot naming the record).
			if err := ix.finishMigration(); err != nil {
				return err
			}
			return ix.apply(h, key, loc, expiring, 0, false)
		}
	} else if (ix.live+ix.tombs+1)*4 > len(ix.slots)*3 {
		if err := ix.grow(); err != nil {
			return err
		}
		return ix.apply(h, key, loc, expiring, hint, hinted) // slots moved; locations did not
	}
	j := home
	for ix.slots[j] != 0 {
		j = (j + 1) & ix.mask
	}
	ix.store(int(j), w)
	ix.live++
	if ix.opts.Placed != nil {
		ix.opts.Placed(int(j), key)
	}
	return nil
}

// slotIs reports whether the live slot word cur (of key's tag) is key's.
func (ix *Index) slotIs(cur uint64, key []byte, hint uint64, hinted bool) bool {
	if hinted {
		return hint != 0 && ix.unpack(cur) == hint
	}
	k, ok := ix.opts.KeyAt(ix.unpack(cur))
	return ok && string(k) == string(key)
}

func (ix *Index) store(slot int, w uint64) {
	ix.forget()
	ix.slots[slot] = w
	p := (headerSize + slot*8) / pageSize
	ix.dirty[p/64] |= 1 << (p % 64)
}

// grow rebuilds the table into a side file (twice the slots if at least
// half are live, else the same number: tombstones dropped) and renames it
// over the table (see the package doc).
func (ix *Index) grow() error {
	ix.settle()
	capacity := uint64(len(ix.slots))
	if ix.live*2 >= len(ix.slots) {
		capacity *= 2
	}
	nx, err := create(ix.path, ix.opts, capacity, ix.cp, ix.valid)
	if err != nil {
		return err
	}
	for _, w := range ix.slots {
		if w == 0 || w&offMask == 0 {
			continue
		}
		j := (xxhashHome(ix, w, nx.mask))
		for nx.slots[j] != 0 {
			j = (j + 1) & nx.mask
		}
		nx.slots[j] = w
		nx.live++
	}
	if nx.hasCP {
		nx.tombs = 0
		nx.writeBlock(blockOff(nx.cp.gen), nx.cp) // with the new table's counts
	}
	if err := nx.finishFile(); err != nil {
		nx.region.Close()
		os.Remove(ix.path + ".grow")
		return err
	}
	ix.region.Close()
	nx.opts, nx.ov, nx.repair, nx.Grows, nx.newest, nx.last = ix.opts, ix.ov, ix.repair, ix.Grows+1, ix.newest, ix.last
	nx.fz, nx.spareOv = ix.fz, ix.spareOv // a growth inside a step: the rest of the frozen writes go to nx
	nx.cp, nx.hasCP = ix.cp, ix.hasCP
	nx.lockBudget = ix.lockBudget
	*ix = *nx
	ix.relockAfterSwap()
	return nil
}

// xxhashHome recomputes the home slot of a slot word under mask (the key
// is read back from its record: a slot keeps only 16 bits of hash).
func xxhashHome(ix *Index, w, mask uint64) uint64 {
	k, ok := ix.opts.KeyAt(ix.unpack(w))
	if !ok {
		return 0
	}
	return xxhash.Sum64(k) & mask
}

// Checkpoint makes cp the index's consistent point: every write staged
// is in a record up to cp.LSN, which is durable. In three steps, each
// persisted before the next: a block saying the checkpoint is being
// applied (its base: the previous checkpoint), the staged writes stored
// into the table (its dirty pages persisted), the block of cp. A crash
// in between leaves the applying block (see Checkpoint.Applying). It is
// BeginCheckpoint, Run and EndCheckpoint in one go.
func (ix *Index) Checkpoint(cp Checkpoint) error {
	j, err := ix.BeginCheckpoint(cp)
	if err != nil {
		return err
	}
	j.Run()
	return ix.EndCheckpoint(j)
}

// CheckpointJob is the second half of a checkpoint (BeginCheckpoint):
// persisting the pages the staged writes dirtied, then the block of cp.
// Run it without the caller's lock: nothing stores into the table
// between checkpoints (writes are staged), and every call that would
// (the next checkpoint, growth's swap, Invalidate, Clear, RemoveIf,
// Sweep, Close) first waits for the job in flight (Settle).
type CheckpointJob struct {
	ix     *Index
	cp     Checkpoint // the final block, its generation set
	live   int        // the table's counts for the block (as of the apply)
	tombs  int
	pages  []uint64 // the dirty page bitmap to persist (the index's, swapped out)
	npages int
	done   chan struct{}
	err    error
	dur    time.Duration // Run's time

	// A frozen job's (FreezeCheckpoint): Run stores fz's hinted writes
	// first, decoding slots with newest (the index's at the freeze), and
	// counts the table's changes in dLive and dTombs (EndCheckpoint adds
	// them to the index's).
	fz            *frozen
	newest        uint64
	dLive, dTombs int
	storeDur      time.Duration

	// OnEnd, when set, is called by whichever call records the job's
	// outcome (EndCheckpoint or a Settle), under the caller's lock, with
	// Run's error: the caller's bookkeeping of a checkpoint taken.
	OnEnd func(err error)
}

// BeginCheckpoint is the first half of Checkpoint, under the caller's
// lock: it waits for a checkpoint still in flight (Settle), persists the
// applying block and stores every staged write into the table (a growth
// in one go may happen here). The job returned persists the rest: call
// Run (without the lock; it takes no lock) and then EndCheckpoint under
// the lock. Until the job has ended the file holds the applying block, so
// a crash meanwhile is a crash inside a checkpoint (recovery repairs).
func (ix *Index) BeginCheckpoint(cp Checkpoint) (*CheckpointJob, error) {
	if err := ix.Settle(); err != nil {
		return nil, err
	}
	cp.Applying, cp.BaseLSN, cp.BaseSeg, cp.BaseOff = false, 0, 0, 0
	t0, f0 := time.Now(), threadFaults()
	ix.last = CheckpointTimes{Staged: ix.ov.len()}
	if ix.ov.len() > 0 {
		if err := ix.putApplying(cp); err != nil {
			return nil, err
		}
		if err := ix.applyStaged(); err != nil {
			return nil, err
		}
	}
	ix.last.Apply, ix.last.Faults = time.Since(t0), threadFaults()-f0
	return ix.newJob(cp), nil
}

// putApplying persists the applying block of the checkpoint cp: its base
// is the index's checkpoint (the base of that one if it is applying).
func (ix *Index) putApplying(cp Checkpoint) error {
	ap := cp
	ap.Applying = true
	if ix.valid {
		ap.BaseLSN, ap.BaseSeg, ap.BaseOff = ix.cp.LSN, ix.cp.Seg, ix.cp.Off
		if ix.cp.Applying {
			ap.BaseLSN, ap.BaseSeg, ap.BaseOff = ix.cp.BaseLSN, ix.cp.BaseSeg, ix.cp.BaseOff
		}
	} // else: no base (a table being rebuilt): Open's caller sees Applying with base 0 and replays everything
	if err := ix.putBlock(ap); err != nil {
		return err
	}
	ix.hook("ckpt:applying")
	return nil
}

// newJob makes the job that persists the checkpoint cp's dirty pages and
// final block (its writes are all in the table) and records it in flight.
func (ix *Index) newJob(cp Checkpoint) *CheckpointJob {
	cp.gen = ix.cp.gen + 1
	j := &CheckpointJob{ix: ix, cp: cp, live: ix.live, tombs: ix.tombs, pages: ix.dirty,
		npages: dirtyPages(ix.dirty), done: make(chan struct{})}
	ix.last.Pages = j.npages
	// The job owns the bitmap now; stores meanwhile (none until the job
	// ends, but a growth's copy steps mark nx's own) go to a clean one.
	if len(ix.spare) == len(ix.dirty) {
		ix.dirty, ix.spare = ix.spare, nil
	} else {
		ix.dirty = make([]uint64, len(ix.dirty))
	}
	ix.job = j
	return j
}

// Run persists the dirty pages and then the block of the checkpoint. It
// takes no lock and touches only the job and the index's mapping (no
// other call writes the header or unmaps it while a job is in flight).
func (j *CheckpointJob) Run() {
	defer close(j.done)
	t0 := time.Now()
	ix := j.ix
	if j.fz != nil {
		j.storeAsync()
		j.live += j.dLive
		j.tombs += j.dTombs
		j.npages = dirtyPages(j.pages) // the pages of its stores too
		ix.hook("ckpt:stored")
	}
	if j.err = ix.persistBitmap(j.pages); j.err != nil {
		return
	}
	ix.hook("ckpt:pages")
	off := blockOff(j.cp.gen)
	ix.writeBlockCounts(off, j.cp, j.live, j.tombs)
	if j.err = ix.region.Persist(int64(off), blockWords*8); j.err != nil {
		return
	}
	j.dur = time.Since(t0)
	ix.hook("ckpt:block")
}

// EndCheckpoint (under the caller's lock) waits for the job's Run and
// records its outcome: on success cp is the index's checkpoint; on an
// error the applying block stands (the next checkpoint's base is its
// base) and the pages not persisted stay dirty. It returns Run's error.
// Ending a job already ended (by Settle) only returns that error.
func (ix *Index) EndCheckpoint(j *CheckpointJob) error {
	if ix.job != j {
		<-j.done
		return j.err
	}
	<-j.done
	ix.job = nil
	if fz := j.fz; fz != nil {
		// The frozen writes are in the table whatever Run's error (the
		// stores cannot fail; a failed persist leaves the applying block).
		ix.live += j.dLive
		ix.tombs += j.dTombs
		ix.fz = nil
		fz.ov.reset()
		ix.spareOv = fz.ov
		ix.forget()
		ix.last.Apply, ix.last.Pages = fz.apply+j.storeDur, j.npages
	}
	if j.err != nil {
		for i, w := range j.pages {
			ix.dirty[i] |= w
		}
	} else {
		ix.cp, ix.hasCP, ix.valid = j.cp, true, true
		ix.spare = j.pages // persistBitmap cleared it
	}
	ix.last.Persist = j.dur
	if j.OnEnd != nil {
		j.OnEnd(j.err)
	}
	return j.err
}

// Settle waits for the checkpoint in flight, if any, and ends it
// (EndCheckpoint), returning its error. Every call that stores into the
// table outside Checkpoint, writes the header or unmaps the table settles
// first; the caller settles before it reads Checkpointed.
func (ix *Index) Settle() error {
	if ix.job != nil {
		return ix.EndCheckpoint(ix.job) // a frozen job's writes end with it
	}
	if ix.fz != nil {
		return ix.finishFrozen() // a checkpoint in steps: stored, run and ended here
	}
	return nil
}

// InFlight reports whether a checkpoint's job has not been ended yet, or
// a checkpoint in steps is still storing its writes.
func (ix *Index) InFlight() bool { return ix.job != nil || ix.fz != nil }

// putBlock writes cp as the next generation's block and persists it.
func (ix *Index) putBlock(cp Checkpoint) error {
	cp.gen = ix.cp.gen + 1
	off := blockOff(cp.gen)
	ix.writeBlock(off, cp)
	if err := ix.region.Persist(int64(off), blockWords*8); err != nil {
		return err
	}
	ix.cp, ix.hasCP, ix.valid = cp, true, true
	return nil
}

// persistDirty persists the pages written since the last call.
func (ix *Index) persistDirty() error { return ix.persistBitmap(ix.dirty) }

// persistBitmap persists the pages set in bitmap, clearing each word once
// its pages are persisted.
func (ix *Index) persistBitmap(dirty []uint64) error {
	for i, word := range dirty {
		for word != 0 {
			b := bits.TrailingZeros64(word)
			start := i*64 + b
			end := start + 1
			for end < (i+1)*64 && word&(1<<(end-i*64)) != 0 {
				end++
			}
			word &^= (1<<(end-i*64) - 1) &^ (1<<b - 1)
			if pages := int(ix.region.Size() / pageSize); end > pages {
				end = pages // clearSlots marks whole words of pages
			}
			if start >= end {
				continue
			}
			if err := ix.region.Persist(int64(start*pageSize), int64((end-start)*pageSize)); err != nil {
				return err
			}
		}
		dirty[i] = 0
	}
	return nil
}

func (ix *Index) writeBlock(off int, cp Checkpoint) { ix.writeBlockCounts(off, cp, ix.live, ix.tombs) }

// writeBlockCounts writes cp's block with the table's counts live and
// tombs (those of a done block).
func (ix *Index) writeBlockCounts(off int, cp Checkpoint, live, tombs int) {
	b := ix.region.Bytes()[off : off+blockWords*8]
	applying := uint64(0)
	if cp.Applying {
		applying = 1
	}
	w := []uint64{cp.LSN, cp.Seg, cp.Off, cp.gen, applying, cp.BaseLSN, cp.BaseSeg, cp.BaseOff}
	w = append(w, cp.User[:]...)
	w = append(w, uint64(live), uint64(tombs)) // the table's counts as of this block (a done one)
	for i, v := range w {
		binary.LittleEndian.PutUint64(b[8*i:], v)
	}
	sum := crc32.Checksum(b[:(blockWords-1)*8], crcTable)
	binary.LittleEndian.PutUint64(b[(blockWords-1)*8:], uint64(sum)|1<<32)
}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// readCheckpoint returns the valid checkpoint block of the highest
// generation.
func (ix *Index) readCheckpoint() (Checkpoint, bool) {
	var best Checkpoint
	found := false
	for _, off := range []int{blockA, blockB} {
		b := ix.region.Bytes()[off : off+blockWords*8]
		sum := binary.LittleEndian.Uint64(b[(blockWords-1)*8:])
		if sum != uint64(crc32.Checksum(b[:(blockWords-1)*8], crcTable))|1<<32 {
			continue
		}
		var cp Checkpoint
		cp.LSN = binary.LittleEndian.Uint64(b)
		cp.Seg = binary.LittleEndian.Uint64(b[8:])
		cp.Off = binary.LittleEndian.Uint64(b[16:])
		cp.gen = binary.LittleEndian.Uint64(b[24:])
		cp.Applying = binary.LittleEndian.Uint64(b[32:]) == 1
		cp.BaseLSN = binary.LittleEndian.Uint64(b[40:])
		cp.BaseSeg = binary.LittleEndian.Uint64(b[48:])
		cp.BaseOff = binary.LittleEndian.Uint64(b[56:])
		for i := range cp.User {
			cp.User[i] = binary.LittleEndian.Uint64(b[64+8*i:])
		}
		cp.live = int(binary.LittleEndian.Uint64(b[64+8*UserWords:]))
		cp.tombs = int(binary.LittleEndian.Uint64(b[72+8*UserWords:]))
		if !found || cp.gen > best.gen {
			best, found = cp, true
		}
	}
	return best, found
}

// Len is the number of live keys, the staged writes included (it looks
// each staged key up in the table).
func (ix *Index) Len() int {
	if ix.job != nil && ix.job.fz != nil {
		ix.settle() // a frozen job's counts are the index's once it has ended
	}
	n := ix.live
	// A key both staged and frozen counts by its staged write, against
	// its frozen one (what the table will hold); a frozen one, against
	// the table now (whose counts do not have it yet, or have it already
	// stored: then the table agrees with it and it counts nothing).
	for i := range ix.ov.ents {
		s := &ix.ov.ents[i]
		var before bool
		if f := ix.findFrozen(s.hash, ix.ov.key(i)); f != nil {
			before = f.loc != 0
		} else {
			_, _, before, _ = ix.findHashed(s.hash, ix.ov.key(i))
		}
		n += liveDelta(before, s.loc != 0)
	}
	if fz := ix.fz; fz != nil {
		for i := range fz.ov.ents {
			s := &fz.ov.ents[i]
			k := fz.ov.key(i)
			_, _, inTable, _ := ix.findHashed(s.hash, k)
			n += liveDelta(inTable, s.loc != 0)
		}
	}
	return n
}

func liveDelta(before, after bool) int {
	switch {
	case after && !before:
		return 1
	case before && !after:
		return -1
	}
	return 0
}

// Stats describe the table.
type Stats struct {
	Slots      int   // capacity
	Live       int   // published live slots
	Tombstones int   // deleted slots not yet reclaimed by a rebuild
	Staged     int   // keys written since the last checkpoint (in the heap overlay)
	FileBytes  int64 // size of the mapped file
	Locked     int64 // bytes of it kept resident (SetLockBudget)
}

// Stats returns the table's counters.
func (ix *Index) Stats() Stats {
	return Stats{Slots: len(ix.slots), Live: ix.live, Tombstones: ix.tombs, Staged: ix.Staged(), FileBytes: ix.region.Size(), Locked: ix.locked}
}

// Range calls fn with the location of every published live slot, in slot
// order, until fn returns false.
func (ix *Index) Range(fn func(loc uint64) bool) {
	for i := range ix.slots {
		if w := ix.word(uint64(i)); w != 0 && w&offMask != 0 && !fn(ix.unpack(w)) {
			return
		}
	}
}

// word reads slot i's word. The readers that may run while a frozen
// job's Run stores into the table (lookups, scans, Range: everything
// that does not settle first) read atomically; on amd64 that is a plain
// load.
func (ix *Index) word(i uint64) uint64 { return atomic.LoadUint64(&ix.slots[i]) }

// Clear empties the table (FLUSHALL): staged writes are dropped too. Only
// once the record that clears is durable (see the package doc).
func (ix *Index) Clear() {
	ix.settle()
	ix.abandonMigration()
	ix.ov.reset()
	ix.forget()
	for i, w := range ix.slots {
		if w != 0 {
			ix.store(i, 0)
		}
	}
	ix.live, ix.tombs = 0, 0
}

// Invalidate voids the checkpoint durably (both blocks) and stores every
// staged write into the table at once: until the next Checkpoint the
// table is not a consistent point and Open reports none (the caller
// rebuilds from the log). For bulk changes (Clear, RemoveIf).
func (ix *Index) Invalidate() error {
	ix.settle()
	ix.abandonMigration()
	if ix.valid {
		b := ix.region.Bytes()
		clear(b[blockA : blockA+blockWords*8])
		clear(b[blockB : blockB+blockWords*8])
		if err := ix.region.Persist(blockA, blockB+blockWords*8-blockA); err != nil {
			return err
		}
		ix.valid = false
	}
	return ix.applyStaged()
}

// applyAhead is how many staged writes ahead applyStaged prefetches.
const applyAhead = 8

// applyStaged stores every staged write into the table (in staging order,
// with the hash and hint each was staged with) and empties the overlay.
func (ix *Index) applyStaged() error {
	n := ix.ov.len()
	// The staged keys' home slots are scattered over the table: each
	// store's probe starts with a cache miss. Asking for the home slot
	// applyAhead entries ahead keeps that many misses in flight instead of
	// waiting for each in turn (apply was 3.6% of the server's CPU at SET
	// -P 16, most of it that wait). A hint: after a growth the address is
	// the new table's, computed with its mask.
	if prefetching {
		for i := 0; i < min(applyAhead, n); i++ {
			prefetch(uintptr(unsafe.Pointer(&ix.slots[ix.ov.ents[i].hash&ix.mask])))
		}
	}
	for i := 0; i < n; i++ {
		if j := i + applyAhead; prefetching && j < n {
			prefetch(uintptr(unsafe.Pointer(&ix.slots[ix.ov.ents[j].hash&ix.mask])))
		}
		s := ix.ov.ents[i] // a copy: apply may grow the table (ix.ov moves with it, the same buffers)
		if err := ix.apply(s.hash, ix.ov.key(i), s.loc, s.expiring, s.hint, s.hinted); err != nil {
			return err
		}
	}
	ix.ov.reset()
	ix.forget()
	return nil
}

// RemoveIf tombstones every published live slot whose location drop
// accepts (after Invalidate: a bulk change).
func (ix *Index) RemoveIf(drop func(loc uint64) bool) {
	ix.settle()
	ix.abandonMigration()
	for i, w := range ix.slots {
		if w != 0 && w&offMask != 0 && drop(ix.unpack(w)) {
			ix.store(i, tombstone)
			ix.live--
			ix.tombs++
		}
	}
}

// Generation changes whenever slots move (a growth or rebuild): a cursor
// over slot positions taken before is void.
func (ix *Index) Generation() int { return ix.Grows }

// ScanSlots calls fn with the location of the published live slots from
// position pos on, until fn returns false or the table ends; it returns
// the position after the last slot visited (Stats().Slots at the end).
func (ix *Index) ScanSlots(pos int, fn func(loc uint64) bool) int {
	for ; pos < len(ix.slots); pos++ {
		if w := ix.word(uint64(pos)); w != 0 && w&offMask != 0 && !fn(ix.unpack(w)) {
			return pos + 1
		}
	}
	return pos
}

// RandomLoc returns the location of the first published live slot at or
// after position start (wrapping); ok is false if there is none.
func (ix *Index) RandomLoc(start int) (loc uint64, ok bool) {
	if ix.live == 0 {
		return 0, false
	}
	n := len(ix.slots)
	for i := 0; i < n; i++ {
		if w := ix.word(uint64((start + i) & (n - 1))); w != 0 && w&offMask != 0 {
			return ix.unpack(w), true
		}
	}
	return 0, false
}

// RangeStaged calls fn for each staged key (its newest state: loc 0 is a
// deletion; expiring: its operation has an expiry) until fn returns false.
//
// The key strings stay valid (and unchanged) after the call, whatever
// happens to the index: a caller may keep them.
func (ix *Index) RangeStaged(fn func(key string, loc uint64, expiring bool) bool) {
	ov, fz := &ix.ov, ix.fz
	more := true
	ov.rangeKeys(func(i int, k string) bool {
		s := &ov.ents[i]
		more = fn(k, s.loc, s.expiring)
		return more
	})
	if !more || fz == nil || ix.fz != fz {
		return
	}
	// The frozen writes of a checkpoint in steps that no staging since
	// supersedes (the staged ones were given above, with their newest
	// state). Stops if fn finishes the checkpoint (fz is then reset).
	fz.ov.rangeKeys(func(i int, k string) bool {
		s := &fz.ov.ents[i]
		if ix.ov.find(s.hash, fz.ov.key(i)) >= 0 {
			return true
		}
		return fn(k, s.loc, s.expiring)
	})
}

// ScanExpiring calls fn with the location of each published live slot
// whose operation has an expiry, among the slots from position pos up to
// pos+n (or the table's end), until fn returns false; it returns the
// position after the last slot read (Stats().Slots at the end). It reads
// slot words only (8 bytes a slot, sequentially): the active-expiry
// cycle's cursor, which decodes only the operations with an expiry.
func (ix *Index) ScanExpiring(pos, n int, fn func(loc uint64) bool) int {
	end := min(len(ix.slots), pos+n)
	for ; pos < end; pos++ {
		if w := ix.word(uint64(pos)); w&expBit != 0 && w&offMask != 0 && !fn(ix.unpack(w)) {
			return pos + 1
		}
	}
	return pos
}

// Valid reports whether the file's checkpoint block is the last checkpoint
// (false after Invalidate, until the next Checkpoint).
func (ix *Index) Valid() bool { return ix.valid }

// Checkpointed returns the last checkpoint and whether there is one.
func (ix *Index) Checkpointed() (Checkpoint, bool) { return ix.cp, ix.hasCP }

// unsafeWords views b (8-byte aligned: a mapping past its page-aligned
// header) as words.
func unsafeWords(b []byte) []uint64 {
	return unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/8)
}
