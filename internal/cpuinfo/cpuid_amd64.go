package cpuinfo

import "fmt"

// cpuid executes the CPUID instruction with EAX = leaf and ECX = sub.
func cpuid(leaf, sub uint32) (eax, ebx, ecx, edx uint32)

// fromCPUID reads the cache sizes from CPUID: the deterministic cache
// parameters where the processor has them, else AMD's legacy leaves.
func fromCPUID() report {
	_, b, c, d := cpuid(0, 0)
	vendor := string([]byte{byte(b), byte(b >> 8), byte(b >> 16), byte(b >> 24),
		byte(d), byte(d >> 8), byte(d >> 16), byte(d >> 24),
		byte(c), byte(c >> 8), byte(c >> 16), byte(c >> 24)})
	maxLeaf, _, _, _ := cpuid(0, 0)
	maxExt, _, _, _ := cpuid(0x80000000, 0)
	amd := vendor == "AuthenticAMD" || vendor == "HygonGenuine"
	var r report
	switch {
	case !amd && maxLeaf >= 4:
		r = deterministic(4)
	case amd && maxExt >= 0x8000001D:
		r = deterministic(0x8000001D)
	}
	if r.l1d.size == 0 && r.l2.size == 0 && amd && maxExt >= 0x80000006 {
		r = legacyAMD()
	}
	return r
}

// deterministic walks the sub-leaves of CPUID leaf 4 (Intel) or 0x8000001D
// (AMD), which share one layout: type and level in EAX, with the number of
// logical processors sharing the cache; line size, partitions and ways in
// EBX; sets in ECX.
func deterministic(leaf uint32) report {
	r := report{name: fmt.Sprintf("cpuid leaf %#x", leaf)}
	for sub := uint32(0); sub < 16; sub++ {
		a, b, c, _ := cpuid(leaf, sub)
		typ := a & 0x1f
		if typ == 0 {
			break
		}
		if typ != 1 && typ != 3 { // data or unified
			continue
		}
		line := int(b&0xfff) + 1
		parts := int((b>>12)&0x3ff) + 1
		ways := int(b>>22) + 1
		sets := int(c) + 1
		l := level{size: line * parts * ways * sets, sharing: int((a>>14)&0xfff) + 1}
		switch (a >> 5) & 7 {
		case 1:
			r.l1d = l
		case 2:
			r.l2 = l
		case 3:
			r.l3 = l
		}
	}
	return r
}

// legacyL3Max bounds a plausible L3 in AMD's legacy leaf.
const legacyL3Max = 256 << 20

// legacyAMD reads L1d from leaf 0x80000005 (ECX[31:24], KiB), L2 from
// 0x80000006 (ECX[31:16], KiB) and L3 from 0x80000006 (EDX[31:18], units
// of 512 KiB).
func legacyAMD() report {
	_, _, c5, _ := cpuid(0x80000005, 0)
	_, _, c6, d6 := cpuid(0x80000006, 0)
	r := report{
		name: "cpuid 0x80000005/6",
		l1d:  level{size: int(c5>>24) << 10},
		l2:   level{size: int(c6>>16) << 10},
		l3:   level{size: int(d6>>18) * 512 << 10},
	}
	// AMD's largest L3 per core complex is 96 MiB (the X3D parts); some
	// hypervisors fill the field with ones (508 MiB), so drop what is
	// beyond any real part.
	if r.l3.size > legacyL3Max {
		r.l3 = level{}
	}
	return r
}
