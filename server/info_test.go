package server

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/persimmon-db/persimmon/keyspace"
	"github.com/persimmon-db/persimmon/wal"
)

func TestParseInfoSections(t *testing.T) {
	b := func(ss ...string) [][]byte {
		out := make([][]byte, len(ss))
		for i, s := range ss {
			out[i] = []byte(s)
		}
		return out
	}
	for _, tt := range []struct {
		args [][]byte
		want infoSection
	}{
		{nil, secDefault},
		{b("keyspace", "CLIENTS"), secClients | secKeyspace},
		{b("nosuch"), 0},
		{b("default"), secDefault},
		{b("all"), secAll},
		{b("everything"), secAll},
		{b("commandstats"), secCommandstats},
	} {
		if got := parseInfoSections(tt.args); got != tt.want {
			t.Errorf("parseInfoSections(%q) = %b, want %b", tt.args, got, tt.want)
		}
	}
	if secDefault&secCommandstats != 0 {
		t.Errorf("commandstats is not a default section in Redis")
	}
}

func infoFixture() *infoData {
	d := &infoData{
		now:              time.Unix(1_700_000_100, 0),
		started:          time.Unix(1_700_000_000, 0),
		connectedClients: 2,
		maxClients:       10000,
		cmds: []cmdStatLine{
			{name: "client|list", calls: 3, nanos: 10_500, failed: 1},
			{name: "get", calls: 4, nanos: 1_000, rejected: 2},
		},
	}
	d.dbs[0] = keyspace.DBInfo{Keys: 1}
	d.dbs[5] = keyspace.DBInfo{Keys: 7, Expires: 2, AvgTTL: 1234}
	d.ks.Mode = "msync"
	d.ks.Flushes, d.ks.SyncedRecords = 4, 10
	d.ks.ArenaBytes, d.ks.LiveBytes = 1<<20, 12345
	return d
}

func TestInfoFormat(t *testing.T) {
	d := infoFixture()
	got := string(appendInfo(nil, secKeyspace|secClients, d))
	want := "# Clients\r\nconnected_clients:2\r\ncluster_connections:0\r\nmaxclients:10000\r\n" +
		"client_recent_max_input_buffer:0\r\nclient_recent_max_output_buffer:0\r\nblocked_clients:0\r\n" +
		"tracking_clients:0\r\nclients_in_timeout_table:0\r\n" +
		"\r\n# Keyspace\r\ndb0:keys=1,expires=0,avg_ttl=0\r\ndb5:keys=7,expires=2,avg_ttl=1234\r\n"
	if got != want {
		t.Fatalf("INFO clients keyspace:\n got %q\nwant %q", got, want)
	}
	// Redis 7.0.15 prints the Modules header with no module loaded:
	// INFO modules is "# Modules\r\n", INFO cpu modules puts it after CPU.
	if got := string(appendInfo(nil, parseInfoSections([][]byte{[]byte("modules")}), d)); got != "# Modules\r\n" {
		t.Fatalf("INFO modules: %q", got)
	}
	for _, sel := range []infoSection{parseInfoSections(nil), secAll, parseInfoSections([][]byte{[]byte("modules"), []byte("cpu")})} {
		got := string(appendInfo(nil, sel, d))
		if i := strings.Index(got, "\r\n# Modules\r\n"); i < 0 || i < strings.Index(got, "# CPU") {
			t.Fatalf("no Modules section after CPU in INFO %b:\n%s", sel, got)
		}
	}
	if got := string(appendInfo(nil, 0, d)); got != "" {
		t.Fatalf("no section: %q", got)
	}

	got = string(appendInfo(nil, secCommandstats, d))
	want = "# Commandstats\r\n" +
		"cmdstat_client|list:calls=3,usec=10,usec_per_call=3.50,rejected_calls=0,failed_calls=1\r\n" +
		"cmdstat_get:calls=4,usec=1,usec_per_call=0.25,rejected_calls=2,failed_calls=0\r\n"
	if got != want {
		t.Fatalf("INFO commandstats:\n got %q\nwant %q", got, want)
	}

	got = string(appendInfo(nil, secPersistence|secMemory|secServer, d))
	for _, line := range []string{
		"# Server\r\nredis_version:7.0.15\r\n",
		"\r\nuptime_in_seconds:100\r\n",
		"\r\n\r\n# Memory\r\nused_memory:",
		"\r\narena_bytes:1048576\r\nlive_bytes:12345\r\n",
		"\r\n\r\n# Persistence\r\nloading:0\r\n",
		"\r\ndurability_mode:msync\r\n",
		"\r\nwal_flushes:4\r\n",
		"\r\nwal_group_commit_avg_records:2.50\r\n",
	} {
		if !strings.Contains(got, line) {
			t.Errorf("INFO lacks %q:\n%s", line, got)
		}
	}
	if strings.Index(got, "# Memory") > strings.Index(got, "# Persistence") {
		t.Errorf("sections out of Redis's order:\n%s", got)
	}
	for _, l := range strings.Split(strings.TrimSuffix(got, "\r\n"), "\r\n") {
		if l != "" && !strings.HasPrefix(l, "# ") && !strings.Contains(l, ":") {
			t.Errorf("malformed INFO line %q", l)
		}
	}
}

func TestBytesToHuman(t *testing.T) {
	for n, want := range map[uint64]string{0: "0B", 1023: "1023B", 1024: "1.00K", 1213312: "1.16M", 3 << 30: "3.00G"} {
		if got := bytesToHuman(n); got != want {
			t.Errorf("bytesToHuman(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestInfoOverTheWire(t *testing.T) {
	s := startWire(t, Config{}, &fakeKS{})
	w := dialWire(t, s)
	if got := w.do("INFO", "nosuch"); got != "$0\r\n\r\n" {
		t.Fatalf("INFO nosuch = %q", got)
	}
	got := w.do("INFO", "keyspace", "clients")
	if !strings.HasPrefix(got[strings.Index(got, "\r\n")+2:], "# Clients\r\nconnected_clients:1\r\n") ||
		!strings.HasSuffix(got, "\r\n\r\n# Keyspace\r\ndb0:keys=3,expires=1,avg_ttl=0\r\n\r\n") {
		t.Fatalf("INFO keyspace clients = %q", got)
	}
	got = w.do("INFO")
	for _, sec := range []string{"# Server", "# Clients", "# Memory", "# Persistence", "# Stats", "# Replication", "# CPU", "# Cluster", "# Keyspace"} {
		if !strings.Contains(got, sec+"\r\n") {
			t.Errorf("INFO lacks %s", sec)
		}
	}
	if strings.Contains(got, "# Commandstats") {
		t.Errorf("plain INFO includes commandstats")
	}
	if !strings.Contains(got, "\r\ntcp_port:"+s.addr[strings.LastIndex(s.addr, ":")+1:]+"\r\n") {
		t.Errorf("INFO tcp_port is not the listening port (%s)", s.addr)
	}
}

// TestSyncSizesLine: the records-per-sync histogram is named by each
// bucket's upper bound, the last bucket by its lower one.
func TestSyncSizesLine(t *testing.T) {
	var sizes [wal.SyncSizeBuckets]int64
	sizes[0], sizes[1], sizes[3], sizes[len(sizes)-1] = 5, 7, 2, 1
	got := syncSizes(sizes)
	if !strings.HasPrefix(got, "le_1=5,le_2=7,le_4=0,le_8=2,") {
		t.Fatalf("wal_sync_sizes %q", got)
	}
	last := fmt.Sprintf(",gt_%d=1", 1<<(len(sizes)-2))
	if !strings.HasSuffix(got, last) || strings.Count(got, "=") != len(sizes) {
		t.Fatalf("wal_sync_sizes %q, want %d buckets ending %q", got, len(sizes), last)
	}
}

// TestResidentSplit: the anonymous and file-backed parts add up to the
// resident set, and a touched heap buffer is in the anonymous part.
func TestResidentSplit(t *testing.T) {
	rss, anon, file := residentBytes()
	if rss == 0 || anon+file != rss {
		t.Fatalf("rss %d = anon %d + file %d?", rss, anon, file)
	}
	buf := make([]byte, 64<<20)
	for i := range buf {
		buf[i] = 1
	}
	// Other tests of the package run meanwhile and free memory, so the
	// growth is not measurable: the touched buffer alone must be counted.
	_, anon2, _ := residentBytes()
	if anon2 < 64<<20 {
		t.Fatalf("anonymous RSS %d (before %d) with 64 MiB of heap touched", anon2, anon)
	}
	_ = buf[len(buf)-1]
}
