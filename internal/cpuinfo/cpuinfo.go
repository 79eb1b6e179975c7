// Package cpuinfo reads the sizes of the data caches of the processor the
// program runs on, so that kernels can choose their cache blocking from
// the machine itself rather than from a table of CPU models.
//
// On amd64 the sizes come from CPUID: the deterministic cache parameters
// (leaf 4 on Intel, leaf 0x8000001D on AMD with topology extensions), else
// AMD's legacy leaves 0x80000005 and 0x80000006. Elsewhere, or where CPUID
// says nothing, Linux's /sys/devices/system/cpu/cpu0/cache is read. Values
// outside plausible bounds (virtual machines report some odd ones) are
// dropped, and a level that no source reports falls back to a default that
// suits most desktop and server cores of the last decade.
package cpuinfo

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// Caches describes the data caches seen by one core.
type Caches struct {
	// L1D and L2 are the per-core level-1 data and level-2 cache sizes in
	// bytes.
	L1D, L2 int
	// L3 is the size in bytes of the last-level cache shared by the cores
	// of L3Sharing logical processors; 0 if there is none or it is unknown.
	L3 int
	// L3Sharing is how many logical processors share L3 (0 if unknown).
	L3Sharing int
	// Source names where each of L1D, L2 and L3 came from, e.g.
	// "cpuid 0x80000005/6, default".
	Source string
}

// Default cache sizes for levels no source reports: a 32 KiB L1 data
// cache and a 512 KiB L2 are at or below those of the x86 and Arm server
// and desktop cores of the last decade, so blocking for them is safe.
const (
	DefaultL1D = 32 << 10
	DefaultL2  = 512 << 10
)

// String formats the caches for a benchmark header, e.g.
// "L1d 48 KiB, L2 1 MiB, L3 32 MiB shared by 16 (cpuid)".
func (c Caches) String() string {
	s := fmt.Sprintf("L1d %s, L2 %s", size(c.L1D), size(c.L2))
	if c.L3 > 0 {
		s += ", L3 " + size(c.L3)
		if c.L3Sharing > 0 {
			s += fmt.Sprintf(" shared by %d", c.L3Sharing)
		}
	}
	return s + " (" + c.Source + ")"
}

func size(b int) string {
	if b >= 1<<20 && b%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", b>>20)
	}
	return fmt.Sprintf("%d KiB", b>>10)
}

// Detect returns this machine's data caches. It reads them once; later
// calls return the same value.
var Detect = sync.OnceValue(func() Caches { return combine(fromCPUID(), fromSysfs("/sys/devices/system/cpu/cpu0/cache")) })

// level is what one source knows of one cache level.
type level struct {
	size, sharing int
}

// report is what one source knows of all levels, with its name.
type report struct {
	name        string
	l1d, l2, l3 level
}

// combine takes each level from the first source that knows it, checks it
// against plausible bounds, and falls back to the defaults.
func combine(sources ...report) Caches {
	var c Caches
	var names []string
	use := func(dst *int, sharing *int, pick func(report) level, lo, hi int) {
		for _, r := range sources {
			if l := pick(r); l.size >= lo && l.size <= hi {
				*dst = l.size
				if sharing != nil {
					*sharing = l.sharing
				}
				names = appendOnce(names, r.name)
				return
			}
		}
	}
	use(&c.L1D, nil, func(r report) level { return r.l1d }, 4<<10, 1<<20)
	use(&c.L2, nil, func(r report) level { return r.l2 }, 64<<10, 64<<20)
	use(&c.L3, &c.L3Sharing, func(r report) level { return r.l3 }, max(c.L2, 1<<20), 1<<30)
	if c.L1D == 0 {
		c.L1D = DefaultL1D
		names = appendOnce(names, "default")
	}
	if c.L2 == 0 {
		c.L2 = DefaultL2
		names = appendOnce(names, "default")
	}
	c.Source = strings.Join(names, ", ")
	return c
}

func appendOnce(s []string, v string) []string {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}

// fromSysfs reads Linux's description of cpu0's caches under dir (each
// indexN holding level, type, size and shared_cpu_list). A missing
// directory yields an empty report.
func fromSysfs(dir string) report {
	r := report{name: "sysfs"}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return r
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "index") {
			continue
		}
		read := func(f string) string {
			b, _ := os.ReadFile(filepath.Join(dir, e.Name(), f))
			return strings.TrimSpace(string(b))
		}
		typ := read("type")
		if typ != "Data" && typ != "Unified" {
			continue
		}
		l := level{size: parseSize(read("size")), sharing: countCPUs(read("shared_cpu_list"))}
		switch read("level") {
		case "1":
			r.l1d = l
		case "2":
			r.l2 = l
		case "3":
			r.l3 = l
		}
	}
	return r
}

// parseSize reads sysfs sizes such as "48K", "1024K" or "32M"; 0 if
// malformed.
func parseSize(s string) int {
	mult := 1
	switch {
	case strings.HasSuffix(s, "K"):
		mult, s = 1<<10, strings.TrimSuffix(s, "K")
	case strings.HasSuffix(s, "M"):
		mult, s = 1<<20, strings.TrimSuffix(s, "M")
	case strings.HasSuffix(s, "G"):
		mult, s = 1<<30, strings.TrimSuffix(s, "G")
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < 0 {
		return 0
	}
	return v * mult
}

// countCPUs counts the processors in a list such as "0-7,16-23"; 0 if
// malformed.
func countCPUs(list string) int {
	n := 0
	for _, part := range strings.Split(list, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return 0
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return 0
			}
		}
		n += b - a + 1
	}
	return n
}
