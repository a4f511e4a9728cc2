package server_test

import (
	"github.com/persimmon-db/persimmon/commands"
	"github.com/persimmon-db/persimmon/server"
)

// The server's tests run the real command families, as the binary does.
func init() { server.SetTestFamilies(commands.Table()) }
