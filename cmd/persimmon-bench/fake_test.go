package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// fakeServer is a small in-process RESP server that records every command it
// receives. Replies: AUTH succeeds only for the single argument "user:pass";
// MULTI/EXEC queue and execute; FAIL and "MAYBE 1" return errors; NOPE is an
// unknown command; INFO reports wal_flushes / wal_synced_records counters;
// everything else answers +OK (GET answers a bulk string).
type fakeServer struct {
	ln       net.Listener
	mu       sync.Mutex
	cmds     map[string]int
	auths    [][]string
	execs    int
	failures int
	keys     map[string]bool
	argc     map[string]int // last argument count seen per command
	flushes  int64
	records  int64
	noWAL    bool
	wg       sync.WaitGroup
	// One stream for XADD, XREADGROUP and XACK (every key and group is
	// that one): the entries not yet delivered, and per ID how often it was
	// delivered and acknowledged.
	undelivered []string
	xadds       int
	delivered   map[string]int
	acked       map[string]int
}

func startFake(t *testing.T) *fakeServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeServer{ln: ln, cmds: map[string]int{}, keys: map[string]bool{}, argc: map[string]int{},
		delivered: map[string]int{}, acked: map[string]int{}}
	f.wg.Add(1)
	go f.accept()
	t.Cleanup(func() { ln.Close(); f.wg.Wait() })
	return f
}

func (f *fakeServer) addr() string { return f.ln.Addr().String() }

func (f *fakeServer) port() string {
	_, p, _ := net.SplitHostPort(f.addr())
	return p
}

func (f *fakeServer) accept() {
	defer f.wg.Done()
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			f.serve(c)
		}()
	}
}

func readCommand(r *bufio.Reader) ([]string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(line, "*") {
		return nil, fmt.Errorf("not an array: %q", line)
	}
	n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
	args := make([]string, n)
	for i := range args {
		hdr, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		l, _ := strconv.Atoi(strings.TrimSpace(hdr[1:]))
		buf := make([]byte, l+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		args[i] = string(buf[:l])
	}
	return args, nil
}

func (f *fakeServer) serve(c net.Conn) {
	defer c.Close()
	r, w := bufio.NewReader(c), bufio.NewWriter(c)
	var queue [][]string
	inMulti := false
	for {
		args, err := readCommand(r)
		if err != nil {
			return
		}
		name := strings.ToUpper(args[0])
		f.mu.Lock()
		f.cmds[name]++
		f.argc[name] = len(args)
		if name == "AUTH" {
			f.auths = append(f.auths, args[1:])
		}
		f.mu.Unlock()
		switch {
		case name == "MULTI":
			inMulti, queue = true, nil
			w.WriteString("+OK\r\n")
		case name == "EXEC":
			f.mu.Lock()
			f.execs++
			f.mu.Unlock()
			fmt.Fprintf(w, "*%d\r\n", len(queue))
			for _, q := range queue {
				w.WriteString(f.exec(q))
			}
			inMulti, queue = false, nil
		case inMulti && name != "NOPE":
			queue = append(queue, args)
			w.WriteString("+QUEUED\r\n")
		default:
			w.WriteString(f.exec(args))
		}
		if r.Buffered() == 0 {
			w.Flush()
		}
	}
}

func (f *fakeServer) exec(args []string) string {
	name := strings.ToUpper(args[0])
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(args) > 1 {
		f.keys[args[1]] = true
	}
	switch name {
	case "AUTH":
		if len(args) == 2 && args[1] == "user:pass" {
			return "+OK\r\n"
		}
		return "-WRONGPASS invalid username-password pair or user is disabled.\r\n"
	case "FAIL":
		f.failures++
		return "-ERR failing on purpose\r\n"
	case "MAYBE":
		if args[1] == "1" {
			f.failures++
			return "-ERR odd one\r\n"
		}
		return ":0\r\n"
	case "NOPE":
		return "-ERR unknown command 'NOPE', with args beginning with: \r\n"
	case "GET":
		return "$3\r\nabc\r\n"
	case "INFO":
		var b strings.Builder
		b.WriteString("# Persistence\r\naof_enabled:0\r\n")
		if !f.noWAL {
			fmt.Fprintf(&b, "wal_flushes:%d\r\nwal_synced_records:%d\r\n", f.flushes, f.records)
		}
		return fmt.Sprintf("$%d\r\n%s\r\n", b.Len(), b.String())
	case "XADD":
		f.xadds++
		id := fmt.Sprintf("%d-0", f.xadds)
		f.undelivered = append(f.undelivered, id)
		return bulkReply(id)
	case "XREADGROUP": // GROUP g consumer COUNT n STREAMS key >
		n, _ := strconv.Atoi(args[5])
		n = min(n, len(f.undelivered))
		if n == 0 {
			return "*-1\r\n"
		}
		var b strings.Builder
		fmt.Fprintf(&b, "*1\r\n*2\r\n%s*%d\r\n", bulkReply(args[7]), n)
		for _, id := range f.undelivered[:n] {
			f.delivered[id]++
			fmt.Fprintf(&b, "*2\r\n%s*2\r\n%s%s", bulkReply(id), bulkReply("field"), bulkReply("value-"+id))
		}
		f.undelivered = f.undelivered[n:]
		return b.String()
	case "XACK": // key group id ...
		n := 0
		for _, id := range args[3:] {
			if f.delivered[id] > 0 && f.acked[id] == 0 {
				n++
			}
			f.acked[id]++
		}
		return fmt.Sprintf(":%d\r\n", n)
	case "SET", "HSET", "RPUSH", "SADD", "ZADD", "LSET":
		f.records++
		if f.records%4 == 0 {
			f.flushes++
		}
		return "+OK\r\n"
	}
	return "+OK\r\n"
}

func bulkReply(s string) string { return fmt.Sprintf("$%d\r\n%s\r\n", len(s), s) }

func (f *fakeServer) count(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cmds[name]
}
