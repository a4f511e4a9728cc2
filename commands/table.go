package commands

// Table returns the command table entries of every family, for
// server.NewServer. Each family's file starts with its own table (the
// name, arity, flags, key specs and handler of each command); this is the
// one place that lists the families.
func Table() []Command {
	var cmds []Command
	for _, family := range [][]Command{
		stringCommands(),  // strings.go
		bitopCommands(),   // bitops.go: SETBIT, BITCOUNT, BITFIELD, BITOP...
		lcsCommands(),     // lcs.go
		keyCommands(),     // keys.go: DEL, EXPIRE, SCAN, RENAME, FLUSHALL...
		dumpCommands(),    // dump.go: DUMP, RESTORE
		hashCommands(),    // hashes.go
		listCommands(),    // lists.go (blocking pops: server/blocking.go)
		sortCommands(),    // sort.go
		setCommands(),     // sets.go
		zsetCommands(),    // zsets.go, zscore.go
		hllCommands(),     // hll.go
		geoCommands(),     // geo.go
		roaringCommands(), // roaring.go: TairRoaring TR.*
		streamCommands(),  // streams.go
		debugCommands(),   // debug.go: DEBUG
	} {
		cmds = append(cmds, family...)
	}
	return cmds
}
