// Package gopool runs functions on goroutines that are kept for a while
// after their function returns, to run the next one.
//
// Why: a server that starts a goroutine per request pays, on every request,
// for the goroutine and for growing its stack from the minimum to what the
// handler needs (runtime.morestack copies the stack at each doubling). For
// a call that mcp-route forwards in a few tens of µs that was 7% of its CPU.
// A kept goroutine has grown its stack once.
//
// Go never waits: when no kept goroutine is idle it starts a new one, so a
// function is never queued behind another (a handler may block for as long
// as its call lasts). A goroutine idle for Idle is let go, so a process
// that was busy returns to its baseline of goroutines within Idle.
package gopool

import "time"

// Idle is how long a goroutine waits for its next function before it ends.
const Idle = 2 * time.Second

// Pool is a set of kept goroutines. The zero value is not usable; use New.
// A Pool is safe for concurrent use.
type Pool struct {
	work chan func()
}

// New returns an empty Pool.
func New() *Pool { return &Pool{work: make(chan func())} }

// Go runs f on an idle kept goroutine, or on a new one.
func (p *Pool) Go(f func()) {
	select {
	case p.work <- f:
	default:
		go p.keep(f)
	}
}

// keep runs f, then every function handed to it, until it has been idle
// for Idle.
func (p *Pool) keep(f func()) {
	idle := time.NewTimer(Idle)
	for {
		f()
		f = nil // not kept alive while idle
		idle.Reset(Idle)
		select {
		case f = <-p.work:
		case <-idle.C:
			return
		}
	}
}
