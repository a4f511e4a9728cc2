package server

import "testing"

// TestMemoryDoctorReport: Redis 7.0's getMemoryDoctorReport rules, each
// check at and over its threshold: under 5 MB used the instance is empty
// whatever else it shows; the peak over 1.5x used; the resident set over
// 1.4x used and 10 MB more; the spans over 1.1x the live objects and 10 MB
// more; the heap the runtime keeps resident over 1.1x the spans and 10 MB
// more (the anonymous resident set no longer counts there); over 1000
// cached scripts. Several issues come in Redis's order between its head
// and tail.
func TestMemoryDoctorReport(t *testing.T) {
	const mb = 1 << 20
	calm := doctorFigures{used: 100 * mb, peak: 100 * mb, heapObjects: 100 * mb, heapInuse: 100 * mb, rss: 100 * mb, heapRetained: 100 * mb}
	with := func(change func(*doctorFigures)) doctorFigures {
		f := calm
		change(&f)
		return f
	}
	report := func(issues ...string) string {
		s := doctorHead
		for _, i := range issues {
			s += i
		}
		return s + doctorTail
	}
	for _, tc := range []struct {
		name string
		f    doctorFigures
		want string
	}{
		{"calm", calm, doctorNoIssue},
		{"empty", with(func(f *doctorFigures) { f.used, f.peak, f.rss = 5*mb-1, 500*mb, 900*mb }), doctorEmpty},
		{"5 MB is not empty", with(func(f *doctorFigures) {
			f.used, f.peak, f.heapObjects, f.heapInuse, f.rss, f.heapRetained = 5*mb, 5*mb, 5*mb, 5*mb, 5*mb, 5*mb
		}), doctorNoIssue},
		{"peak 1.5x", with(func(f *doctorFigures) { f.peak = 150 * mb }), doctorNoIssue},
		{"peak over 1.5x", with(func(f *doctorFigures) { f.peak = 151 * mb }), report(doctorBigPeak)},
		{"rss 1.4x", with(func(f *doctorFigures) { f.rss = 140 * mb }), doctorNoIssue},
		{"rss over 1.4x of used", with(func(f *doctorFigures) { f.rss, f.heapInuse = 141*mb, 141*mb }), report(doctorHighFrag, doctorAllocFrag)},
		{"rss over 1.4x but under 10 MB more", with(func(f *doctorFigures) {
			f.used, f.peak, f.heapObjects, f.heapInuse, f.rss, f.heapRetained = 6*mb, 6*mb, 6*mb, 6*mb, 15*mb, 6*mb
		}), doctorNoIssue},
		{"spans over 1.1x", with(func(f *doctorFigures) { f.heapInuse, f.rss = 111*mb, 111*mb }), report(doctorAllocFrag)},
		{"spans 1.1x", with(func(f *doctorFigures) { f.heapInuse, f.rss = 110*mb, 110*mb }), doctorNoIssue},
		{"retained heap 1.1x of spans", with(func(f *doctorFigures) { f.heapRetained = 110 * mb }), doctorNoIssue},
		{"retained heap over 1.1x of spans", with(func(f *doctorFigures) { f.heapRetained = 112 * mb }), report(doctorAllocRSS)},
		{"1000 scripts", with(func(f *doctorFigures) { f.scripts = 1000 }), doctorNoIssue},
		{"1001 scripts", with(func(f *doctorFigures) { f.scripts = 1001 }), report(doctorScripts)},
		{"all", doctorFigures{used: 100 * mb, peak: 200 * mb, heapObjects: 100 * mb, heapInuse: 200 * mb, rss: 400 * mb, heapRetained: 400 * mb, scripts: 2000},
			report(doctorBigPeak, doctorHighFrag, doctorAllocFrag, doctorAllocRSS, doctorScripts)},
	} {
		if got := memoryDoctorReport(tc.f); got != tc.want {
			t.Errorf("%s: got\n%q\nwant\n%q", tc.name, got, tc.want)
		}
	}
}
