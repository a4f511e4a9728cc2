package e2e

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// Operators' tools read INFO. Redis's prometheus exporter
// (oliver006/redis_exporter) turns every numeric INFO field into a metric
// family and reads a few more by name, so a field missing from Persimmon's
// INFO is a family missing from its dashboards.
//
// The exporter is not on the Go module proxy (every version of
// github.com/oliver006/redis_exporter answers 403 or has no checksum
// there), so it is not built here: TestRedisExporterFamilies runs when
// PERSIMMON_REDIS_EXPORTER names a binary, and TestInfoFieldsMatchRedis,
// which always runs, checks what the exporter reads: INFO's fields.

// infoFields returns the field names of INFO everything, in order, leaving
// out the per-command, per-error and per-database lines (their names
// depend on what ran).
func infoFields(t *testing.T, addr string) []string {
	t.Helper()
	c, err := dialRESP(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	r, err := c.do("INFO", "everything")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, line := range strings.Split(r.str, "\r\n") {
		name, _, ok := strings.Cut(line, ":")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(name, "cmdstat_") || strings.HasPrefix(name, "errorstat_") ||
			strings.HasPrefix(name, "latency_percentiles_usec_") || strings.HasPrefix(name, "db") && strings.Contains(line, "keys=") {
			continue
		}
		names = append(names, name)
	}
	return names
}

// exporterWorkload gives both servers the same few keys and commands, so
// that the sections that list what exists (keyspace, commandstats) are
// not empty.
func exporterWorkload(t *testing.T, addr string) {
	t.Helper()
	c, err := dialRESP(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	for _, cmd := range [][]any{{"SET", "k", "1"}, {"SET", "e", "v", "EX", "100"}, {"GET", "k"}, {"INCR", "k"},
		{"HSET", "h", "f", "v"}, {"LPUSH", "l", "a"}, {"GET", "nokey"}, {"INCR", "h"}} {
		if _, err := c.do(cmd...); err != nil {
			t.Fatal(err)
		}
	}
}

// TestInfoFieldsMatchRedis: every field of redis-server 7.0.15's INFO
// everything is in Persimmon's, in Redis's order (Persimmon's own fields
// may stand between them), replication's included.
func TestInfoFieldsMatchRedis(t *testing.T) {
	ref := startRedis(t)
	s := startServer(t, t.TempDir())
	exporterWorkload(t, ref)
	exporterWorkload(t, s.Addr)
	want, got := infoFields(t, ref), infoFields(t, s.Addr)
	var missing []string
	for _, f := range want {
		if !slices.Contains(got, f) {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		t.Fatalf("INFO everything lacks %d of redis-server's fields: %s", len(missing), strings.Join(missing, " "))
	}
	var common []string
	for _, f := range got {
		if slices.Contains(want, f) {
			common = append(common, f)
		}
	}
	if !slices.Equal(common, want) {
		t.Fatalf("INFO's fields are not in redis-server's order:\npersimmon: %s\nredis:     %s", strings.Join(common, " "), strings.Join(want, " "))
	}
}

// TestRedisExporterFamilies: redis_exporter (PERSIMMON_REDIS_EXPORTER)
// scraping Persimmon reports every metric family it reports for
// redis-server 7.0.15 after the same commands, replication's aside.
func TestRedisExporterFamilies(t *testing.T) {
	bin := os.Getenv("PERSIMMON_REDIS_EXPORTER")
	if bin == "" {
		t.Skip("PERSIMMON_REDIS_EXPORTER names no redis_exporter binary (it is not on the Go module proxy); TestInfoFieldsMatchRedis checks the INFO fields it reads")
	}
	ref := startRedis(t)
	s := startServer(t, t.TempDir())
	exporterWorkload(t, ref)
	exporterWorkload(t, s.Addr)
	want, got := exporterFamilies(t, bin, ref), exporterFamilies(t, bin, s.Addr)
	var missing []string
	for f := range want {
		if !got[f] && !replicationFamily(f) {
			missing = append(missing, f)
		}
	}
	slices.Sort(missing)
	if len(missing) > 0 {
		t.Fatalf("redis_exporter reports %d families for redis-server it does not for persimmon-server: %s", len(missing), strings.Join(missing, " "))
	}
	t.Logf("redis_exporter: %d families for redis-server, %d for persimmon-server", len(want), len(got))
}

// replicationFamily reports the families that describe replicas and
// masters (the exception).
func replicationFamily(f string) bool {
	for _, p := range []string{"redis_connected_slave", "redis_master_", "redis_slave_", "redis_replica_", "redis_repl_", "redis_connected_slaves"} {
		if strings.HasPrefix(f, p) {
			return true
		}
	}
	return false
}

// exporterFamilies runs redis_exporter against addr on a free loopback
// port and returns the families of one scrape (the "# TYPE" lines).
func exporterFamilies(t *testing.T, bin, addr string) map[string]bool {
	t.Helper()
	listen := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	cmd := exec.Command(bin, "--redis.addr", "redis://"+addr, "--web.listen-address", listen)
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	var body string
	for deadline := time.Now().Add(20 * time.Second); ; {
		resp, err := http.Get("http://" + listen + "/metrics")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 && strings.Contains(string(b), "\nredis_up 1") {
				body = string(b)
				break
			}
			err = fmt.Errorf("status %d, redis_up not 1", resp.StatusCode)
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis_exporter for %s: %v\n%s", addr, err, out.String())
		}
		time.Sleep(50 * time.Millisecond) // between scrapes, until the exporter listens
	}
	fams := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) >= 3 && f[0] == "#" && f[1] == "TYPE" {
			fams[f[2]] = true
		}
	}
	return fams
}
