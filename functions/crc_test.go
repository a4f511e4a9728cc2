package functions

import (
	"encoding/binary"

	"github.com/persimmon-db/persimmon/rdb"
)

func appendCRC(p []byte) []byte {
	return binary.LittleEndian.AppendUint64(p, rdb.CRC64(0, p))
}
