package server

// The CLUSTER command family, READONLY, READWRITE and ASKING, answered as a
// Redis 7.0 server started with cluster-enabled no answers them
// (semantics: redis.io CLUSTER; Redis 7.0.15's clusterCommand). Persimmon
// has no cluster mode (INFO cluster_enabled:0), so every subcommand —
// KEYSLOT and HELP included, as in 7.0 — replies "ERR This instance has
// cluster support disabled" once its arity has been checked; a name that
// is not a subcommand gets dispatch's "ERR unknown subcommand". The
// entries exist so that cluster-aware clients, COMMAND INFO/DOCS/COUNT and
// COMMAND LIST (Redis's introspection tests look for cluster|help) see the
// table Redis 7.0 has.

// errClusterDisabled is Redis's reply to any cluster command when cluster
// support is disabled.
const errClusterDisabled = "ERR This instance has cluster support disabled"

// clusterCommands are CLUSTER's 27 subcommands of Redis 7.0 and the three
// connection commands of cluster clients, with Redis 7.0.15's arity, flags,
// tips and summaries.
func clusterCommands() []Command {
	const (
		info  = FlagStale                                  // the read-only views
		admin = FlagAdmin | FlagStale                      // COUNT-FAILURE-REPORTS, REPLICAS, SLAVES
		write = FlagAdmin | FlagStale | FlagNoAsyncLoading // what changes the cluster's configuration
	)
	nondet := []string{"nondeterministic_output"}
	sub := func(name string, arity, flags int, since, summary string, tips []string) Command {
		return Command{Name: "cluster|" + name, Arity: arity, Flags: flags, Group: "cluster", Since: since,
			Summary: summary, Run: clusterDisabledCommand, NoLock: true, Tips: tips}
	}
	connCat := []string{"@connection"}
	return []Command{
		{Name: "cluster", Arity: -2, Group: "cluster", Since: "3.0.0",
			Summary: "A container for cluster commands", Subcommands: []Command{
				sub("addslots", -3, write, "3.0.0", "Assign new hash slots to receiving node", nil),
				sub("addslotsrange", -4, write, "7.0.0", "Assign new hash slots to receiving node", nil),
				sub("bumpepoch", 2, write, "3.0.0", "Advance the cluster config epoch", nondet),
				sub("count-failure-reports", 3, admin, "3.0.0", "Return the number of failure reports active for a given node", nondet),
				sub("countkeysinslot", 3, info, "3.0.0", "Return the number of local keys in the specified hash slot", nil),
				sub("delslots", -3, write, "3.0.0", "Set hash slots as unbound in receiving node", nil),
				sub("delslotsrange", -4, write, "7.0.0", "Set hash slots as unbound in receiving node", nil),
				sub("failover", -2, write, "3.0.0", "Forces a replica to perform a manual failover of its master.", nil),
				sub("flushslots", 2, write, "3.0.0", "Delete a node's own slots information", nil),
				sub("forget", 3, write, "3.0.0", "Remove a node from the nodes table", nil),
				sub("getkeysinslot", 4, info, "3.0.0", "Return local key names in the specified hash slot", nondet),
				sub("help", 2, FlagLoading|FlagStale, "5.0.0", "Show helpful text about the different subcommands", nil),
				sub("info", 2, info, "3.0.0", "Provides info about Redis Cluster node state", nondet),
				sub("keyslot", 3, info, "3.0.0", "Returns the hash slot of the specified key", nil),
				sub("links", 2, info, "7.0.0", "Returns a list of all TCP links to and from peer nodes in cluster", nondet),
				sub("meet", -4, write, "3.0.0", "Force a node cluster to handshake with another node", nil),
				sub("myid", 2, info, "3.0.0", "Return the node id", nil),
				sub("nodes", 2, info, "3.0.0", "Get Cluster config for the node", nondet),
				sub("replicas", 3, admin, "5.0.0", "List replica nodes of the specified master node", nondet),
				sub("replicate", 3, write, "3.0.0", "Reconfigure a node as a replica of the specified master node", nil),
				sub("reset", -2, FlagAdmin|FlagNoScript|FlagStale, "3.0.0", "Reset a Redis Cluster node", nil),
				sub("saveconfig", 2, write, "3.0.0", "Forces the node to save cluster state on disk", nil),
				sub("set-config-epoch", 3, write, "3.0.0", "Set the configuration epoch in a new node", nil),
				sub("setslot", -4, write, "3.0.0", "Bind a hash slot to a specific node", nil),
				sub("shards", 2, info, "7.0.0", "Get array of cluster slots to node mappings", nondet),
				sub("slaves", 3, admin, "3.0.0", "List replica nodes of the specified master node", nondet),
				sub("slots", 2, info, "3.0.0", "Get array of Cluster slot to node mappings", nondet),
			}},
		{Name: "readonly", Arity: 1, Flags: FlagLoading | FlagStale | FlagFast, Group: "cluster", Since: "3.0.0",
			Summary: "Enables read queries for a connection to a cluster replica node",
			Run:     clusterDisabledCommand, NoLock: true, ACL: connCat},
		{Name: "readwrite", Arity: 1, Flags: FlagLoading | FlagStale | FlagFast, Group: "cluster", Since: "3.0.0",
			Summary: "Disables read queries for a connection to a cluster replica node",
			Run:     clusterDisabledCommand, NoLock: true, ACL: connCat},
		{Name: "asking", Arity: 1, Flags: FlagFast, Group: "cluster", Since: "3.0.0",
			Summary: "Sent by cluster clients after an -ASK redirect",
			Run:     clusterDisabledCommand, NoLock: true, ACL: connCat},
	}
}

// clusterDisabledCommand answers every cluster command: there is no
// cluster to ask.
func clusterDisabledCommand(c *Client, _ [][]byte) { c.WriteError(errClusterDisabled) }
