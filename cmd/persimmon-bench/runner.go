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
	conns, err := dialAll(o.addr, o.auth, o.workers)
	if err != nil {
		return nil, err
	}
	defer closeAll(conns)

	live := &liveCounters{}
	var (
		stop        atomic.Bool
		unsupported atomic.Bool
		issued      atomic.Int64
		wg          sync.WaitGroup
		errMu       sync.Mutex
		firstErr    error
	)
	recs := make([]*recorder, o.workers)
	start := time.Now()
	deadline := start.Add(o.dur)
	stopProgress := make(chan struct{})
	var pwg sync.WaitGroup
	if o.progress != nil {
		pwg.Add(1)
		go progress(o.progress, o.label, live, start, stopProgress, &pwg)
	}
	for i := range conns {
		rec := newRecorder(live)
		recs[i] = rec
		b := newBuilder()
		wg.Add(1)
		go func(c *conn, seed uint64) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, uint64(time.Now().UnixNano())))
			err := runWorker(c, b, r, rec, o, deadline, &stop, &unsupported, &issued)
			if err != nil {
				errMu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				errMu.Unlock()
				stop.Store(true)
			}
		}(conns[i], uint64(i+1))
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(stopProgress)
	pwg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	res := merge(recs, elapsed)
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
