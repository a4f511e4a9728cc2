package pmem

import "testing"

func TestParseModeRoundTrip(t *testing.T) {
	for _, m := range []Mode{ModePmem, ModeMsync, ModeNone} {
		got, err := ParseMode(m.String())
		if err != nil {
			t.Fatalf("ParseMode(%q): %v", m.String(), err)
		}
		if got != m {
			t.Errorf("ParseMode(%q) = %v, want %v", m.String(), got, m)
		}
	}
	if s := []string{ModePmem.String(), ModeMsync.String(), ModeNone.String()}; s[0] != "pmem" || s[1] != "msync" || s[2] != "none" {
		t.Errorf("mode names = %q, want [pmem msync none]", s)
	}
	if got := Mode(7).String(); got != "Mode(7)" {
		t.Errorf("Mode(7).String() = %q", got)
	}
	var zero Mode
	if zero != ModePmem {
		t.Errorf("zero Mode is %v, want pmem (the default)", zero)
	}
}

func TestParseModeError(t *testing.T) {
	for _, s := range []string{"x", "", "PMEM", "fsync", " none"} {
		_, err := ParseMode(s)
		if err == nil {
			t.Fatalf("ParseMode(%q) succeeded", s)
		}
		want := `pmem: unknown durability mode "` + s + `" (want pmem, msync or none)`
		if err.Error() != want {
			t.Errorf("ParseMode(%q) error = %q, want %q", s, err, want)
		}
	}
}
