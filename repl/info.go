package repl

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// InfoConfig is what INFO replication shows that the server, not this
// package, knows.
type InfoConfig struct {
	MasterHost      string // a replica's master (REPLICAOF host port)
	MasterPort      int
	ReplicaPriority int  // replica-priority (100 by default)
	ReadOnly        bool // replica-read-only
	Announced       bool // replica-announced
	FailoverState   string
}

// InfoReplication renders INFO's replication section (without its
// "# Replication" header) as Redis 7.0 does: the replica's link when r is
// not nil (role:slave), then m's replicas, IDs, offset and backlog. For
// a replica, m is the Master it relays its stream into.
func InfoReplication(m *Master, r *Replica, c InfoConfig, now time.Time) string {
	var b strings.Builder
	line := func(k string, v any) { fmt.Fprintf(&b, "%s:%v\r\n", k, v) }
	secs := func(t time.Time) int64 { return int64(now.Sub(t) / time.Second) }
	if r == nil {
		line("role", "master")
	} else {
		st := r.Status()
		line("role", "slave")
		line("master_host", c.MasterHost)
		line("master_port", c.MasterPort)
		up := st.State == StateConnected
		line("master_link_status", map[bool]string{true: "up", false: "down"}[up])
		if up {
			line("master_last_io_seconds_ago", secs(st.LastIO))
		} else {
			line("master_last_io_seconds_ago", -1)
		}
		sync := st.State == StateSync
		line("master_sync_in_progress", map[bool]int{true: 1, false: 0}[sync])
		if sync {
			total := max(st.SyncTotal, 0)
			line("master_sync_total_bytes", st.SyncTotal)
			line("master_sync_read_bytes", st.SyncRead)
			line("master_sync_left_bytes", total-st.SyncRead)
			perc := 0.0
			if total > 0 {
				perc = float64(st.SyncRead) * 100 / float64(total)
			}
			line("master_sync_perc", strconv.FormatFloat(perc, 'f', 2, 64))
			line("master_sync_last_io_seconds_ago", secs(st.LastIO))
		}
		line("slave_read_repl_offset", st.Offset)
		line("slave_repl_offset", st.Offset)
		if !up {
			if st.FullSyncs+st.PartialSyncs == 0 {
				line("master_link_down_since_seconds", -1)
			} else {
				line("master_link_down_since_seconds", secs(st.DownSince))
			}
		}
		line("slave_priority", c.ReplicaPriority)
		line("slave_read_only", b2i(c.ReadOnly))
		line("replica_announced", b2i(c.Announced))
	}
	reps := m.Replicas()
	line("connected_slaves", len(reps))
	for i, x := range reps {
		fmt.Fprintf(&b, "slave%d:ip=%s,port=%d,state=%s,offset=%d,lag=%d\r\n", i, x.IP, x.Port, x.State, x.Offset, ackLag(x.LastAck, now))
	}
	fs := c.FailoverState
	if fs == "" {
		fs = "no-failover"
	}
	line("master_failover_state", fs)
	ids := m.IDs()
	first, histlen, size := m.BacklogInfo()
	line("master_replid", ids.ID)
	line("master_replid2", ids.ID2)
	line("master_repl_offset", m.Offset())
	line("second_repl_offset", ids.Offset2)
	line("repl_backlog_active", 1)
	line("repl_backlog_size", size)
	line("repl_backlog_first_byte_offset", first)
	line("repl_backlog_histlen", histlen)
	return b.String()
}

// ackLag is a replica's lag as INFO's slaveN lag field and
// min-replicas-max-lag count it: whole seconds between the unix second of
// its last acknowledgement and now's.
func ackLag(ack, now time.Time) int64 { return now.Unix() - ack.Unix() }

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// GoodReplicas is how many online replicas acknowledged within maxLag
// seconds (min-replicas-max-lag), for min-replicas-to-write. The lag is
// counted as Redis counts it, in whole seconds of the clock (now's unix
// second less the last acknowledgement's), so a replica that acknowledges
// once a second, as every replica does, has a lag of 0 or 1 and stays good
// at min-replicas-max-lag 1 whatever the jitter of its acknowledgements.
func (m *Master) GoodReplicas(maxLag int64, now time.Time) int {
	n := 0
	for _, x := range m.Replicas() {
		if x.State == "online" && ackLag(x.LastAck, now) <= maxLag {
			n++
		}
	}
	return n
}
