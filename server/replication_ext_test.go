package server_test

import (
	"github.com/persimmon-db/persimmon/commands"
	"github.com/persimmon-db/persimmon/server"
)

func init() { server.SetTestDumpValue(commands.DumpValue) }
