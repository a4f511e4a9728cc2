package geo

import "math"

// Correctly rounded sine, cosine and arcsine.
//
// Redis computes distances with the C library's sin, cos and asin, and a
// STOREDIST score prints all 17 digits. glibc's are within a fraction of
// an ulp (asin correctly rounded); Go's math package is off in the last
// place for about a third of arguments. These evaluate in double-double
// arithmetic (about 106 bits) and round once: the correctly rounded
// result, which is glibc's but for rare last-bit cases of sin and cos
// (TestTrigMatchesGlibc measures how rare).

// dd is an unevaluated sum hi+lo with |lo| <= ulp(hi)/2.
type dd struct{ hi, lo float64 }

func twoSum(a, b float64) dd {
	s := a + b
	bb := s - a
	return dd{s, (a - (s - bb)) + (b - bb)}
}

func quickTwoSum(a, b float64) dd {
	s := a + b
	return dd{s, b - (s - a)}
}

func twoProd(a, b float64) dd {
	p := a * b
	return dd{p, math.FMA(a, b, -p)}
}

func (a dd) add(b dd) dd {
	s := twoSum(a.hi, b.hi)
	t := twoSum(a.lo, b.lo)
	s.lo += t.hi
	s = quickTwoSum(s.hi, s.lo)
	s.lo += t.lo
	return quickTwoSum(s.hi, s.lo)
}

func (a dd) neg() dd { return dd{-a.hi, -a.lo} }

func (a dd) mul(b dd) dd {
	p := twoProd(a.hi, b.hi)
	p.lo += a.hi*b.lo + a.lo*b.hi
	return quickTwoSum(p.hi, p.lo)
}

func (a dd) mulF(b float64) dd {
	p := twoProd(a.hi, b)
	p.lo += a.lo * b
	return quickTwoSum(p.hi, p.lo)
}

func (a dd) divF(b float64) dd {
	q1 := a.hi / b
	p := twoProd(q1, b)
	s := twoSum(a.hi, -p.hi)
	s.lo -= p.lo
	s.lo += a.lo
	q2 := (s.hi + s.lo) / b
	return quickTwoSum(q1, q2)
}

func (a dd) div(b dd) dd {
	q1 := a.hi / b.hi
	r := a.add(b.mulF(q1).neg())
	q2 := r.hi / b.hi
	r = r.add(b.mulF(q2).neg())
	q3 := r.hi / b.hi
	return quickTwoSum(q1, q2).add(dd{q3, 0})
}

// π/2 as a sum of three doubles.
const (
	pio2a = 1.5707963267948966
	pio2b = 6.123233995736766e-17
	pio2c = -1.4973849048591698e-33
)

// sinCosDD returns sin x and cos x in double-double, for |x| up to a few
// thousand (ample for radians of degrees).
func sinCosDD(x float64) (s, c dd) {
	k := math.Round(x / pio2a)
	r := twoSum(x, -k*pio2a) // k*pio2a is exact for small k
	r = r.add(twoProd(k, pio2b).neg())
	r = r.add(dd{-k * pio2c, 0})
	r2 := r.mul(r)
	// Taylor series: sin r = r - r^3/3! + ..., cos r = 1 - r^2/2! + ...
	sn, term := r, r
	for i := 1; i < 30; i++ {
		term = term.mul(r2).divF(float64((2 * i) * (2*i + 1))).neg()
		sn = sn.add(term)
		if math.Abs(term.hi) < 1e-40 {
			break
		}
	}
	cs, term := dd{1, 0}, dd{1, 0}
	for i := 1; i < 30; i++ {
		term = term.mul(r2).divF(float64((2*i - 1) * (2 * i))).neg()
		cs = cs.add(term)
		if math.Abs(term.hi) < 1e-40 {
			break
		}
	}
	switch int64(k) & 3 {
	case 0:
		return sn, cs
	case 1:
		return cs, sn.neg()
	case 2:
		return sn.neg(), cs.neg()
	}
	return cs.neg(), sn
}

func sinCR(x float64) float64 {
	if x == 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return math.Sin(x)
	}
	s, _ := sinCosDD(x)
	return s.hi + s.lo
}

func cosCR(x float64) float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return math.Cos(x)
	}
	_, c := sinCosDD(x)
	return c.hi + c.lo
}

// asinCR refines Go's asin by a Newton step on sin in double-double.
func asinCR(y float64) float64 {
	z0 := math.Asin(y)
	if y == 0 || math.Abs(y) >= 1 || math.IsNaN(y) {
		return z0
	}
	s, c := sinCosDD(z0)
	if c.hi == 0 {
		return z0
	}
	corr := s.add(dd{-y, 0}).div(c)
	z := dd{z0, 0}.add(corr.neg())
	return z.hi + z.lo
}
