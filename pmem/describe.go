package pmem

import (
	"fmt"
	"strings"
)

// Describe returns the one start-up log line (no trailing newline) saying
// which durability mode is in force, with which flush instruction, on which
// filesystem (Filesystem(dir); "unknown filesystem" if dir cannot be
// examined), whether DAX/MAP_SYNC is in use (dax, normally Region.DAX), and
// what a Persisted write survives. It never claims more than the mode
// gives, following DESIGN.md "Durability modes":
//
//   - pmem survives a process crash everywhere and power loss only with
//     DAX+MAP_SYNC (or where there is no flush instruction and Persist
//     falls back to msync);
//   - msync survives a process crash and power loss on any filesystem,
//     except one that lives in RAM (tmpfs, ramfs, hugetlbfs), where
//     nothing survives power loss;
//   - none survives a process crash only.
//
// Example: "durability=pmem (clwb+sfence) on ext4, no DAX: survives
// process crash (kill -9); not power loss (as redis-server appendfsync
// everysec); --durability msync is the mode for power safety".
func Describe(mode Mode, dir string, dax bool) string {
	fs, err := Filesystem(dir)
	if err != nil {
		fs = ""
	}
	return describe(mode, fs, FlushInstruction(), dax)
}

// Survival phrases used by describe.
const (
	survivesBoth  = "survives process crash (kill -9) and power loss"
	survivesCrash = "survives process crash (kill -9); not power loss"
)

// powerSafetyHint follows the survival phrase of a mode that does not
// survive power loss on a filesystem where msync would.
const powerSafetyHint = " (as redis-server appendfsync everysec); --durability msync is the mode for power safety"

// describe is Describe with the filesystem name fs ("" if unknown) and the
// flush instruction given, so every combination can be tested on any
// machine.
func describe(mode Mode, fs, instr string, dax bool) string {
	on := fs
	if on == "" {
		on = "unknown filesystem"
	}
	daxText := "no DAX"
	if dax {
		daxText = "DAX+MAP_SYNC"
	}
	inRAM := fs == "tmpfs" || fs == "ramfs" || fs == "hugetlbfs"
	// msyncSurvives is what an msync-backed Persist gives on fs.
	msyncSurvives := survivesBoth
	switch {
	case inRAM:
		msyncSurvives = survivesCrash + " (" + fs + " is in RAM)"
	case fs == "":
		msyncSurvives = "survives process crash (kill -9); power loss only if the filesystem is on stable storage"
	}

	var how, survives string
	switch mode {
	case ModePmem:
		switch {
		case instr == "none" || instr == "":
			how = "no cache-line flush instruction, msync instead"
			survives = msyncSurvives
		case dax && !inRAM:
			how = instr + "+sfence"
			survives = survivesBoth
		default:
			how = instr + "+sfence"
			survives = survivesCrash
			if inRAM {
				survives += " (" + fs + " is in RAM)"
			} else {
				survives += powerSafetyHint
			}
		}
	case ModeMsync:
		how = "msync MS_SYNC"
		survives = msyncSurvives
	case ModeNone:
		how = "no flush"
		survives = survivesCrash
		if !inRAM {
			survives += strings.Replace(powerSafetyHint, "everysec", "no", 1)
		}
	default:
		return fmt.Sprintf("durability=%s: invalid mode; survives nothing", mode)
	}
	return fmt.Sprintf("durability=%s (%s) on %s, %s: %s", mode, how, on, daxText, survives)
}
