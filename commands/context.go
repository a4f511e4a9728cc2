package commands

import "github.com/persimmon-db/persimmon/server"

// The narrow context: everything the command families use from the
// server, named once here. Handlers reach the connection and the keyspace
// only through *Client (its KS, DB, the reply writer and the blocking
// calls); the table types describe their commands to the server.

type (
	Client     = server.Client
	Command    = server.Command
	KeyRef     = server.KeyRef
	KeySpec    = server.KeySpec
	replyError = server.ReplyError
)

const (
	ErrSyntax              = server.ErrSyntax
	ErrNotInteger          = server.ErrNotInteger
	ErrDBIndex             = server.ErrDBIndex
	DefaultProtoMaxBulkLen = server.DefaultProtoMaxBulkLen
	ErrNoSuchKey           = server.ErrNoSuchKey
	FlagAdmin              = server.FlagAdmin
	FlagAsking             = server.FlagAsking
	FlagBlocking           = server.FlagBlocking
	FlagDenyOOM            = server.FlagDenyOOM
	FlagFast               = server.FlagFast
	FlagLoading            = server.FlagLoading
	FlagMovableKeys        = server.FlagMovableKeys
	FlagNoScript           = server.FlagNoScript
	FlagReadonly           = server.FlagReadonly
	FlagStale              = server.FlagStale
	FlagWrite              = server.FlagWrite
	KeyAccess              = server.KeyAccess
	KeyDelete              = server.KeyDelete
	KeyInsert              = server.KeyInsert
	KeyOW                  = server.KeyOW
	KeyRM                  = server.KeyRM
	KeyRO                  = server.KeyRO
	KeyRW                  = server.KeyRW
	KeyUpdate              = server.KeyUpdate
	KeyVariableFlags       = server.KeyVariableFlags
	maxBlockTimeout        = server.MaxBlockTimeout
)

// Keyspace notification classes for c.Notify(class, event, key), called
// once per event right after the write's batch is committed, in Redis's
// order (server/notify.go).
const (
	notifyGeneric = server.NotifyGeneric
	notifyString  = server.NotifyString
	notifyList    = server.NotifyList
	notifySet     = server.NotifySet
	notifyHash    = server.NotifyHash
	notifyZset    = server.NotifyZset
	notifyStream  = server.NotifyStream
	notifyNew     = server.NotifyNew
)

var (
	errDBIndex         = server.ErrDBIndexReply
	errNaNOrInf        = server.ErrNaNOrInf
	errNoSuchKey       = server.ErrNoSuchKeyReply
	errNotFloat        = server.ErrNotFloatReply
	errNotInteger      = server.ErrNotIntegerReply
	errOverflow        = server.ErrOverflowReply
	errSameObject      = server.ErrSameObject
	errSyntax          = server.ErrSyntaxReply
	errTimeoutNegative = server.ErrTimeoutNegative
)

// Argument parsers and helpers shared with the server (server/args.go,
// server/blocking.go, server/table.go).
var (
	SignalStreamReaders = server.SignalStreamReaders
	WrongArgs           = server.WrongArgs
	addLongDouble       = server.AddLongDouble
	argDB               = server.ArgDB
	argFloat64          = server.ArgFloat64
	argInt32            = server.ArgInt32
	argInt64            = server.ArgInt64
	argIs               = server.ArgIs
	blockingPop         = server.BlockingPop
	cString             = server.CString
	checkStringLength   = server.CheckStringLength
	errInvalidExpire    = server.ErrInvalidExpireReply
	formatLongDouble    = server.FormatLongDouble
	globMatch           = server.GlobMatch
	isSpace             = server.IsSpace
	key1                = server.Key1
	keyAt               = server.KeyAt
	keyNumkeys          = server.KeyNumkeys
	keyRange            = server.KeyRange
	lowerASCII          = server.LowerASCII
	newLongDouble       = server.NewLongDouble
	numkeysGetKeys      = server.NumkeysGetKeys
	parseBlockTimeout   = server.ParseBlockTimeout
	parseFloat64        = server.ParseFloat64
	parseInt64          = server.ParseInt64
	parseLongDouble     = server.ParseLongDouble
	parseScanCursor     = server.ParseScanCursor
	parseStrtod         = server.ParseStrtod
	setGetKeys          = server.SetGetKeys
	signalSwapped       = server.SignalSwapped
)
