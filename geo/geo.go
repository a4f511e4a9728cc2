// Package geo is Redis 7.0's geohash arithmetic: the 52-bit interleaved
// geohash that a geo set stores as a sorted-set score, the neighbour boxes
// a radius or box search scans, and the distances it measures.
//
// A position is encoded at 26 steps: latitude (range ±85.05112878, the
// Web Mercator limit) and longitude (±180) are each scaled to a 26-bit
// integer cell, and the two are interleaved, latitude in the even bits and
// longitude in the odd ones. Decoding returns the centre of the cell, so a
// stored position comes back slightly moved, exactly as in Redis.
//
// A search (Areas) picks a step from the radius, so that the centre's cell
// and its eight neighbours cover the search shape, then drops neighbours
// that lie wholly outside the shape's bounding box. Each cell is a score
// range [min, max) of the sorted set; each member found there is kept if
// its distance passes the shape's test (InRadius, InBox). Distances use
// the haversine formula on a sphere of radius 6372797.560856 m.
//
// The package works on numbers only; it knows nothing of sorted sets or
// replies. Results match Redis's to the last bit but for rare cases: the
// arithmetic is the same IEEE operations in the same order, and the
// trigonometric functions are correctly rounded (trig.go), which glibc's
// nearly always are.
package geo

import "math"

// Limits and constants (Redis's geohash.h, geohash_helper.c).
const (
	StepMax  = 26 // steps of a stored geohash: 52 bits
	LatMin   = -85.05112878
	LatMax   = 85.05112878
	LonMin   = -180.0
	LonMax   = 180.0
	earthR   = 6372797.560856 // metres
	mercator = 20037726.37
	degToRad = math.Pi / 180.0
)

// Hash is a geohash of Step steps (2*Step bits).
type Hash struct {
	Bits uint64
	Step uint8
}

// IsZero reports the empty hash (a neighbour dropped from a search).
func (h Hash) IsZero() bool { return h.Bits == 0 && h.Step == 0 }

// Range is an interval of one coordinate.
type Range struct{ Min, Max float64 }

// Area is a geohash cell.
type Area struct {
	Hash     Hash
	Lon, Lat Range
}

var (
	lonRange = Range{LonMin, LonMax}
	latRange = Range{LatMin, LatMax}
)

// spread puts the 32 bits of x in the even bits of the result.
func spread(x uint32) uint64 {
	v := uint64(x)
	v = (v | v<<16) & 0x0000FFFF0000FFFF
	v = (v | v<<8) & 0x00FF00FF00FF00FF
	v = (v | v<<4) & 0x0F0F0F0F0F0F0F0F
	v = (v | v<<2) & 0x3333333333333333
	v = (v | v<<1) & 0x5555555555555555
	return v
}

// squash is spread's inverse: the even bits of v.
func squash(v uint64) uint32 {
	v &= 0x5555555555555555
	v = (v | v>>1) & 0x3333333333333333
	v = (v | v>>2) & 0x0F0F0F0F0F0F0F0F
	v = (v | v>>4) & 0x00FF00FF00FF00FF
	v = (v | v>>8) & 0x0000FFFF0000FFFF
	v = (v | v>>16) & 0x00000000FFFFFFFF
	return uint32(v)
}

// encode is Redis's geohashEncode; ok false for a position outside the
// ranges (or outside the Mercator limits, whatever the ranges).
func encode(lonR, latR Range, lon, lat float64, step uint8) (Hash, bool) {
	if step > 32 || step == 0 {
		return Hash{}, false
	}
	if lon > LonMax || lon < LonMin || lat > LatMax || lat < LatMin {
		return Hash{}, false
	}
	if lat < latR.Min || lat > latR.Max || lon < lonR.Min || lon > lonR.Max {
		return Hash{Step: step}, false
	}
	latOff := (lat - latR.Min) / (latR.Max - latR.Min)
	lonOff := (lon - lonR.Min) / (lonR.Max - lonR.Min)
	latOff *= float64(uint64(1) << step)
	lonOff *= float64(uint64(1) << step)
	return Hash{Bits: spread(uint32(latOff)) | spread(uint32(lonOff))<<1, Step: step}, true
}

// Encode returns the 52-bit geohash of a position (the score GEOADD
// stores); ok false outside the limits.
func Encode(lon, lat float64) (uint64, bool) {
	h, ok := encode(lonRange, latRange, lon, lat, StepMax)
	return h.Bits, ok
}

// EncodeStd is the geohash at 26 steps with the standard latitude range
// ±90, from which GEOHASH prints its 11-character strings.
func EncodeStd(lon, lat float64) uint64 {
	h, _ := encode(Range{-180, 180}, Range{-90, 90}, lon, lat, StepMax)
	return h.Bits
}

// decode is Redis's geohashDecode.
func decode(lonR, latR Range, h Hash) Area {
	latScale := latR.Max - latR.Min
	lonScale := lonR.Max - lonR.Min
	ilat := squash(h.Bits)
	ilon := squash(h.Bits >> 1)
	n := float64(uint64(1) << h.Step)
	return Area{Hash: h,
		Lat: Range{latR.Min + (float64(ilat)*1.0/n)*latScale, latR.Min + (float64(ilat+1)*1.0/n)*latScale},
		Lon: Range{lonR.Min + (float64(ilon)*1.0/n)*lonScale, lonR.Min + (float64(ilon+1)*1.0/n)*lonScale},
	}
}

// Decode returns the position of a stored score: the centre of its cell,
// clamped to the limits.
func Decode(score float64) (lon, lat float64) {
	a := decode(lonRange, latRange, Hash{Bits: uint64(score), Step: StepMax})
	lon = (a.Lon.Min + a.Lon.Max) / 2
	lon = min(max(lon, LonMin), LonMax)
	lat = (a.Lat.Min + a.Lat.Max) / 2
	lat = min(max(lat, LatMin), LatMax)
	return lon, lat
}

// ---- distances ----

// LatDistance is the distance in metres between two latitudes on one
// meridian.
func LatDistance(lat1, lat2 float64) float64 {
	return earthR * math.Abs(lat2*degToRad-lat1*degToRad)
}

// Distance is the haversine distance in metres between two positions
// (degrees), as Redis 7.0's geohashGetDistance computes it.
func Distance(lon1, lat1, lon2, lat2 float64) float64 {
	lon1r := lon1 * degToRad
	lon2r := lon2 * degToRad
	v := sinCR((lon2r - lon1r) / 2)
	if v == 0 {
		return LatDistance(lat1, lat2)
	}
	lat1r := lat1 * degToRad
	lat2r := lat2 * degToRad
	u := sinCR((lat2r - lat1r) / 2)
	a := float64(u*u) + float64(float64(float64(cosCR(lat1r)*cosCR(lat2r))*v)*v)
	return 2.0 * earthR * asinCR(math.Sqrt(a))
}

// Shape is a search area around a centre: a circle of Radius or a box of
// Width by Height, in units of Conversion metres.
type Shape struct {
	Lon, Lat      float64
	Box           bool
	Radius        float64
	Width, Height float64
	Conversion    float64 // metres per unit
}

// Within reports whether the position is in the shape, and its distance
// in metres from the centre (Redis's geoAppendIfWithinShape).
func (s *Shape) Within(lon, lat float64) (float64, bool) {
	if !s.Box {
		d := Distance(s.Lon, s.Lat, lon, lat)
		return d, d <= s.Radius*s.Conversion
	}
	w, h := s.Width*s.Conversion, s.Height*s.Conversion
	if LatDistance(lat, s.Lat) > h/2 {
		return 0, false
	}
	if Distance(lon, lat, s.Lon, lat) > w/2 {
		return 0, false
	}
	return Distance(s.Lon, s.Lat, lon, lat), true
}

// boundingBox is Redis's geohashBoundingBox: min lon, min lat, max lon,
// max lat.
func (s *Shape) boundingBox() (minLon, minLat, maxLon, maxLat float64) {
	var height, width float64
	if s.Box {
		height = s.Conversion * (s.Height / 2)
		width = s.Conversion * (s.Width / 2)
	} else {
		height = s.Conversion * s.Radius
		width = s.Conversion * s.Radius
	}
	latDelta := (height / earthR) / degToRad
	lonDeltaTop := (width / earthR / cosCR((s.Lat+latDelta)*degToRad)) / degToRad
	lonDeltaBottom := (width / earthR / cosCR((s.Lat-latDelta)*degToRad)) / degToRad
	if s.Lat < 0 {
		minLon, maxLon = s.Lon-lonDeltaBottom, s.Lon+lonDeltaBottom
	} else {
		minLon, maxLon = s.Lon-lonDeltaTop, s.Lon+lonDeltaTop
	}
	return minLon, s.Lat - latDelta, maxLon, s.Lat + latDelta
}

// stepsForRadius is Redis's geohashEstimateStepsByRadius.
func stepsForRadius(meters, lat float64) uint8 {
	if meters == 0 {
		return 26
	}
	step := 1
	for meters < mercator {
		meters *= 2
		step++
	}
	step -= 2
	if lat > 66 || lat < -66 {
		step--
		if lat > 80 || lat < -80 {
			step--
		}
	}
	return uint8(min(max(step, 1), 26))
}

func moveX(h Hash, d int) Hash {
	if d == 0 {
		return h
	}
	x := h.Bits & 0xaaaaaaaaaaaaaaaa
	y := h.Bits & 0x5555555555555555
	zz := uint64(0x5555555555555555) >> (64 - uint(h.Step)*2)
	if d > 0 {
		x += zz + 1
	} else {
		x |= zz
		x -= zz + 1
	}
	x &= 0xaaaaaaaaaaaaaaaa >> (64 - uint(h.Step)*2)
	return Hash{Bits: x | y, Step: h.Step}
}

func moveY(h Hash, d int) Hash {
	if d == 0 {
		return h
	}
	x := h.Bits & 0xaaaaaaaaaaaaaaaa
	y := h.Bits & 0x5555555555555555
	zz := uint64(0xaaaaaaaaaaaaaaaa) >> (64 - uint(h.Step)*2)
	if d > 0 {
		y += zz + 1
	} else {
		y |= zz
		y -= zz + 1
	}
	y &= 0x5555555555555555 >> (64 - uint(h.Step)*2)
	return Hash{Bits: x | y, Step: h.Step}
}

// Neighbour order in a search (Redis's membersOfAllNeighbors).
const (
	center = iota
	north
	south
	east
	west
	northEast
	northWest
	southEast
	southWest
)

func neighbours(h Hash) [9]Hash {
	var n [9]Hash
	n[center] = h
	n[east] = moveY(moveX(h, 1), 0)
	n[west] = moveY(moveX(h, -1), 0)
	n[south] = moveY(moveX(h, 0), -1)
	n[north] = moveY(moveX(h, 0), 1)
	n[northWest] = moveY(moveX(h, -1), 1)
	n[southWest] = moveY(moveX(h, -1), -1)
	n[northEast] = moveY(moveX(h, 1), 1)
	n[southEast] = moveY(moveX(h, 1), -1)
	return n
}

// Areas returns the nine cells (centre, N, S, E, W, NE, NW, SE, SW; a
// zero Hash for one that is dropped) a search of s scans, as Redis's
// geohashCalculateAreasByShapeWGS84 chooses them.
func Areas(s *Shape) [9]Hash {
	minLon, minLat, maxLon, maxLat := s.boundingBox()
	var radius float64
	if s.Box {
		radius = math.Sqrt(float64((s.Width/2)*(s.Width/2)) + float64((s.Height/2)*(s.Height/2)))
	} else {
		radius = s.Radius
	}
	radius *= s.Conversion
	steps := stepsForRadius(radius, s.Lat)
	hash, _ := encode(lonRange, latRange, s.Lon, s.Lat, steps)
	n := neighbours(hash)
	area := decode(lonRange, latRange, hash)
	decrease := false
	{
		no := decode(lonRange, latRange, n[north])
		so := decode(lonRange, latRange, n[south])
		ea := decode(lonRange, latRange, n[east])
		we := decode(lonRange, latRange, n[west])
		if no.Lat.Max < maxLat || so.Lat.Min > minLat || ea.Lon.Max < maxLon || we.Lon.Min > minLon {
			decrease = true
		}
	}
	if steps > 1 && decrease {
		steps--
		hash, _ = encode(lonRange, latRange, s.Lon, s.Lat, steps)
		n = neighbours(hash)
		area = decode(lonRange, latRange, hash)
	}
	if steps >= 2 {
		if area.Lat.Min < minLat {
			n[south], n[southWest], n[southEast] = Hash{}, Hash{}, Hash{}
		}
		if area.Lat.Max > maxLat {
			n[north], n[northEast], n[northWest] = Hash{}, Hash{}, Hash{}
		}
		if area.Lon.Min < minLon {
			n[west], n[southWest], n[northWest] = Hash{}, Hash{}, Hash{}
		}
		if area.Lon.Max > maxLon {
			n[east], n[southEast], n[northEast] = Hash{}, Hash{}, Hash{}
		}
	}
	return n
}

// ScoreRange is the [min, max) score interval of a cell's members.
func ScoreRange(h Hash) (lo, hi float64) {
	shift := uint(52 - uint(h.Step)*2)
	return float64(h.Bits << shift), float64((h.Bits + 1) << shift)
}

// GeohashString is GEOHASH's 11-character text of a standard-range hash
// (the 11th character is always '0': 52 bits give ten).
func GeohashString(bits uint64) string {
	const alphabet = "0123456789bcdefghjkmnpqrstuvwxyz"
	var buf [11]byte
	for i := 0; i < 11; i++ {
		idx := 0
		if i < 10 {
			idx = int(bits>>(52-uint(i+1)*5)) & 0x1f
		}
		buf[i] = alphabet[idx]
	}
	return string(buf[:])
}
