package geo

import (
	"math"
	"testing"
)

// Values from redis.io's GEOADD/GEOHASH/GEODIST pages (Redis 7.0).
func TestKnownPositions(t *testing.T) {
	bits, ok := Encode(13.361389, 38.115556)
	if !ok || bits != 3479099956230698 {
		t.Fatalf("Palermo encodes as %d %v, want 3479099956230698", bits, ok)
	}
	lon, lat := Decode(float64(bits))
	if math.Abs(lon-13.361389) > 1e-5 || math.Abs(lat-38.115556) > 1e-5 {
		t.Fatalf("Palermo decodes to %v %v", lon, lat)
	}
	if s := GeohashString(EncodeStd(lon, lat)); s != "sqc8b49rny0" {
		t.Fatalf("Palermo geohash %q, want sqc8b49rny0", s)
	}
	cbits, _ := Encode(15.087269, 37.502669)
	clon, clat := Decode(float64(cbits))
	if d := Distance(lon, lat, clon, clat); math.Abs(d-166274.1516) > 0.001 {
		t.Fatalf("Palermo-Catania %.4f m, want 166274.1516", d)
	}
}

func TestEncodeLimits(t *testing.T) {
	for _, p := range [][2]float64{{180.1, 0}, {-180.1, 0}, {0, 85.06}, {0, -85.06}} {
		if _, ok := Encode(p[0], p[1]); ok {
			t.Errorf("%v encoded", p)
		}
	}
	// The upper limits themselves are accepted; their cell index is 2^26,
	// one past the grid, so the hash has a 53rd bit, as in Redis (the e2e
	// geo.txt compares GEOPOS of such points with redis-server).
	for _, p := range [][2]float64{{180, LatMax}, {-180, LatMin}, {0, 0}} {
		if _, ok := Encode(p[0], p[1]); !ok {
			t.Errorf("%v refused", p)
		}
	}
	if bits, _ := Encode(-180, LatMin); bits != 0 {
		t.Errorf("south-west corner %d", bits)
	}
}

// Neighbours wrap around the antimeridian: east of the easternmost cell
// is the westernmost one.
func TestNeighboursWrap(t *testing.T) {
	h, _ := encode(lonRange, latRange, 179.99, 0, 10)
	n := neighbours(h)
	e := decode(lonRange, latRange, n[east])
	if e.Lon.Min != -180 {
		t.Fatalf("east of %v starts at %v", decode(lonRange, latRange, h).Lon, e.Lon)
	}
	w := decode(lonRange, latRange, moveX(n[east], -1))
	if w.Hash != h {
		t.Fatal("west of east is not the cell")
	}
}

func TestStepsForRadius(t *testing.T) {
	if stepsForRadius(0, 0) != 26 || stepsForRadius(1e9, 0) != 1 {
		t.Fatal("frame")
	}
	if a, b := stepsForRadius(1000, 0), stepsForRadius(1000, 81); b != a-2 {
		t.Fatalf("polar step %d vs %d", b, a)
	}
}

// The correctly rounded functions give glibc's results (trigdata_test.go)
// but for rare last-bit cases (glibc's sin and cos are not correctly
// rounded since 2.28, only nearly), where Go's math package is off far
// more often.
func TestTrigMatchesGlibc(t *testing.T) {
	ulp := func(x float64) float64 { return math.Abs(math.Nextafter(x, math.Inf(1)) - x) }
	ours, goOff := 0, 0
	check := func(name string, x, got, want, gos float64) {
		if got != want {
			ours++
			if math.Abs(got-want) > ulp(want) {
				t.Errorf("%s(%v) = %v, glibc %v: more than one ulp", name, x, got, want)
			}
		}
		if gos != want {
			goOff++
		}
	}
	for _, v := range glibcSinCos {
		check("sin", v[0], sinCR(v[0]), v[1], math.Sin(v[0]))
		check("cos", v[0], cosCR(v[0]), v[2], math.Cos(v[0]))
	}
	for _, v := range glibcAsin {
		check("asin", v[0], asinCR(v[0]), v[1], math.Asin(v[0]))
	}
	n := len(glibcSinCos)*2 + len(glibcAsin)
	t.Logf("differ from glibc: ours %d, Go's math %d, of %d values", ours, goOff, n)
	if ours*100 > n {
		t.Errorf("%d of %d values differ from glibc", ours, n)
	}
}
