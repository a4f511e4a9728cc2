// Package crashimage holds the crash-image test of pmem durability mode: a
// run of keyspace writes is recorded with pmem's store/flush/fence recorder
// (build tag pmemtrace), every point between two events of the run is
// turned into crash images in the style of PMDK's pmreorder (each 8-byte
// unit stored since it was last flushed and fenced holds its old or a new
// value), and recovery must start on each image and hold exactly a prefix
// of the run's operations that includes every acknowledged one.
//
// The package has no code of its own; run it with
//
//	go test -tags pmemtrace ./crashimage/
//
// (see crashimage_test.go for the sample sizes, the long run and the
// mutation check).
package crashimage
