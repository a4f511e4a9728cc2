package main

import (
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// builder produces the arguments of the next command; the slices are valid
// until the next call. Each worker has its own builder.
type builder interface {
	build(r *rand.Rand) [][]byte
}

type runOpts struct {
	addr, auth string
	workers    int
	dur        time.Duration // stop after this long (0: no limit)
	total      int64         // stop after this many commands (0: no limit)
	pipeline   int           // commands per round trip
	multi      bool          // wrap each round trip's commands in MULTI … EXEC
	progress   io.Writer     // live line once a second (nil: none)
	label      string
	// keepGoingOnUnsupported disables the early stop when the server answers
	// "unknown command".
	keepGoingOnUnsupported bool
}

// runPipelined runs o.workers connections, each sending batches of
// o.pipeline commands per round trip, until the duration or the command count
// is reached or the server reports the command unknown.
func runPipelined(o runOpts, newBuilder func() builder) (*result, error) {
	if o.workers < 1 {
		o.workers = 1
	}
	if o.pipeline < 1 {
		o.pipeline = 1
	}
	if o.dur <= 0 && o.total <= 0 {
		return nil, fmt.Errorf("need a duration or a command count")
	}
	var (
		unsupported atomic.Bool
		issued      atomic.Int64
	)
	builders := make([]builder, o.workers) // made here: newBuilder need not be safe for concurrent use
	for i := range builders {
		builders[i] = newBuilder()
	}
	res, err := runConns(o.addr, o.auth, o.workers, o.label, o.progress, o.dur,
		func(i int, c *conn, rec *recorder, deadline time.Time, stop *atomic.Bool) error {
			r := rand.New(rand.NewPCG(uint64(i+1), uint64(time.Now().UnixNano())))
			return runWorker(c, builders[i], r, rec, o, deadline, stop, &unsupported, &issued)
		})
	if err != nil {
		return nil, err
	}
	res.Workers, res.Pipeline = o.workers, o.pipeline
	res.Server = o.addr
	res.Unsupported = unsupported.Load()
	return res, nil
}

func runWorker(c *conn, b builder, r *rand.Rand, rec *recorder, o runOpts, deadline time.Time,
	stop, unsupported *atomic.Bool, issued *atomic.Int64) error {
	multi, exec := []byte("MULTI"), []byte("EXEC")
	name := ""
	for !stop.Load() {
		k := int64(o.pipeline)
		if o.total > 0 {
			end := issued.Add(k)
			if end-k >= o.total {
				return nil
			}
			if end > o.total {
				k -= end - o.total
			}
		}
		if o.dur > 0 && time.Now().After(deadline) {
			return nil
		}
		if o.multi {
			c.write(multi)
		}
		for i := int64(0); i < k; i++ {
			args := b.build(r)
			if name == "" {
				name = strings.ToUpper(string(args[0]))
			}
			c.writeArgs(args)
		}
		if o.multi {
			c.write(exec)
		}
		t0 := time.Now()
		if err := c.flush(); err != nil {
			return err
		}
		var errs int64
		msg := ""
		note := func(m string, n int64) {
			if errs == 0 {
				msg = m
			}
			errs += n
		}
		if o.multi {
			rep, err := c.read() // +OK for MULTI
			if err != nil {
				return err
			}
			if rep.isErr() {
				note(rep.msg, 0)
			}
			queuedErrs := int64(0)
			for i := int64(0); i < k; i++ {
				rep, err := c.read() // +QUEUED
				if err != nil {
					return err
				}
				if rep.isErr() {
					note(rep.msg, 1)
					queuedErrs++
				}
			}
			rep, err = c.read() // EXEC
			if err != nil {
				return err
			}
			switch {
			case rep.isErr():
				note(rep.msg, k-queuedErrs)
			case rep.kind == '*' && rep.n < 0:
				note("EXEC aborted (nil reply)", k-queuedErrs)
			default:
				if rep.errs > 0 {
					note(rep.firstErr, int64(rep.errs))
				}
			}
		} else {
			for i := int64(0); i < k; i++ {
				rep, err := c.read()
				if err != nil {
					return err
				}
				if rep.isErr() {
					note(rep.msg, 1)
				}
			}
		}
		rec.record(name, time.Since(t0), k, errs, msg)
		if errs > 0 && !o.keepGoingOnUnsupported && isUnsupported(msg) {
			unsupported.Store(true)
			stop.Store(true)
		}
	}
	return nil
}

// dialAll opens n connections (authenticated with auth when set); on an
// error it closes the ones already open.
func dialAll(addr, auth string, n int) ([]*conn, error) {
	conns := make([]*conn, n)
	for i := range conns {
		c, err := dial(addr, auth)
		if err != nil {
			closeAll(conns[:i])
			return nil, err
		}
		conns[i] = c
	}
	return conns, nil
}

func closeAll(conns []*conn) {
	for _, c := range conns {
		c.Close()
	}
}

// runConns dials n connections and runs worker on each in a goroutine of
// its own (i is the connection's index, rec its recorder, deadline start
// plus dur) until every worker has returned. The first error sets stop, so
// the others end too, and is returned. While they run a progress line
// under label goes to prog once a second (nil: none). The result merges
// every connection's recorder over the elapsed time.
func runConns(addr, auth string, n int, label string, prog io.Writer, dur time.Duration,
	worker func(i int, c *conn, rec *recorder, deadline time.Time, stop *atomic.Bool) error) (*result, error) {
	conns, err := dialAll(addr, auth, n)
	if err != nil {
		return nil, err
	}
	defer closeAll(conns)
	live := &liveCounters{}
	var (
		stop     atomic.Bool
		wg       sync.WaitGroup
		errMu    sync.Mutex
		firstErr error
	)
	recs := make([]*recorder, n)
	start := time.Now()
	deadline := start.Add(dur)
	stopProgress := make(chan struct{})
	var pwg sync.WaitGroup
	if prog != nil {
		pwg.Add(1)
		go progress(prog, label, live, start, stopProgress, &pwg)
	}
	for i := range conns {
		recs[i] = newRecorder(live)
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if err := worker(i, conns[i], recs[i], deadline, &stop); err != nil {
				errMu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				errMu.Unlock()
				stop.Store(true)
			}
		}(i)
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(stopProgress)
	pwg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	return merge(recs, elapsed), nil
}
