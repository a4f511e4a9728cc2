package e2e

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// sentinelPorts are loopback ports of this test (by default 26100-26899;
// PERSIMMON_TEST_PORTS=lo-hi gives another range, e.g. the one a helper
// of the session was given, so parallel runs do not take each other's
// ports): three servers and a sentinel, fixed because a restarted server
// must come back on its port for Sentinel to know it again.
func sentinelPorts(t *testing.T, n int) []int {
	t.Helper()
	lo, hi := 26100, 26899
	if v := os.Getenv("PERSIMMON_TEST_PORTS"); v != "" {
		a, b, _ := strings.Cut(v, "-")
		var errA, errB error
		lo, errA = strconv.Atoi(a)
		hi, errB = strconv.Atoi(b)
		if errA != nil || errB != nil || lo > hi {
			t.Fatalf("PERSIMMON_TEST_PORTS=%q: want lo-hi", v)
		}
	}
	var out []int
	for p := lo; p <= hi && len(out) < n; p++ {
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			continue
		}
		l.Close()
		out = append(out, p)
	}
	if len(out) < n {
		t.Fatalf("no %d free ports in %d-%d", n, lo, hi)
	}
	return out
}

func startServerOn(t *testing.T, dir string, port int, args ...string) *server {
	t.Helper()
	conf := filepath.Join(dir, "persimmon.conf")
	if _, err := os.Stat(conf); err != nil {
		if err := os.WriteFile(conf, []byte("# written by TestSentinelFailover\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := startServer(t, dir, append([]string{"--config", conf, "--port", strconv.Itoa(port)}, args...)...)
	s.Addr = fmt.Sprintf("127.0.0.1:%d", port)
	return s
}

// startSentinel runs redis-sentinel (or redis-server --sentinel, the
// same program) monitoring mymaster at masterPort with quorum 1.
func startSentinel(t *testing.T, port, masterPort int) (*redis.Client, string) {
	t.Helper()
	return startSentinelConf(t, port, masterPort, 2000, 10000)
}

// startSentinelConf is startSentinel with down-after-milliseconds and
// failover-timeout (Sentinel starts no second failover of a master
// within twice failover-timeout of the last).
func startSentinelConf(t *testing.T, port, masterPort, downAfterMs, failoverTimeoutMs int) (*redis.Client, string) {
	t.Helper()
	dir := t.TempDir()
	conf := filepath.Join(dir, "sentinel.conf")
	logf := filepath.Join(dir, "sentinel.log")
	text := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nlogfile %s\n"+
		"sentinel monitor mymaster 127.0.0.1 %d 1\n"+
		"sentinel down-after-milliseconds mymaster %d\n"+
		"sentinel failover-timeout mymaster %d\n"+
		"sentinel parallel-syncs mymaster 2\n", port, dir, logf, masterPort, downAfterMs, failoverTimeoutMs)
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	var cmd *exec.Cmd
	if p, err := exec.LookPath("redis-sentinel"); err == nil {
		cmd = exec.Command(p, conf)
	} else {
		cmd = exec.Command("redis-server", conf, "--sentinel")
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(logf)
			t.Logf("sentinel log:\n%s", b)
		}
	})
	c := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", port), MaxRetries: -1})
	t.Cleanup(func() { c.Close() })
	pollFor(t, "the sentinel to answer", 20*time.Second, func() bool { return c.Ping(ctx).Err() == nil })
	return c, logf
}

// masterAddr asks the sentinel where mymaster is.
func masterAddr(s *redis.Client) string {
	v, err := s.Do(ctx, "SENTINEL", "get-master-addr-by-name", "mymaster").StringSlice()
	if err != nil || len(v) != 2 {
		return ""
	}
	return v[0] + ":" + v[1]
}

// TestSentinelFailover: an unmodified redis-sentinel monitors a Persimmon
// master with two Persimmon replicas. After kill -9 of the master it
// promotes a replica (REPLICAOF NO ONE in its MULTI with CONFIG REWRITE
// and CLIENT KILL), reconfigures the other to replicate from it,
// SENTINEL get-master-addr-by-name and go-redis's FailoverClient follow,
// every write acknowledged with WAIT 2 before the kill is on the new
// master, and the old master, restarted on its port, is turned into a
// replica of the new one and ends with its data.
func TestSentinelFailover(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not installed")
	}
	ports := sentinelPorts(t, 4)
	mp, sp := ports[0], ports[3]
	dirs := []string{t.TempDir(), t.TempDir(), t.TempDir()}
	servers := make([]*server, 3)
	servers[0] = startServerOn(t, dirs[0], mp)
	for i := 1; i < 3; i++ {
		servers[i] = startServerOn(t, dirs[i], ports[i], "--replicaof", "127.0.0.1", strconv.Itoa(mp))
	}
	clients := make([]*redis.Client, 3)
	for i, s := range servers {
		clients[i] = redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: 3, DisableIdentity: true})
		defer clients[i].Close()
	}
	for i := range 100 {
		if err := clients[0].Set(ctx, "before:"+strconv.Itoa(i), i, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := clients[0].Wait(ctx, 2, 10*time.Second).Result(); err != nil || n != 2 {
		t.Fatalf("WAIT 2: %d %v", n, err)
	}

	t.Cleanup(func() {
		if t.Failed() {
			for i, s := range servers {
				t.Logf("server %d (%s) log:\n%s", i, s.Addr, s.log.String())
			}
		}
	})
	sent, slog := startSentinel(t, sp, mp)
	pollFor(t, "the sentinel to find both replicas", 30*time.Second, func() bool {
		reps, err := sent.Do(ctx, "SENTINEL", "replicas", "mymaster").Slice()
		return err == nil && len(reps) == 2
	})
	fc := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: "mymaster", SentinelAddrs: []string{fmt.Sprintf("127.0.0.1:%d", sp)},
		MaxRetries: 10, DisableIdentity: true})
	defer fc.Close()
	if err := fc.Set(ctx, "via-failover-client", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	acked := 0
	for i := range 50 {
		if err := clients[0].Incr(ctx, "acked").Err(); err != nil {
			t.Fatal(err)
		}
		if n, err := clients[0].Wait(ctx, 2, 10*time.Second).Result(); err == nil && n == 2 {
			acked = i + 1
		}
	}
	if acked != 50 {
		t.Fatalf("WAIT 2 acknowledged %d of 50 writes", acked)
	}

	servers[0].kill()
	old := fmt.Sprintf("127.0.0.1:%d", mp)
	var newAddr string
	pollFor(t, "the sentinel to promote a replica", 60*time.Second, func() bool {
		newAddr = masterAddr(sent)
		return newAddr != "" && newAddr != old
	})
	var nm, other *redis.Client
	for i := 1; i < 3; i++ {
		if servers[i].Addr == newAddr {
			nm, other = clients[i], clients[3-i]
		}
	}
	if nm == nil {
		t.Fatalf("sentinel names %s, not one of the replicas", newAddr)
	}
	role, err := nm.Do(ctx, "ROLE").Slice()
	if err != nil || role[0] != "master" {
		t.Fatalf("ROLE of the promoted replica: %v %v", role, err)
	}
	if v, _ := nm.Get(ctx, "acked").Int(); v != acked {
		t.Fatalf("the new master has acked=%d, %d writes were acknowledged by WAIT 2", v, acked)
	}
	_, newPort, _ := strings.Cut(newAddr, ":")
	pollFor(t, "the other replica to follow the new master", 60*time.Second, func() bool {
		return replInfo(other, "replication", "master_port") == newPort && replInfo(other, "replication", "master_link_status") == "up"
	})
	// PSYNC2: the other replica went on from its position under the
	// promoted one's replid2, with no full resync.
	if v := replInfo(nm, "stats", "sync_partial_ok"); v != "1" || replInfo(nm, "stats", "sync_full") != "0" {
		t.Errorf("the new master served %s partial and %s full resyncs, want 1 and 0", v, replInfo(nm, "stats", "sync_full"))
	}
	if err := fc.Set(ctx, "after", "x", 0).Err(); err != nil {
		t.Fatalf("FailoverClient after the failover: %v", err)
	}
	pollFor(t, "the other replica to have the new master's write", 30*time.Second, func() bool {
		v, _ := other.Get(ctx, "after").Result()
		return v == "x"
	})

	// The old master comes back on its port: Sentinel turns it into a
	// replica of the new one.
	servers[0] = startServerOn(t, dirs[0], mp)
	back := redis.NewClient(&redis.Options{Addr: old, MaxRetries: 3, DisableIdentity: true})
	defer back.Close()
	// Where the sentinel says the master is now (a loaded machine may
	// see a second failover; the old master must follow whichever).
	current := func() *redis.Client {
		addr := masterAddr(sent)
		for i := 1; i < 3; i++ {
			if servers[i].Addr == addr {
				return clients[i]
			}
		}
		return nil
	}
	pollFor(t, "the old master to rejoin as a replica", 60*time.Second, func() bool {
		cur := current()
		_, port, _ := strings.Cut(masterAddr(sent), ":")
		return cur != nil && replInfo(back, "replication", "role") == "slave" && replInfo(back, "replication", "master_port") == port &&
			caughtUp(cur, back)
	})
	nm = current()
	n := sameData(t, nm, back)
	sameData(t, nm, other)
	b, _ := os.ReadFile(slog)
	for _, ev := range []string{"+odown", "+promoted-slave", "+switch-master"} {
		if !strings.Contains(string(b), ev) {
			t.Errorf("sentinel log has no %s", ev)
		}
	}
	t.Logf("failover to %s; %d keys on all three; sentinel events:\n%s", newAddr, n, grepLines(string(b), "+"))
}

// grepLines returns the lines of s containing sub.
func grepLines(s, sub string) string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		if strings.Contains(sc.Text(), sub) {
			out = append(out, sc.Text())
		}
	}
	return strings.Join(out, "\n")
}
