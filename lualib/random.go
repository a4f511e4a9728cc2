package lualib

import (
	"math"

	lua "github.com/yuin/gopher-lua"
)

// Rand48 is the PRNG Redis gives scripts' math.random (src/rand.c,
// redisLrand48): the 48-bit linear congruential generator of lrand48,
// X' = (0x5DEECE66D·X + 0xB) mod 2^48, answering the top 31 bits. The
// zero value is not ready: use NewRand48 (the state Redis starts from).
type Rand48 struct{ x uint64 }

const rand48Mask = 1<<48 - 1

// NewRand48 returns the generator in Redis's initial state (its x[] =
// {0x330E, 0xABCD, 0x1234}), as a server that never seeded it has.
func NewRand48() *Rand48 { return &Rand48{x: 0x1234ABCD330E} }

// Seed is redisSrand48: the seed's 32 bits above 0x330E.
func (r *Rand48) Seed(seed int32) { r.x = uint64(uint32(seed))<<16 | 0x330E }

// Next is redisLrand48: the next value in [0, 2^31).
func (r *Rand48) Next() int32 {
	r.x = (0x5DEECE66D*r.x + 0xB) & rand48Mask
	return int32(r.x >> 17)
}

// OpenRandom replaces math.random and math.randomseed in the math table
// with Redis's (Lua 5.1's argument rules over r).
func OpenRandom(L *lua.LState, mathTable *lua.LTable, r *Rand48) {
	mathTable.RawSetString("random", L.NewFunction(func(L *lua.LState) int {
		f := float64(r.Next()%math.MaxInt32) / math.MaxInt32
		switch L.GetTop() {
		case 0:
			L.Push(lua.LNumber(f))
		case 1:
			u := checkInt(L, 1, "random")
			if u < 1 {
				argError(L, 1, "random", "interval is empty")
			}
			L.Push(lua.LNumber(math.Floor(f*float64(u)) + 1))
		case 2:
			l := checkInt(L, 1, "random")
			u := checkInt(L, 2, "random")
			if l > u {
				argError(L, 2, "random", "interval is empty")
			}
			L.Push(lua.LNumber(math.Floor(f*float64(u-l+1)) + float64(l)))
		default:
			raise(L, "wrong number of arguments")
		}
		return 1
	}))
	mathTable.RawSetString("randomseed", L.NewFunction(func(L *lua.LState) int {
		r.Seed(int32(checkInt(L, 1, "randomseed")))
		return 0
	}))
}
