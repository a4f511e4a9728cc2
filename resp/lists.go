package resp

// listCommands returns the command table entries of this group (being written).
func listCommands() []Command { return nil }
