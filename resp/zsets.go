package resp

// zsetCommands returns the command table entries of this group (being written).
func zsetCommands() []Command { return nil }
