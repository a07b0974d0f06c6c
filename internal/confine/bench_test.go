package confine_test

import (
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/internal/confine"
	"github.com/mcpipe/mcpipe/internal/confine/confinetest"
)

// BenchmarkStart runs a trivial program to completion, alternately with
// plain cmd.Start and through a Spawner, in the same run, and reports the
// p50 of each and their ratio (confined/plain).
//
//	go test -run '^$' -bench Start -benchtime 2000x ./internal/confine
//
// The no-network runs add NoNetwork: Landlock's TCP rules and the seccomp
// filter, which every system call of the child then passes through.
func BenchmarkStart(b *testing.B) {
	b.Run("true", func(b *testing.B) { benchStart(b, false, "/bin/true") })
	b.Run("true-no-network", func(b *testing.B) { benchStart(b, true, "/bin/true") })
	b.Run("sh", func(b *testing.B) { benchStart(b, false, "/bin/sh", "-c", "echo hi >/dev/null") })
	b.Run("sh-no-network", func(b *testing.B) { benchStart(b, true, "/bin/sh", "-c", "echo hi >/dev/null") })
}

func benchStart(b *testing.B, noNetwork bool, argv ...string) {
	confinetest.Need(b, 1)
	if noNetwork {
		confinetest.Need(b, 4)
	}
	s, err := confine.NewSpawner(confine.Policy{Root: b.TempDir(), NoNetwork: noNetwork})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var plain, confined []time.Duration
	once := func(start func(*exec.Cmd) error) time.Duration {
		c := exec.Command(argv[0], argv[1:]...)
		t0 := time.Now()
		if err := start(c); err != nil {
			b.Fatal(err)
		}
		if err := c.Wait(); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	for b.Loop() {
		plain = append(plain, once((*exec.Cmd).Start))
		confined = append(confined, once(s.Start))
	}
	p50 := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2].Microseconds())
	}
	pp, pc := p50(plain), p50(confined)
	b.ReportMetric(pp, "p50-plain-µs")
	b.ReportMetric(pc, "p50-confined-µs")
	b.ReportMetric(pc/pp, "ratio")
}
