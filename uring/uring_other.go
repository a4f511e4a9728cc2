//go:build !linux

package uring

import "errors"

// Ring is unavailable off Linux: New always fails.
type Ring struct{}

// Completion is one reaped request.
type Completion struct {
	User uint64
	Res  int32
}

// Err is the completion's result as an error.
func (c Completion) Err() error { return nil }

// ErrFull is returned by Submit when the submission queue has no free slot.
var ErrFull = errors.New("uring: submission queue full")

// New fails: io_uring is Linux only.
func New(entries uint32) (*Ring, error) { return nil, errors.New("uring: not available on this OS") }

func (r *Ring) EventFd() int { return -1 }
func (r *Ring) ClearEvent()  {}
func (r *Ring) SubmitDatasync(fd int, off int64, n uint32, u uint64) error {
	return errors.ErrUnsupported
}
func (r *Ring) Peek() (Completion, bool)  { return Completion{}, false }
func (r *Ring) Wait() (Completion, error) { return Completion{}, errors.ErrUnsupported }
func (r *Ring) Close() error              { return nil }
