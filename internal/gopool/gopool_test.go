package gopool

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

// A function that blocks never holds up the next one: Go starts another
// goroutine when none is idle.
func TestBlockedFunctionHoldsUpNothing(t *testing.T) {
	p := New()
	release := make(chan struct{})
	defer close(release)
	p.Go(func() { <-release })
	ran := make(chan struct{})
	p.Go(func() { close(ran) })
	select {
	case <-ran:
	case <-time.After(10 * time.Second):
		t.Fatal("the second function waited for the first")
	}
}

// Every function runs once, and once they are done the pool's goroutines
// end within Idle: a busy spell leaves nothing behind.
func TestGoroutinesEndWhenIdle(t *testing.T) {
	base := runtime.NumGoroutine()
	p := New()
	var wg sync.WaitGroup
	var mu sync.Mutex
	ran := 0
	for range 1000 {
		wg.Add(1)
		p.Go(func() {
			defer wg.Done()
			mu.Lock()
			ran++
			mu.Unlock()
		})
	}
	wg.Wait()
	if ran != 1000 {
		t.Fatalf("%d functions ran, want 1000", ran)
	}
	deadline := time.Now().Add(Idle + 10*time.Second)
	for runtime.NumGoroutine() > base {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines left after %v idle, baseline %d", runtime.NumGoroutine(), Idle, base)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
