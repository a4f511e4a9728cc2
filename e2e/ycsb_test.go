package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// go-ycsb (github.com/pingcap/go-ycsb v1.0.3, whose redis binding uses the
// go-redis v9 release candidate that connects with HELLO 3 and gives up on
// any error but "unknown command") runs unmodified against
// persimmon-server: the binary and its own workload files, with properties
// on the command line only. scripts/go-ycsb.sh (run by .ci/run) builds it
// into bin/tools; PERSIMMON_GO_YCSB names another binary (its workloads in
// a go-ycsb-workloads folder beside it).

const (
	ycsbRecords    = 2000
	ycsbOperations = 4000
	ycsbFields     = 10 // go-ycsb's default fieldcount
)

// goYCSB returns the go-ycsb binary and its workloads folder, or skips or
// fails the test as the other client tests do.
func goYCSB(t *testing.T) (bin, workloads string) {
	t.Helper()
	bin = os.Getenv("PERSIMMON_GO_YCSB")
	if bin == "" {
		bin, _ = filepath.Abs("../bin/tools/go-ycsb")
	}
	workloads = filepath.Join(filepath.Dir(bin), "go-ycsb-workloads")
	if why, err := os.ReadFile(filepath.Join(filepath.Dir(bin), "go-ycsb.unavailable")); err == nil {
		t.Skipf("%s", why)
	}
	_, binErr := os.Stat(bin)
	_, wlErr := os.Stat(filepath.Join(workloads, "workloada"))
	requireClient(t, "go-ycsb ("+bin+")", "scripts/go-ycsb.sh", binErr == nil && wlErr == nil)
	return bin, workloads
}

// ycsbOp matches one operation line of go-ycsb's final report:
// "READ   - Takes(s): 0.1, Count: 988, OPS: ..."
var ycsbOp = regexp.MustCompile(`(?m)^([A-Z_]+)\s+- Takes\(s\): [0-9.]+, Count: (\d+),`)

// runYCSB runs one go-ycsb phase (load or run) and returns the final
// report's count per operation. A non-zero exit (go-ycsb exits with
// status 1 when a value it reads back is not the one it wrote, under
// dataintegrity) or any *_ERROR operation fails the test.
func runYCSB(t *testing.T, bin, workloads, phase, workload, addr string, props ...string) map[string]int {
	t.Helper()
	args := []string{phase, "redis", "-P", filepath.Join(workloads, workload),
		"-p", "redis.addr=" + addr,
		"-p", "recordcount=" + strconv.Itoa(ycsbRecords),
		"-p", "operationcount=" + strconv.Itoa(ycsbOperations),
		"-p", "threadcount=4",
		// every field is a deterministic function of key and field name,
		// checked on every read
		"-p", "dataintegrity=true"}
	for _, p := range props {
		args = append(args, "-p", p)
	}
	cmd := exec.Command(bin, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	runBounded(t, cmd, 2*time.Minute, func() string { return tail(out.String(), 4000) })
	report := out.String()
	if i := strings.LastIndex(report, "Run finished"); i >= 0 {
		report = report[i:]
	} else {
		t.Fatalf("go-ycsb %s %s printed no final report:\n%s", phase, workload, tail(out.String(), 4000))
	}
	counts := map[string]int{}
	for _, m := range ycsbOp.FindAllStringSubmatch(report, -1) {
		n, _ := strconv.Atoi(m[2])
		counts[m[1]] = n
	}
	for op, n := range counts {
		if strings.HasSuffix(op, "_ERROR") {
			t.Fatalf("go-ycsb %s %s: %d %s\n%s", phase, workload, n, op, report)
		}
	}
	return counts
}

// TestGoYCSB: go-ycsb's redis binding loads 2,000 records and runs
// workloads a, b, c and f (4,000 operations each, every value checked on
// read) without an error, with both of its data layouts that need no
// module (hash: HSET/HMGET; string: a JSON document per key with GET/SET).
// The server is killed with SIGKILL after the load and restarted, so the
// workloads read what the load was acknowledged for. Its connections
// speak RESP3 (MONITOR shows each one's HELLO 3, and no command failed).
// Afterwards every record is there with all its fields, with the values
// redis-server holds after the same load. (go-ycsb itself checks only the
// values it finds: the hash layout reads a missing record as an empty
// one.)
func TestGoYCSB(t *testing.T) {
	bin, workloads := goYCSB(t)
	data := t.TempDir()
	s := startServer(t, data)

	layouts := []string{"hash", "string"}
	for _, dt := range layouts {
		c := runYCSB(t, bin, workloads, "load", "workloada", s.Addr, "redis.datatype="+dt, "table=ycsb_"+dt)
		if c["INSERT"] != ycsbRecords {
			t.Fatalf("load (%s): %v, want %d INSERTs", dt, c, ycsbRecords)
		}
	}
	s.kill()
	s = startServer(t, data)

	hellos := monitorHellos(t, s.Addr)
	for _, dt := range layouts {
		for _, wl := range []string{"workloada", "workloadb", "workloadc", "workloadf"} {
			c := runYCSB(t, bin, workloads, "run", wl, s.Addr, "redis.datatype="+dt, "table=ycsb_"+dt)
			if c["TOTAL"] < ycsbOperations || c["READ"] == 0 {
				t.Fatalf("run %s (%s): %v, want %d operations with reads", wl, dt, c, ycsbOperations)
			}
			if wl == "workloadf" && c["READ_MODIFY_WRITE"] == 0 {
				t.Fatalf("run %s (%s): no READ_MODIFY_WRITE: %v", wl, dt, c)
			}
			t.Logf("%s %s: %v", dt, wl, c)
		}
	}

	h := hellos()
	if len(h) == 0 {
		t.Fatal("MONITOR saw no HELLO from go-ycsb's connections")
	}
	for _, line := range h {
		if !strings.Contains(strings.ToLower(line), `"hello" "3"`) {
			t.Fatalf("go-ycsb's HELLO was not HELLO 3: %s", line)
		}
	}
	// A raw connection: go-redis's own connection set-up sends a command
	// Redis 7.0 does not know (CLIENT MAINT_NOTIFICATIONS), which would
	// count in errorstats.
	ic, err := dialRESP(s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer ic.close()
	r, err := ic.do("INFO", "errorstats", "commandstats")
	if err != nil {
		t.Fatal(err)
	}
	info := r.str
	if strings.Contains(info, "errorstat_") {
		t.Fatalf("commands failed during the runs:\n%s", info)
	}
	if m := regexp.MustCompile(`cmdstat_hello:calls=(\d+),.*rejected_calls=0,failed_calls=0`).FindStringSubmatch(info); m == nil {
		t.Fatalf("no successful HELLO in commandstats:\n%s", info)
	}

	// Every record of both layouts is there, whole, and as redis-server
	// has it after the same load: under dataintegrity a field's value is a
	// function of its key and name alone, so the updates of the runs
	// rewrite the values the load wrote, whatever their order.
	ref := redis.NewClient(&redis.Options{Addr: startRedis(t), DisableIdentity: true})
	defer ref.Close()
	for _, dt := range layouts {
		runYCSB(t, bin, workloads, "load", "workloada", ref.Options().Addr, "redis.datatype="+dt, "table=ycsb_"+dt)
	}
	rc := s.client()
	for _, dt := range layouts {
		keys, err := rc.Keys(ctx, "ycsb_"+dt+"/user*").Result()
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) != ycsbRecords {
			t.Fatalf("%s layout: %d records, want %d", dt, len(keys), ycsbRecords)
		}
		for _, k := range keys {
			got, want := ycsbRecord(t, rc, dt, k), ycsbRecord(t, ref, dt, k)
			if len(got) != ycsbFields || !reflect.DeepEqual(got, want) {
				t.Fatalf("%s (%s layout) on persimmon-server:\n%q\nredis-server:\n%q", k, dt, got, want)
			}
		}
	}
}

// ycsbRecord reads one go-ycsb record as field -> value.
func ycsbRecord(t *testing.T, c *redis.Client, layout, key string) map[string]string {
	t.Helper()
	if layout == "hash" {
		m, err := c.HGetAll(ctx, key).Result()
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		return m
	}
	doc, err := c.Get(ctx, key).Result()
	if err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	var fields map[string][]byte
	if err := json.Unmarshal([]byte(doc), &fields); err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	m := map[string]string{}
	for f, v := range fields {
		m[f] = string(v)
	}
	return m
}

// monitorHellos opens a MONITOR connection to addr and returns a function
// that gives the HELLO lines it has seen up to the moment it is called.
func monitorHellos(t *testing.T, addr string) func() []string {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	r := bufio.NewReader(nc)
	fmt.Fprint(nc, "MONITOR\r\n")
	if line, err := r.ReadString('\n'); err != nil || line != "+OK\r\n" {
		t.Fatalf("MONITOR: %q %v", line, err)
	}
	const mark = "persimmon-ycsb-mark"
	var mu sync.Mutex
	var hellos []string
	marked := make(chan struct{})
	go func() {
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			// MONITOR shows arguments as sent; command names in any case
			switch lower := strings.ToLower(line); {
			case strings.Contains(lower, `] "hello"`):
				mu.Lock()
				hellos = append(hellos, strings.TrimSpace(line))
				mu.Unlock()
			case strings.Contains(lower, `] "echo" "`+mark+`"`):
				close(marked)
				return
			}
		}
	}()
	return func() []string {
		// Monitors see commands in the order they ran: once the ECHO
		// sent now shows, every HELLO before it has.
		c, err := dialRESP(addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.close()
		if _, err := c.do("ECHO", mark); err != nil {
			t.Fatal(err)
		}
		select {
		case <-marked:
		case <-time.After(10 * time.Second):
			t.Fatal("MONITOR did not show the ECHO within 10 s")
		}
		mu.Lock()
		defer mu.Unlock()
		return hellos
	}
}
