package cpuinfo

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCombineTakesFirstPlausibleSource(t *testing.T) {
	cpuid := report{name: "cpuid", l1d: level{size: 48 << 10}, l2: level{size: 1 << 20}, l3: level{size: 508 << 30}}
	sysfs := report{name: "sysfs", l1d: level{size: 32 << 10}, l2: level{size: 512 << 10}, l3: level{size: 32 << 20, sharing: 16}}
	c := combine(cpuid, sysfs)
	// L1d and L2 from CPUID; its L3 is implausible, so sysfs's is used.
	assert.Equal(t, Caches{L1D: 48 << 10, L2: 1 << 20, L3: 32 << 20, L3Sharing: 16, Source: "cpuid, sysfs"}, c)
	assert.Equal(t, "L1d 48 KiB, L2 1 MiB, L3 32 MiB shared by 16 (cpuid, sysfs)", c.String())
}

func TestCombineDefaults(t *testing.T) {
	// An L1 of 1 KiB and an L2 of 1 TiB are not real; nothing else is known.
	c := combine(report{name: "cpuid", l1d: level{size: 1 << 10}, l2: level{size: 1 << 40}})
	assert.Equal(t, Caches{L1D: DefaultL1D, L2: DefaultL2, Source: "default"}, c)
	assert.Equal(t, "L1d 32 KiB, L2 512 KiB (default)", c.String())
	// An L3 smaller than L2 is dropped too.
	c = combine(report{name: "sysfs", l1d: level{size: 64 << 10}, l2: level{size: 2 << 20}, l3: level{size: 1 << 20}})
	assert.Equal(t, 0, c.L3)
	assert.Equal(t, 2<<20, c.L2)
}

func TestFromSysfs(t *testing.T) {
	dir := t.TempDir()
	write := func(index string, files map[string]string) {
		p := filepath.Join(dir, index)
		assert.NoError(t, os.MkdirAll(p, 0o755))
		for f, v := range files {
			assert.NoError(t, os.WriteFile(filepath.Join(p, f), []byte(v+"\n"), 0o644))
		}
	}
	write("index0", map[string]string{"level": "1", "type": "Data", "size": "48K", "shared_cpu_list": "0"})
	write("index1", map[string]string{"level": "1", "type": "Instruction", "size": "32K", "shared_cpu_list": "0"})
	write("index2", map[string]string{"level": "2", "type": "Unified", "size": "1024K", "shared_cpu_list": "0"})
	write("index3", map[string]string{"level": "3", "type": "Unified", "size": "32M", "shared_cpu_list": "0-7,64-71"})
	r := fromSysfs(dir)
	assert.Equal(t, report{name: "sysfs", l1d: level{48 << 10, 1}, l2: level{1 << 20, 1}, l3: level{32 << 20, 16}}, r)
	assert.Equal(t, report{name: "sysfs"}, fromSysfs(filepath.Join(dir, "missing")))
}

func TestParsers(t *testing.T) {
	for in, want := range map[string]int{"48K": 48 << 10, "32M": 32 << 20, "1G": 1 << 30, "512": 512, "x": 0, "-4K": 0, "": 0} {
		assert.Equal(t, want, parseSize(in), in)
	}
	for in, want := range map[string]int{"0": 1, "0-7": 8, "0-7,64-71": 16, "3,5": 2, "7-3": 0, "a": 0} {
		assert.Equal(t, want, countCPUs(in), in)
	}
}

func TestDetectIsPlausible(t *testing.T) {
	c := Detect()
	assert.GreaterOrEqual(t, c.L1D, 4<<10)
	assert.GreaterOrEqual(t, c.L2, 64<<10)
	assert.NotEmpty(t, c.Source)
	assert.Equal(t, c, Detect())
}
