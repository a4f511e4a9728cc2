package server

import (
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/persimmon-db/persimmon/keyspace"
)

// The memory tiers' parameters (keyspace/memtier.go): Persimmon's own,
// hidden like durability (CONFIG GET by exact name; CONFIG GET * stays
// redis-server's list), settable at start-up (--key-index-lock no, or a
// config file line) and by CONFIG SET.
//
//   - key-index-lock: auto (the default: a budget from the memory the
//     process may use), yes (the whole index), no, or a size in bytes:
//     how much of the key index's mapping is kept resident.
//   - record-cache-bytes: 0 (the default: off), auto (1/8 of that memory,
//     at most 64 MiB) or a size in bytes: the DRAM cache of hot records.
//     Off by default: its memory-pressure trigger also fires while a fresh
//     data set is written (page faults on new segments), and a GET through
//     the cache costs more CPU in memory (GET -P 16: 1.23-1.91 against
//     0.84-1.08 µs of server CPU a request with it off, 2026-12-04); set it
//     for a data set larger than memory.
//
// Both are applied at the keyspace's next Unlock and logged with what
// they resolved to; INFO memory reports the result.

// parseTierSize canonicalises a tier setting: auto, the words in words,
// or a memory size printed in bytes.
func parseTierSize(words ...string) func(cur, v string) (string, error) {
	return func(_, v string) (string, error) {
		v = strings.ToLower(strings.TrimSpace(v))
		if v == "auto" {
			return v, nil
		}
		for _, w := range words {
			if v == w {
				return v, nil
			}
		}
		n, err := ParseMemory(v)
		if err != nil || n < 0 {
			return "", errors.New("argument must be auto, " + strings.Join(append(words, "or a memory value"), ", "))
		}
		return strconv.FormatInt(n, 10), nil
	}
}

// tierSize resolves a canonical tier setting to bytes (-1: auto).
func tierSize(v string) int64 {
	switch v {
	case "", "auto":
		return -1
	case "no":
		return 0
	case "yes":
		return math.MaxInt64
	}
	n, _ := strconv.ParseInt(v, 10, 64)
	return n
}

// memoryTiers is the tiers' setting in the store (its lock held).
func (s *Server) memoryTiers() keyspace.MemoryTiers {
	return keyspace.MemoryTiers{IndexLock: tierSize(s.conf.vals["key-index-lock"]), RecordCache: tierSize(s.conf.vals["record-cache-bytes"])}
}

// applyMemoryTiers is the parameters' apply hook (the store's lock held).
func applyMemoryTiers(s *Server, _ string) error {
	if s.ks != nil {
		s.ks.SetMemoryTiers(s.memoryTiers())
	}
	return nil
}
