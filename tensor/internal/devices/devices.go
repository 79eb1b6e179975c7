// Package devices holds the hooks through which optional devices join
// package tensor. Package tensor/cuda sets CUDA when a program imports
// it, so that a program that does not import it never links the CUDA
// bindings: they load the driver with dlopen, which links the program
// dynamically against the C library.
package devices

import "errors"

// ErrUnavailable is wrapped by every error saying that CUDA cannot run in
// this program or on this machine: the program does not import
// tensor/cuda, the platform has no bindings, the driver library is
// missing, or the driver sees no device.
var ErrUnavailable = errors.New("CUDA unavailable")

// CUDA binds the driver and opens the CUDA device with the given ordinal,
// returning the Backend that runs tensor operations on it, or says why it
// cannot (wrapping ErrUnavailable where the machine or the program cannot
// run CUDA at all). It is nil in a program that does not import
// tensor/cuda.
var CUDA func(ordinal int) (Backend, error)
