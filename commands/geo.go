package commands

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/persimmon-db/persimmon/geo"
	"github.com/persimmon-db/persimmon/keyspace"
)

// GEO commands (redis.io group "geo"). A geo set is a sorted set whose
// scores are 52-bit geohashes (package geo): GEOADD is ZADD with encoded
// scores, through the same code, and the searches read score ranges of the
// sorted set, cell by cell, in Redis's order. The *STORE forms write the
// result as one batch (storeZSet), like ZRANGESTORE.

func geoCommands() []Command {
	const w, r, dm, mov = FlagWrite, FlagReadonly, FlagDenyOOM, FlagMovableKeys
	const g = "geo"
	ro := key1(KeyRO | KeyAccess)
	storeSpecs := func(from int) []KeySpec {
		return []KeySpec{keyAt(KeyRO|KeyAccess, 1),
			{Flags: KeyOW | KeyUpdate, Keyword: "STORE", StartFrom: from, KeyStep: 1},
			{Flags: KeyOW | KeyUpdate, Keyword: "STOREDIST", StartFrom: from, KeyStep: 1}}
	}
	return []Command{
		{Name: "geoadd", Arity: -5, Flags: w | dm, FirstKey: 1, LastKey: 1, Step: 1, Group: g, Since: "3.2.0",
			Summary: "Adds one or more members to a geospatial index. The key is created if it doesn't exist.", Run: cmdGeoAdd,
			KeySpecs: key1(KeyRW | KeyUpdate)},
		{Name: "geodist", Arity: -4, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, Group: g, Since: "3.2.0",
			Summary: "Returns the distance between two members of a geospatial index.", Run: cmdGeoDist, KeySpecs: ro},
		{Name: "geohash", Arity: -2, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, Group: g, Since: "3.2.0",
			Summary: "Returns members from a geospatial index as geohash strings.", Run: cmdGeoHash, KeySpecs: ro},
		{Name: "geopos", Arity: -2, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, Group: g, Since: "3.2.0",
			Summary: "Returns the longitude and latitude of members from a geospatial index.", Run: cmdGeoPos, KeySpecs: ro},
		{Name: "georadius", Arity: -6, Flags: w | dm | mov, FirstKey: 1, LastKey: 1, Step: 1, Group: g, Since: "3.2.0",
			Summary: "Queries a geospatial index for members within a distance from a coordinate, optionally stores the result.",
			Run:     func(c *Client, a [][]byte) { geoSearch(c, a, 1, geoByCoords) }, KeySpecs: storeSpecs(6), GetKeys: georadiusGetKeys, CountsReads: true},
		{Name: "georadius_ro", Arity: -6, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, Group: g, Since: "3.2.10",
			Summary: "Returns members from a geospatial index that are within a distance from a coordinate.",
			Run:     func(c *Client, a [][]byte) { geoSearch(c, a, 1, geoByCoords|geoNoStore) }, KeySpecs: ro},
		{Name: "georadiusbymember", Arity: -5, Flags: w | dm | mov, FirstKey: 1, LastKey: 1, Step: 1, Group: g, Since: "3.2.0",
			Summary: "Queries a geospatial index for members within a distance from a member, optionally stores the result.",
			Run:     func(c *Client, a [][]byte) { geoSearch(c, a, 1, geoByMember) }, KeySpecs: storeSpecs(5), GetKeys: georadiusGetKeys, CountsReads: true},
		{Name: "georadiusbymember_ro", Arity: -5, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, Group: g, Since: "3.2.10",
			Summary: "Returns members from a geospatial index that are within a distance from a member.",
			Run:     func(c *Client, a [][]byte) { geoSearch(c, a, 1, geoByMember|geoNoStore) }, KeySpecs: ro},
		{Name: "geosearch", Arity: -7, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, Group: g, Since: "6.2.0",
			Summary: "Queries a geospatial index for members inside an area of a box or a circle.",
			Run:     func(c *Client, a [][]byte) { geoSearch(c, a, 1, geoSearchCmd) }, KeySpecs: ro},
		{Name: "geosearchstore", Arity: -8, Flags: w | dm, FirstKey: 1, LastKey: 2, Step: 1, Group: g, Since: "6.2.0",
			Summary:  "Queries a geospatial index for members inside an area of a box or a circle, optionally stores the result.",
			Run:      func(c *Client, a [][]byte) { geoSearch(c, a, 2, geoSearchCmd|geoSearchStore) },
			KeySpecs: []KeySpec{keyAt(KeyOW|KeyUpdate, 1), keyAt(KeyRO|KeyAccess, 2)}, CountsReads: true},
	}
}

// georadiusGetKeys is Redis's georadiusGetKeys: the source, and the
// argument after the last STORE or STOREDIST from argument 5 on.
func georadiusGetKeys(args [][]byte) []KeyRef {
	refs := []KeyRef{{Pos: 1, Flags: KeyRO | KeyAccess}}
	store := -1
	for i := 5; i < len(args); i++ {
		if (argIs(args[i], "store") || argIs(args[i], "storedist")) && i+1 < len(args) {
			store = i + 1
			i++
		}
	}
	if store > 0 {
		refs = append(refs, KeyRef{Pos: store, Flags: KeyOW | KeyUpdate})
	}
	return refs
}

// ---- argument parsing ----

// cFloat formats f as C's "%f".
func cFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return strconv.FormatFloat(f, 'f', 6, 64)
}

// parseLonLat parses a longitude and a latitude (Redis's
// extractLongLatOrReply).
func parseLonLat(lonArg, latArg []byte) (lon, lat float64, err error) {
	if lon, err = scoreArg(lonArg); err != nil {
		return 0, 0, err
	}
	if lat, err = scoreArg(latArg); err != nil {
		return 0, 0, err
	}
	if lon < geo.LonMin || lon > geo.LonMax || lat < geo.LatMin || lat > geo.LatMax {
		return 0, 0, replyError("ERR invalid longitude,latitude pair " + cFloat(lon) + "," + cFloat(lat))
	}
	return lon, lat, nil
}

// parseUnit returns the metres in a unit (m, km, ft, mi).
func parseUnit(b []byte) (float64, error) {
	switch strings.ToLower(string(b)) {
	case "m":
		return 1, nil
	case "km":
		return 1000, nil
	case "ft":
		return 0.3048, nil
	case "mi":
		return 1609.34, nil
	}
	return 0, replyError("ERR unsupported unit provided. please use M, KM, FT, MI")
}

// parseRadius parses "radius unit".
func parseRadius(args [][]byte) (radius, conv float64, err error) {
	radius, ok := parseFloat64(args[0])
	if !ok {
		return 0, 0, replyError("ERR need numeric radius")
	}
	if radius < 0 {
		return 0, 0, replyError("ERR radius cannot be negative")
	}
	conv, err = parseUnit(args[1])
	return radius, conv, err
}

// parseBox parses "width height unit".
func parseBox(args [][]byte) (w, h, conv float64, err error) {
	w, ok := parseFloat64(args[0])
	if !ok {
		return 0, 0, 0, replyError("ERR need numeric width")
	}
	h, ok = parseFloat64(args[1])
	if !ok {
		return 0, 0, 0, replyError("ERR need numeric height")
	}
	if h < 0 || w < 0 {
		return 0, 0, 0, replyError("ERR height or width cannot be negative")
	}
	conv, err = parseUnit(args[2])
	return w, h, conv, err
}

// memberPosition decodes a member's position; ok false when it is not in
// the set.
func memberPosition(z *keyspace.ZSet, member []byte) (lon, lat float64, ok bool) {
	score, ok := z.Score(member)
	if !ok {
		return 0, 0, false
	}
	lon, lat = geo.Decode(score)
	return lon, lat, true
}

// appendHumanFloat appends Redis's "human" long double text: "%.17Lf"
// without trailing zeros (and "0" for a negative zero).
func appendHumanFloat(dst []byte, f float64) []byte {
	s := strconv.FormatFloat(f, 'f', 17, 64)
	if strings.IndexByte(s, '.') >= 0 {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	if s == "-0" {
		s = "0"
	}
	return append(dst, s...)
}

func writeHumanFloat(c *Client, f float64) {
	var buf [64]byte
	c.WriteDoubleText(appendHumanFloat(buf[:0], f)) // addReplyHumanLongDouble: a double in RESP3
}

// writeDistance writes a distance as "%.4f".
func writeDistance(c *Client, d float64) {
	c.WriteBulkString(strconv.FormatFloat(d, 'f', 4, 64))
}

// ---- GEOADD, GEODIST, GEOHASH, GEOPOS ----

// GEOADD key [NX|XX] [CH] longitude latitude member [...]: ZADD with the
// options and the encoded scores, as Redis does it.
func cmdGeoAdd(c *Client, args [][]byte) {
	i := 2
	var nx, xx bool
	for ; i < len(args); i++ {
		switch {
		case argIs(args[i], "nx"):
			nx = true
		case argIs(args[i], "xx"):
			xx = true
		case argIs(args[i], "ch"):
		default:
			goto done
		}
	}
done:
	if (len(args)-i)%3 != 0 || (nx && xx) {
		c.WriteErr(errSyntax)
		return
	}
	// ZADD's arguments: the options, then (score, member) pairs whose
	// scores are passed parsed (a 52-bit geohash is exact in a float64),
	// so the score argument only holds the place (the longitude's).
	var zbuf [16][]byte
	var sbuf [4]float64
	zargs, scores := zbuf[:0], sbuf[:0]
	zargs = append(zargs, args[:i]...)
	for j := i; j < len(args); j += 3 {
		lon, lat, err := parseLonLat(args[j], args[j+1])
		if err != nil {
			c.WriteErr(err)
			return
		}
		bits, _ := geo.Encode(lon, lat)
		zargs = append(zargs, args[j], args[j+2])
		scores = append(scores, float64(bits))
	}
	zaddGeneric(c, zargs, false, scores)
}

// GEODIST key member1 member2 [unit]
func cmdGeoDist(c *Client, args [][]byte) {
	conv := 1.0
	if len(args) == 5 {
		var err error
		if conv, err = parseUnit(args[4]); err != nil {
			c.WriteErr(err)
			return
		}
	} else if len(args) > 5 {
		c.WriteErr(errSyntax)
		return
	}
	z, ok := zsetAt(c, args[1])
	if !ok {
		return
	}
	if z == nil {
		c.WriteNull()
		return
	}
	lon1, lat1, ok1 := memberPosition(z, args[2])
	lon2, lat2, ok2 := memberPosition(z, args[3])
	if !ok1 || !ok2 {
		c.WriteNull()
		return
	}
	writeDistance(c, geo.Distance(lon1, lat1, lon2, lat2)/conv)
}

// GEOHASH key [member ...]
func cmdGeoHash(c *Client, args [][]byte) {
	z, ok := zsetAt(c, args[1])
	if !ok {
		return
	}
	c.WriteArray(len(args) - 2)
	for _, m := range args[2:] {
		if z == nil {
			c.WriteNull()
			continue
		}
		lon, lat, ok := memberPosition(z, m)
		if !ok {
			c.WriteNull()
			continue
		}
		c.WriteBulkString(geo.GeohashString(geo.EncodeStd(lon, lat)))
	}
}

// GEOPOS key [member ...]
func cmdGeoPos(c *Client, args [][]byte) {
	z, ok := zsetAt(c, args[1])
	if !ok {
		return
	}
	c.WriteArray(len(args) - 2)
	for _, m := range args[2:] {
		if z == nil {
			c.WriteNullArray()
			continue
		}
		lon, lat, ok := memberPosition(z, m)
		if !ok {
			c.WriteNullArray()
			continue
		}
		c.WriteArray(2)
		writeHumanFloat(c, lon)
		writeHumanFloat(c, lat)
	}
}

// ---- searches ----

// geoSearch flags (Redis's RADIUS_COORDS ... GEOSEARCHSTORE).
const (
	geoByCoords = 1 << iota
	geoByMember
	geoNoStore
	geoSearchCmd
	geoSearchStore
)

// geoPoint is one search result.
type geoPoint struct {
	member   string
	lon, lat float64
	dist     float64 // metres, then the request's unit
	score    float64
}

// geoSearch is Redis's georadiusGeneric for GEORADIUS[BYMEMBER][_RO],
// GEOSEARCH and GEOSEARCHSTORE: srcIdx is the source key's argument.
func geoSearch(c *Client, args [][]byte, srcIdx int, flags int) {
	z, ok := zsetAt(c, args[srcIdx])
	if !ok {
		return
	}
	var storeKey []byte
	storeDist := false
	var shape geo.Shape
	var base int
	var err error
	switch {
	case flags&geoByCoords != 0:
		base = 6
		if shape.Lon, shape.Lat, err = parseLonLat(args[2], args[3]); err != nil {
			c.WriteErr(err)
			return
		}
		if shape.Radius, shape.Conversion, err = parseRadius(args[4:6]); err != nil {
			c.WriteErr(err)
			return
		}
	case flags&geoByMember != 0 && z == nil:
		base = 5
	case flags&geoByMember != 0:
		base = 5
		var found bool
		if shape.Lon, shape.Lat, found = memberPosition(z, args[2]); !found {
			c.WriteError("ERR could not decode requested zset member")
			return
		}
		if shape.Radius, shape.Conversion, err = parseRadius(args[3:5]); err != nil {
			c.WriteErr(err)
			return
		}
	default:
		base = 2
		if flags&geoSearchStore != 0 {
			base = 3
			storeKey = args[1]
		}
	}

	var withDist, withHash, withCoord, fromMember, fromLoc, byRadius, byBox, anyN bool
	sort := 0 // 1 ASC, -1 DESC
	var count int64
	rest := args[base:]
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		left := len(rest) - i - 1 // arguments after a
		search := flags&geoSearchCmd != 0
		switch {
		case argIs(a, "withdist"):
			withDist = true
		case argIs(a, "withhash"):
			withHash = true
		case argIs(a, "withcoord"):
			withCoord = true
		case argIs(a, "any"):
			anyN = true
		case argIs(a, "asc"):
			sort = 1
		case argIs(a, "desc"):
			sort = -1
		case argIs(a, "count") && left >= 1:
			n, ok := parseInt64(rest[i+1])
			if !ok {
				c.WriteErr(errNotInteger)
				return
			}
			if n <= 0 {
				c.WriteError("ERR COUNT must be > 0")
				return
			}
			count = n
			i++
		case (argIs(a, "store") || argIs(a, "storedist")) && left >= 1 && flags&geoNoStore == 0 && !search:
			storeKey = rest[i+1]
			storeDist = argIs(a, "storedist")
			i++
		case argIs(a, "storedist") && search && flags&geoSearchStore != 0:
			storeDist = true
		case argIs(a, "frommember") && left >= 1 && search && !fromLoc:
			if z != nil {
				var found bool
				if shape.Lon, shape.Lat, found = memberPosition(z, rest[i+1]); !found {
					c.WriteError("ERR could not decode requested zset member")
					return
				}
			}
			fromMember = true
			i++
		case argIs(a, "fromlonlat") && left >= 2 && search && !fromMember:
			if shape.Lon, shape.Lat, err = parseLonLat(rest[i+1], rest[i+2]); err != nil {
				c.WriteErr(err)
				return
			}
			fromLoc = true
			i += 2
		case argIs(a, "byradius") && left >= 2 && search && !byBox:
			if shape.Radius, shape.Conversion, err = parseRadius(rest[i+1 : i+3]); err != nil {
				c.WriteErr(err)
				return
			}
			shape.Box = false
			byRadius = true
			i += 2
		case argIs(a, "bybox") && left >= 3 && search && !byRadius:
			if shape.Width, shape.Height, shape.Conversion, err = parseBox(rest[i+1 : i+4]); err != nil {
				c.WriteErr(err)
				return
			}
			shape.Box = true
			byBox = true
			i += 3
		default:
			c.WriteErr(errSyntax)
			return
		}
	}
	if storeKey != nil && (withDist || withHash || withCoord) {
		what := "STORE option in GEORADIUS"
		if flags&geoSearchStore != 0 {
			what = "GEOSEARCHSTORE"
		}
		c.WriteError("ERR " + what + " is not compatible with WITHDIST, WITHHASH and WITHCOORD options")
		return
	}
	if flags&geoSearchCmd != 0 && !fromMember && !fromLoc {
		c.WriteError("ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for " + string(args[0]))
		return
	}
	if flags&geoSearchCmd != 0 && !byRadius && !byBox {
		c.WriteError("ERR exactly one of BYRADIUS and BYBOX can be specified for " + string(args[0]))
		return
	}
	if anyN && count == 0 {
		c.WriteError("ERR the ANY argument requires COUNT argument")
		return
	}
	if z == nil {
		if storeKey != nil {
			storeZSet(c, storeKey, nil, nil, geoStoreEvent(flags))
		} else {
			c.WriteArray(0)
		}
		return
	}
	if count != 0 && sort == 0 && !anyN {
		sort = 1
	}
	limit := 0
	if anyN {
		limit = int(min(count, math.MaxInt32))
	}
	points := geoCollect(z, &shape, limit)
	if len(points) == 0 && storeKey == nil {
		c.WriteArray(0)
		return
	}
	n := len(points)
	if count != 0 && int64(n) > count {
		n = int(count)
	}
	if sort != 0 {
		slices.SortStableFunc(points, func(a, b geoPoint) int {
			switch {
			case a.dist == b.dist:
				return 0
			case (a.dist > b.dist) == (sort > 0):
				return 1
			}
			return -1
		})
	}
	points = points[:n]
	for i := range points {
		points[i].dist /= shape.Conversion
	}
	if storeKey != nil {
		members := make([]string, n)
		scores := make([]float64, n)
		for i, p := range points {
			members[i] = p.member
			scores[i] = p.score
			if storeDist {
				scores[i] = p.dist
			}
		}
		storeZSet(c, storeKey, members, scores, geoStoreEvent(flags))
		return
	}
	opts := 0
	for _, b := range []bool{withDist, withCoord, withHash} {
		if b {
			opts++
		}
	}
	c.WriteArray(n)
	for _, p := range points {
		if opts > 0 {
			c.WriteArray(opts + 1)
		}
		c.WriteBulkString(p.member)
		if withDist {
			writeDistance(c, p.dist)
		}
		if withHash {
			c.WriteInt(int64(p.score))
		}
		if withCoord {
			c.WriteArray(2)
			writeHumanFloat(c, p.lon)
			writeHumanFloat(c, p.lat)
		}
	}
}

// geoCollect scans the cells of the search, in Redis's order, and returns
// the members inside the shape; limit > 0 stops once that many are found
// (COUNT ANY).
func geoCollect(z *keyspace.ZSet, shape *geo.Shape, limit int) []geoPoint {
	cells := geo.Areas(shape)
	var out []geoPoint
	last := 0
	for i, h := range cells {
		if h.IsZero() {
			continue
		}
		// Redis skips a cell equal to the one scanned just before (huge
		// radii make neighbours coincide), but never compares with the
		// centre cell (its "last processed" index 0 reads as none).
		if last != 0 && h == cells[last] {
			continue
		}
		if limit > 0 && len(out) >= limit {
			break
		}
		lo, hi := geo.ScoreRange(h)
		from, to := z.ScoreRanks(keyspace.ScoreRange{Min: lo, Max: hi, MaxEx: true})
		if from < to {
			for x, r := z.At(from), from; x != 0 && r < to; x, r = z.Next(x), r+1 {
				score := z.ScoreOf(x)
				lon, lat := geo.Decode(score)
				d, ok := shape.Within(lon, lat)
				if !ok {
					continue
				}
				out = append(out, geoPoint{member: string(z.Member(x)), lon: lon, lat: lat, dist: d, score: score})
				if limit > 0 && len(out) >= limit {
					break
				}
			}
		}
		last = i
	}
	return out
}
