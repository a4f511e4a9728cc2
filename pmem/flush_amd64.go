package pmem

// Implemented in flush_amd64.s.

// cpuid executes CPUID with EAX=leaf and ECX=subleaf.
func cpuid(leaf, subleaf uint32) (eax, ebx, ecx, edx uint32)

// flushCLWB, flushCLFLUSHOPT and flushCLFLUSH write back, with their
// instruction, every cache line that holds a byte of b (starting from b's
// address rounded down to 64) and return how many lines that was. None of
// them fences.
func flushCLWB(b []byte) int
func flushCLFLUSHOPT(b []byte) int
func flushCLFLUSH(b []byte) int

// Drain is a store fence (SFENCE): when it returns, every Flush issued
// before it by the calling goroutine has completed, that is the lines
// have left the CPU caches (on DAX: reached the persistence domain), and
// no later store of the goroutine is visible before that. Flushes by other
// goroutines are covered when they happen before Drain through Go
// synchronization (a mutex, channel or atomic): on amd64 those use locked
// instructions, which CLWB and CLFLUSHOPT are ordered with. Drain has no
// error; it costs tens of nanoseconds plus the wait for pending flushes.
//
// traceFence records the fence in a test build with the pmemtrace tag
// (trace.go); otherwise it is empty and inlined away, so Drain compiles
// to the SFENCE call alone.
func Drain() {
	sfence()
	traceFence()
}

// sfence executes SFENCE.
func sfence()

// CPUID feature bits (Intel SDM vol. 2A, CPUID).
const (
	cpuid7EBXCLFLUSHOPT = 1 << 23 // CPUID.(EAX=7,ECX=0):EBX[23]
	cpuid7EBXCLWB       = 1 << 24 // CPUID.(EAX=7,ECX=0):EBX[24]
	cpuid1EDXCLFLUSH    = 1 << 19 // CPUID.(EAX=1):EDX[19]
)

// flushLines is the chosen write-back loop (nil if the CPU has none) and
// flushName its instruction's name.
var flushLines, flushName = chooseFlush(cpuid)

// chooseFlush picks the best write-back instruction that id (a CPUID
// implementation, replaceable in tests) reports: CLWB keeps the line
// cached, CLFLUSHOPT evicts it but is weakly ordered, CLFLUSH evicts it
// and is serialized against every other store and flush.
func chooseFlush(id func(leaf, subleaf uint32) (eax, ebx, ecx, edx uint32)) (func([]byte) int, string) {
	maxLeaf, _, _, _ := id(0, 0)
	if maxLeaf >= 7 {
		_, ebx, _, _ := id(7, 0)
		if ebx&cpuid7EBXCLWB != 0 {
			return flushCLWB, "clwb"
		}
		if ebx&cpuid7EBXCLFLUSHOPT != 0 {
			return flushCLFLUSHOPT, "clflushopt"
		}
	}
	if maxLeaf >= 1 {
		_, _, _, edx := id(1, 0)
		if edx&cpuid1EDXCLFLUSH != 0 {
			return flushCLFLUSH, "clflush"
		}
	}
	return nil, "none"
}

// FlushInstruction names the cache-line write-back instruction Flush uses,
// chosen once by CPUID at start-up: "clwb", "clflushopt" or "clflush"
// ("none" on an amd64 CPU reporting none of them; Persist then falls back
// to msync).
func FlushInstruction() string { return flushName }
