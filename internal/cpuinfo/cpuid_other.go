//go:build !amd64

package cpuinfo

// fromCPUID knows nothing where there is no CPUID instruction; the caches
// come from sysfs or the defaults.
func fromCPUID() report { return report{} }
