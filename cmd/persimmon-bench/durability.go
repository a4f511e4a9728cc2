package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// durabilityReport compares INFO persistence before and after a run.
// Persimmon reports wal_flushes (flush+fence or msync calls) and
// wal_synced_records (records made durable by them); redis-server reports
// neither, and the report then only carries a note.
type durabilityReport struct {
	Supported       bool    `json:"supported"`
	Note            string  `json:"note,omitempty"`
	Mode            string  `json:"mode,omitempty"`
	Flushes         int64   `json:"flushes"`
	SyncedRecords   int64   `json:"synced_records"`
	Writes          int64   `json:"writes,omitempty"`
	FlushesPerWrite float64 `json:"flushes_per_write"`
	GroupCommitAvg  float64 `json:"group_commit_avg_records"`
}

func infoPersistence(addr, auth string) (map[string]string, error) {
	c, err := dial(addr, auth)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	s, err := c.doFull("INFO", "persistence")
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if k, v, ok := strings.Cut(line, ":"); ok {
			m[k] = v
		}
	}
	return m, nil
}

// durabilityDelta builds the report from two INFO snapshots. writes is the
// number of write commands the client knows it sent (0 if unknown); without
// it, flushes per write is computed per synced record.
func durabilityDelta(before, after map[string]string, writes int64) *durabilityReport {
	num := func(m map[string]string, k string) (int64, bool) {
		v, ok := m[k]
		if !ok {
			return 0, false
		}
		n, err := strconv.ParseInt(v, 10, 64)
		return n, err == nil
	}
	f0, ok1 := num(before, "wal_flushes")
	f1, ok2 := num(after, "wal_flushes")
	s0, ok3 := num(before, "wal_synced_records")
	s1, ok4 := num(after, "wal_synced_records")
	if !(ok1 && ok2 && ok3 && ok4) {
		note := "the server does not report wal_flushes / wal_synced_records in INFO persistence; no group-commit figures"
		if after["aof_enabled"] == "1" {
			note += " (appendonly is on: redis-server fsyncs the AOF per its appendfsync policy)"
		}
		return &durabilityReport{Note: note}
	}
	d := &durabilityReport{Supported: true, Mode: after["durability_mode"],
		Flushes: f1 - f0, SyncedRecords: s1 - s0, Writes: writes}
	denom := writes
	if denom == 0 {
		denom = d.SyncedRecords
	}
	if denom > 0 {
		d.FlushesPerWrite = float64(d.Flushes) / float64(denom)
	}
	if d.Flushes > 0 {
		d.GroupCommitAvg = float64(d.SyncedRecords) / float64(d.Flushes)
	}
	return d
}

func printDurability(w io.Writer, d *durabilityReport) {
	if !d.Supported {
		fmt.Fprintf(w, "durability report: %s\n", d.Note)
		return
	}
	per := "synced record"
	if d.Writes > 0 {
		per = "write"
	}
	fmt.Fprintf(w, "durability report (%s): %d flushes, %d records synced; %.3f flushes per %s; mean group commit %.2f records\n",
		d.Mode, d.Flushes, d.SyncedRecords, d.FlushesPerWrite, per, d.GroupCommitAvg)
}
