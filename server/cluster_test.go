package server

import (
	"strings"
	"testing"
)

// recordedClusterInfo is COMMAND INFO <name> of Redis 7.0.15 (the entry
// without the outer *1) for every cluster command.
var recordedClusterInfo = map[string]string{
	"cluster|addslots":              "*10\r\n$16\r\ncluster|addslots\r\n:-3\r\n*3\r\n+admin\r\n+stale\r\n+no_async_loading\r\n:0\r\n:0\r\n:0\r\n*3\r\n+@admin\r\n+@slow\r\n+@dangerous\r\n*0\r\n*0\r\n*0\r\n",
	"cluster|addslotsrange":         "*10\r\n$21\r\ncluster|addslotsrange\r\n:-4\r\n*3\r\n+admin\r\n+stale\r\n+no_async_loading\r\n:0\r\n:0\r\n:0\r\n*3\r\n+@admin\r\n+@slow\r\n+@dangerous\r\n*0\r\n*0\r\n*0\r\n",
	"cluster|bumpepoch":             "*10\r\n$17\r\ncluster|bumpepoch\r\n:2\r\n*3\r\n+admin\r\n+stale\r\n+no_async_loading\r\n:0\r\n:0\r\n:0\r\n*3\r\n+@admin\r\n+@slow\r\n+@dangerous\r\n*1\r\n$23\r\nnondeterministic_output\r\n*0\r\n*0\r\n",
	"cluster|count-failure-reports": "*10\r\n$29\r\ncluster|count-failure-reports\r\n:3\r\n*2\r\n+admin\r\n+stale\r\n:0\r\n:0\r\n:0\r\n*3\r\n+@admin\r\n+@slow\r\n+@dangerous\r\n*1\r\n$23\r\nnondeterministic_output\r\n*0\r\n*0\r\n",
	"cluster|countkeysinslot":       "*10\r\n$23\r\ncluster|countkeysinslot\r\n:3\r\n*1\r\n+stale\r\n:0\r\n:0\r\n:0\r\n*1\r\n+@slow\r\n*0\r\n*0\r\n*0\r\n",
	"cluster|delslots":              "*10\r\n$16\r\ncluster|delslots\r\n:-3\r\n*3\r\n+admin\r\n+stale\r\n+no_async_loading\r\n:0\r\n:0\r\n:0\r\n*3\r\n+@admin\r\n+@slow\r\n+@dangerous\r\n*0\r\n*0\r\n*0\r\n",
	"cluster|delslotsrange":         "*10\r\n$21\r\ncluster|delslotsrange\r\n:-4\r\n*3\r\n+admin\r\n+stale\r\n+no_async_loading\r\n:0\r\n:0\r\n:0\r\n*3\r\n+@admin\r\n+@slow\r\n+@dangerous\r\n*0\r\n*0\r\n*0\r\n",
	"cluster|failover":              "*10\r\n$16\r\ncluster|failover\r\n:-2\r\n*3\r\n+admin\r\n+stale\r\n+no_async_loading\r\n:0\r\n:0\r\n:0\r\n*3\r\n+@admin\r\n+@slow\r\n+@dangerous\r\n*0\r\n*0\r\n*0\r\n",
	"cluster|flushslots":            "*10\r\n$18\r\ncluster|flushslots\r\n:2\r\n*3\r\n+admin\r\n+stale\r\n+no_async_loading\r\n:0\r\n:0\r\n:0\r\n*3\r\n+@admin\r\n+@slow\r\n+@dangerous\r\n*0\r\n*0\r\n*0\r\n",
	"cluster|forget":                "*10\r\n$14\r\ncluster|forget\r\n:3\r\n*3\r\n+admin\r\n+stale\r\n+no_async_loading\r\n:0\r\n:0\r\n:0\r\n*3\r\n+@admin\r\n+@slow\r\n+@dangerous\r\n*0\r\n*0\r\n*0\r\n",
	"cluster|getkeysinslot":         "*10\r\n$21\r\ncluster|getkeysinslot\r\n:4\r\n*1\r\n+stale\r\n:0\r\n:0\r\n:0\r\n*1\r\n+@slow\r\n*1\r\n$23\r\nnondeterministic_output\r\n*0\r\n*0\r\n",
	"cluster|help":                  "*10\r\n$12\r\ncluster|help\r\n:2\r\n*2\r\n+loading\r\n+stale\r\n:0\r\n:0\r\n:0\r\n*1\r\n+@slow\r\n*0\r\n*0\r\n*0\r\n",
	"cluster|info":                  "*10\r\n$12\r\ncluster|info\r\n:2\r\n*1\r\n+stale\r\n:0\r\n:0\r\n:0\r\n*1\r\n+@slow\r\n*1\r\n$23\r\nnondeterministic_output\r\n*0\r\n*0\r\n",
	"cluster|keyslot":               "*10\r\n$15\r\ncluster|keyslot\r\n:3\r\n*1\r\n+stale\r\n:0\r\n:0\r\n:0\r\n*1\r\n+@slow\r\n*0\r\n*0\r\n*0\r\n",
	"cluster|links":                 "*10\r\n$13\r\ncluster|links\r\n:2\r\n*1\r\n+stale\r\n:0\r\n:0\r\n:0\r\n*1\r\n+@slow\r\n*1\r\n$23\r\nnondeterministic_output\r\n*0\r\n*0\r\n",
	"cluster|meet":                  "*10\r\n$12\r\ncluster|meet\r\n:-4\r\n*3\r\n+admin\r\n+stale\r\n+no_async_loading\r\n:0\r\n:0\r\n:0\r\n*3\r\n+@admin\r\n+@slow\r\n+@dangerous\r\n*0\r\n*0\r\n*0\r\n",
	"cluster|myid":                  "*10\r\n$12\r\ncluster|myid\r\n:2\r\n*1\r\n+stale\r\n:0\r\n:0\r\n:0\r\n*1\r\n+@slow\r\n*0\r\n*0\r\n*0\r\n",
	"cluster|nodes":                 "*10\r\n$13\r\ncluster|nodes\r\n:2\r\n*1\r\n+stale\r\n:0\r\n:0\r\n:0\r\n*1\r\n+@slow\r\n*1\r\n$23\r\nnondeterministic_output\r\n*0\r\n*0\r\n",
	"cluster|replicas":              "*10\r\n$16\r\ncluster|replicas\r\n:3\r\n*2\r\n+admin\r\n+stale\r\n:0\r\n:0\r\n:0\r\n*3\r\n+@admin\r\n+@slow\r\n+@dangerous\r\n*1\r\n$23\r\nnondeterministic_output\r\n*0\r\n*0\r\n",
	"cluster|replicate":             "*10\r\n$17\r\ncluster|replicate\r\n:3\r\n*3\r\n+admin\r\n+stale\r\n+no_async_loading\r\n:0\r\n:0\r\n:0\r\n*3\r\n+@admin\r\n+@slow\r\n+@dangerous\r\n*0\r\n*0\r\n*0\r\n",
	"cluster|reset":                 "*10\r\n$13\r\ncluster|reset\r\n:-2\r\n*3\r\n+admin\r\n+noscript\r\n+stale\r\n:0\r\n:0\r\n:0\r\n*3\r\n+@admin\r\n+@slow\r\n+@dangerous\r\n*0\r\n*0\r\n*0\r\n",
	"cluster|saveconfig":            "*10\r\n$18\r\ncluster|saveconfig\r\n:2\r\n*3\r\n+admin\r\n+stale\r\n+no_async_loading\r\n:0\r\n:0\r\n:0\r\n*3\r\n+@admin\r\n+@slow\r\n+@dangerous\r\n*0\r\n*0\r\n*0\r\n",
	"cluster|set-config-epoch":      "*10\r\n$24\r\ncluster|set-config-epoch\r\n:3\r\n*3\r\n+admin\r\n+stale\r\n+no_async_loading\r\n:0\r\n:0\r\n:0\r\n*3\r\n+@admin\r\n+@slow\r\n+@dangerous\r\n*0\r\n*0\r\n*0\r\n",
	"cluster|setslot":               "*10\r\n$15\r\ncluster|setslot\r\n:-4\r\n*3\r\n+admin\r\n+stale\r\n+no_async_loading\r\n:0\r\n:0\r\n:0\r\n*3\r\n+@admin\r\n+@slow\r\n+@dangerous\r\n*0\r\n*0\r\n*0\r\n",
	"cluster|shards":                "*10\r\n$14\r\ncluster|shards\r\n:2\r\n*1\r\n+stale\r\n:0\r\n:0\r\n:0\r\n*1\r\n+@slow\r\n*1\r\n$23\r\nnondeterministic_output\r\n*0\r\n*0\r\n",
	"cluster|slaves":                "*10\r\n$14\r\ncluster|slaves\r\n:3\r\n*2\r\n+admin\r\n+stale\r\n:0\r\n:0\r\n:0\r\n*3\r\n+@admin\r\n+@slow\r\n+@dangerous\r\n*1\r\n$23\r\nnondeterministic_output\r\n*0\r\n*0\r\n",
	"cluster|slots":                 "*10\r\n$13\r\ncluster|slots\r\n:2\r\n*1\r\n+stale\r\n:0\r\n:0\r\n:0\r\n*1\r\n+@slow\r\n*1\r\n$23\r\nnondeterministic_output\r\n*0\r\n*0\r\n",
	"readonly":                      "*10\r\n$8\r\nreadonly\r\n:1\r\n*3\r\n+loading\r\n+stale\r\n+fast\r\n:0\r\n:0\r\n:0\r\n*2\r\n+@fast\r\n+@connection\r\n*0\r\n*0\r\n*0\r\n",
	"readwrite":                     "*10\r\n$9\r\nreadwrite\r\n:1\r\n*3\r\n+loading\r\n+stale\r\n+fast\r\n:0\r\n:0\r\n:0\r\n*2\r\n+@fast\r\n+@connection\r\n*0\r\n*0\r\n*0\r\n",
	"asking":                        "*10\r\n$6\r\nasking\r\n:1\r\n*1\r\n+fast\r\n:0\r\n:0\r\n:0\r\n*2\r\n+@fast\r\n+@connection\r\n*0\r\n*0\r\n*0\r\n",
}

func TestClusterCommandInfo(t *testing.T) {
	s := &Server{table: newCommandTable(testFamilies)}
	checkRecordedInfo(t, s, recordedClusterInfo)
	if n := len(s.table["cluster"].Subcommands); n != 27 {
		t.Errorf("CLUSTER has %d subcommands, Redis 7.0 has 27", n)
	}
}

// Every cluster command answers as a Redis 7.0.15 started with
// cluster-enabled no (replies recorded from redis-server).
func TestClusterDisabledReplies(t *testing.T) {
	s := startWire(t, Config{}, &fakeKS{})
	w := dialWire(t, s)
	const disabled = "-ERR This instance has cluster support disabled\r\n"
	script(t, w, [][2]string{
		{"cluster info", disabled},
		{"cluster keyslot foo", disabled},
		{"cluster help", disabled},
		{"cluster getkeysinslot 1 1", disabled},
		{"cluster meet 1 2", disabled},
		{"readonly", disabled},
		{"readwrite", disabled},
		{"asking", disabled},
		{"cluster foo", "-ERR unknown subcommand 'foo'. Try CLUSTER HELP.\r\n"},
		{"cluster", "-ERR wrong number of arguments for 'cluster' command\r\n"},
		{"cluster keyslot", "-ERR wrong number of arguments for 'cluster|keyslot' command\r\n"},
		{"cluster help x", "-ERR wrong number of arguments for 'cluster|help' command\r\n"},
		{"asking x", "-ERR wrong number of arguments for 'asking' command\r\n"},
		{"command list filterby pattern cl*help", "*2\r\n" + bulk("client|help") + bulk("cluster|help")},
	})
	docs := w.do("COMMAND", "DOCS", "readonly")
	if !strings.Contains(docs, bulk("Enables read queries for a connection to a cluster replica node")+bulk("since")+bulk("3.0.0")+bulk("group")+bulk("cluster")) {
		t.Errorf("COMMAND DOCS readonly = %q", docs)
	}
}
