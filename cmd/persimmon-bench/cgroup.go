package main

import (
	"fmt"
	"io"
	"net"
	"strconv"
	"sync/atomic"
	"time"
)

// The cgroup workload: stream consumers in one consumer group, as a work
// queue runs them. Each connection is a consumer (consumer-<n>) that
// loops
//
//	XREADGROUP GROUP group consumer-<n> COUNT count STREAMS key >
//	XACK key group id ...      (the IDs that reply delivered)
//
// so each XACK carries the IDs of the reply before it, which a template
// cannot express. Both commands count as requests (the run's operations
// are the commands sent, as for resp). The stream and the group must
// exist with entries enough for the run (a load phase: resp --load
// "XADD key * ..." and XGROUP CREATE key group 0); a read that finds
// nothing left is an error ("stream exhausted") and ends that consumer.

// errExhausted is the error a consumer records when the group has nothing
// left to deliver.
const errExhausted = "stream exhausted: nothing left for the group (load more entries)"

type cgroupOpts struct {
	addr, auth string
	workers    int
	total      int64 // commands (XREADGROUP and XACK) to send, 0: until dur
	dur        time.Duration
	count      int
	key, group string
	progress   io.Writer
}

// runCgroup runs o.workers consumers until o.total commands were sent or
// o.dur has passed.
func runCgroup(o cgroupOpts) (*result, error) {
	if o.workers < 1 {
		o.workers = 1
	}
	if o.count < 1 {
		o.count = 1
	}
	if o.dur <= 0 && o.total <= 0 {
		return nil, fmt.Errorf("need a duration or a command count")
	}
	var issued atomic.Int64
	res, err := runConns(o.addr, o.auth, o.workers, "cgroup", o.progress, o.dur,
		func(i int, c *conn, rec *recorder, deadline time.Time, stop *atomic.Bool) error {
			return consume(c, "consumer-"+strconv.Itoa(i), o, rec, deadline, stop, &issued)
		})
	if err != nil {
		return nil, err
	}
	res.Workers, res.Pipeline = o.workers, 1
	res.Server = o.addr
	return res, nil
}

// consume is one consumer's loop: a read, then the acknowledgement of what
// it delivered, until the budget, the deadline, an exhausted group or a
// stop.
func consume(c *conn, consumer string, o cgroupOpts, rec *recorder, deadline time.Time,
	stop *atomic.Bool, issued *atomic.Int64) error {
	read := [][]byte{[]byte("XREADGROUP"), []byte("GROUP"), []byte(o.group), []byte(consumer),
		[]byte("COUNT"), []byte(strconv.Itoa(o.count)), []byte("STREAMS"), []byte(o.key), []byte(">")}
	ack := [][]byte{[]byte("XACK"), []byte(o.key), []byte(o.group)}
	var ids []byte // the delivered IDs, back to back
	var ends []int
	for !stop.Load() {
		if o.total > 0 && issued.Add(2) > o.total {
			return nil
		}
		if o.dur > 0 && time.Now().After(deadline) {
			return nil
		}
		t0 := time.Now()
		c.writeArgs(read)
		if err := c.flush(); err != nil {
			return err
		}
		var msg string
		var err error
		ids, ends, msg, err = c.readStreamIDs(ids[:0], ends[:0])
		if err != nil {
			return err
		}
		if msg == "" && len(ends) == 0 {
			msg = errExhausted
		}
		if msg != "" {
			rec.record("XREADGROUP", time.Since(t0), 1, 1, msg)
			return nil // an error reply or nothing left: this consumer is done
		}
		rec.record("XREADGROUP", time.Since(t0), 1, 0, "")
		args := ack
		for i, end := range ends {
			from := 0
			if i > 0 {
				from = ends[i-1]
			}
			args = append(args, ids[from:end])
		}
		t0 = time.Now()
		c.writeArgs(args)
		if err := c.flush(); err != nil {
			return err
		}
		rep, err := c.read()
		if err != nil {
			return err
		}
		switch {
		case rep.isErr():
			rec.record("XACK", time.Since(t0), 1, 1, rep.msg)
		case rep.kind != ':' || rep.n != int64(len(ends)):
			rec.record("XACK", time.Since(t0), 1, 1,
				fmt.Sprintf("XACK of %d delivered IDs acknowledged %d", len(ends), rep.n))
		default:
			rec.record("XACK", time.Since(t0), 1, 0, "")
		}
	}
	return nil
}

// readStreamIDs reads an XREADGROUP (or XREAD) reply in RESP2, appending
// the ID of every entry it holds to ids (ends marks where each ends) and
// discarding the rest; a null reply appends nothing. An error reply is
// returned as msg.
func (c *conn) readStreamIDs(ids []byte, ends []int) ([]byte, []int, string, error) {
	line, err := c.line()
	if err != nil {
		return ids, ends, "", err
	}
	switch line[0] {
	case '-':
		return ids, ends, string(line[1:]), nil
	case '*':
	default:
		return ids, ends, "", fmt.Errorf("XREADGROUP: unexpected reply %q", line)
	}
	streams, err := strconv.Atoi(string(line[1:]))
	if err != nil {
		return ids, ends, "", fmt.Errorf("protocol error: %q", line)
	}
	for range max(streams, 0) {
		// *2, the key, then the entries.
		if n, err := c.arrayLen(); err != nil || n != 2 {
			return ids, ends, "", fmt.Errorf("XREADGROUP: a stream is not [key, entries] (%v)", err)
		}
		if _, err := c.read(); err != nil {
			return ids, ends, "", err
		}
		entries, err := c.arrayLen()
		if err != nil {
			return ids, ends, "", err
		}
		for range max(entries, 0) {
			if n, err := c.arrayLen(); err != nil || n != 2 {
				return ids, ends, "", fmt.Errorf("XREADGROUP: an entry is not [id, fields] (%v)", err)
			}
			id, err := c.line()
			if err != nil {
				return ids, ends, "", err
			}
			n, perr := strconv.Atoi(string(id[1:]))
			if id[0] != '$' || perr != nil || n < 0 {
				return ids, ends, "", fmt.Errorf("XREADGROUP: entry ID %q", id)
			}
			start := len(ids)
			ids = append(ids, make([]byte, n+2)...)
			if _, err := io.ReadFull(c.r, ids[start:]); err != nil {
				return ids, ends, "", err
			}
			ids = ids[:start+n]
			ends = append(ends, len(ids))
			if _, err := c.read(); err != nil { // the fields
				return ids, ends, "", err
			}
		}
	}
	return ids, ends, "", nil
}

// arrayLen reads an array header and returns its length (-1: null).
func (c *conn) arrayLen() (int, error) {
	line, err := c.line()
	if err != nil {
		return 0, err
	}
	if line[0] != '*' {
		return 0, fmt.Errorf("not an array: %q", line)
	}
	return strconv.Atoi(string(line[1:]))
}

func runCgroupCmd(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("cgroup", stderr)
	host := fs.String("h", "127.0.0.1", "host")
	port := fs.Int("p", 6379, "port")
	auth := fs.String("a", "", "password (user:password sent as one AUTH argument)")
	conns := fs.Int("c", 32, "connections (consumers)")
	fs.IntVar(conns, "C", 32, "connections (consumers)")
	n := fs.Int64("n", 0, "commands to send, XREADGROUP and XACK each counting one (0: until -s)")
	secs := fs.Float64("s", 0, "seconds (0: until -n; 10 if neither)")
	count := fs.Int("count", 10, "XREADGROUP COUNT")
	key := fs.String("key", "stream", "the stream's key")
	group := fs.String("group", "group", "the consumer group")
	var cm common
	cm.register(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "cgroup: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if *n <= 0 && *secs <= 0 {
		*secs = 10
	}
	addr := net.JoinHostPort(*host, strconv.Itoa(*port))
	o := cgroupOpts{addr: addr, auth: *auth, workers: *conns, total: *n,
		dur: time.Duration(*secs * float64(time.Second)), count: *count, key: *key, group: *group}
	if !cm.quiet {
		o.progress = stderr
	}
	res, err := withDurability(cm.durability, addr, *auth, stderr, func() (*result, error) { return runCgroup(o) },
		func(r *result) int64 { return r.Ops - r.Errors })
	if err != nil {
		fmt.Fprintf(stderr, "cgroup: %v\n", err)
		return 1
	}
	res.Tool = "cgroup"
	res.Command = fmt.Sprintf("XREADGROUP GROUP %s <consumer> COUNT %d STREAMS %s > + XACK", *group, *count, *key)
	if cm.json {
		printJSON(stdout, res)
		return 0
	}
	fmt.Fprintf(stdout, "=== %s: %d consumers, server %s\n", res.Command, o.workers, addr)
	printSummary(stdout, res)
	return 0
}
