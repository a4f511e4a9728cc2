package resp

// hashCommands returns the command table entries of this group (being written).
func hashCommands() []Command { return nil }
