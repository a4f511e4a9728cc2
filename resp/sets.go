package resp

// setCommands returns the command table entries of this group (being written).
func setCommands() []Command { return nil }
