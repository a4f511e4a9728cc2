package pmem

import "fmt"

// Mode is a durability mode: what Persist does before a write may be
// acknowledged. The zero value is ModePmem, the server's default.
type Mode int

const (
	// ModePmem writes back the cache lines of the range with the best
	// instruction the CPU has (CLWB, else CLFLUSHOPT, else CLFLUSH, chosen
	// by CPUID) and then issues SFENCE. It survives a process crash on any
	// filesystem, and power loss only on a DAX filesystem mapped with
	// MAP_SYNC (Region.DAX). On an architecture without a cache-line
	// write-back instruction Persist falls back to msync.
	ModePmem Mode = iota
	// ModeMsync calls msync(MS_SYNC) on the page-aligned range. It survives
	// a process crash and power loss on any filesystem backed by storage
	// (not on tmpfs or ramfs, which live in RAM).
	ModeMsync
	// ModeNone does nothing beyond the store into the shared mapping. The
	// page cache keeps the data across a process crash; power loss loses
	// whatever the kernel had not yet written back.
	ModeNone
)

// modeNames holds the spelling of each mode in flags, logs and ParseMode.
var modeNames = [...]string{
	ModePmem:  "pmem",
	ModeMsync: "msync",
	ModeNone:  "none",
}

// ParseMode returns the Mode spelled s: "pmem", "msync" or "none" (exact,
// lower case). Any other string returns an error of the form
// `pmem: unknown durability mode "x" (want pmem, msync or none)`.
func ParseMode(s string) (Mode, error) {
	for m, name := range modeNames {
		if s == name {
			return Mode(m), nil
		}
	}
	return 0, fmt.Errorf("pmem: unknown durability mode %q (want pmem, msync or none)", s)
}

// String returns the name ParseMode accepts for m, or "Mode(n)" for a value
// outside the defined modes.
func (m Mode) String() string {
	if m >= 0 && int(m) < len(modeNames) {
		return modeNames[m]
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// valid reports whether m is one of the defined modes.
func (m Mode) valid() bool {
	return m >= 0 && int(m) < len(modeNames)
}
