package bench

import (
	"fmt"
	"slices"
	"strings"
)

// placementWarnings flag the models a reader could take for slower when they ran
// (partly) on CPU: a model split between CPU and GPU, or on CPU alone while the machine
// has a GPU (another model of the bench used one, or the server's log lists one).
func placementWarnings(r *Report) []string {
	var out []string
	for _, m := range r.Models {
		if why := cpuPlacement(r, m); why != "" {
			out = append(out, fmt.Sprintf("%s: %s: its times are not the GPU's", m.Name, why))
		}
	}
	return out
}

// cpuPlacement says why a model's row is marked, or "".
func cpuPlacement(r *Report, m ModelResult) string {
	p := m.Placement
	if p == nil || p.Size <= 0 {
		return ""
	}
	switch {
	case p.Split():
		return fmt.Sprintf("partly on CPU (%s)", p.Processor())
	case p.OnCPU() && hasGPU(r):
		return "on CPU (100% CPU) although the machine has a GPU"
	}
	return ""
}

// hasGPU reports whether the bench saw a GPU: a model held in GPU memory, or a device
// other than the CPU in the server's log.
func hasGPU(r *Report) bool {
	for _, m := range r.Models {
		if m.Placement != nil && m.Placement.SizeVRAM > 0 {
			return true
		}
	}
	if r.Machine != nil {
		for _, g := range r.Machine.GPUs {
			if g.ID != "cpu" && !strings.EqualFold(g.Library, "cpu") {
				return true
			}
		}
	}
	return false
}

// setupChanges lists what differs between two benches' setups, which their numbers
// cannot be compared without: the machine's GPUs and CPUs, and per model the server
// version, where the model was held, the context it was loaded with, and the slots.
func setupChanges(base, cur *Report) []string {
	var out []string
	if b, c := gpuNames(base), gpuNames(cur); b != "" && c != "" && b != c {
		out = append(out, fmt.Sprintf("the machine's GPUs: %s, now %s", b, c))
	}
	if base.Host.CPUs != cur.Host.CPUs || base.Host.Arch != cur.Host.Arch {
		out = append(out, fmt.Sprintf("the host: %d CPUs (%s), now %d CPUs (%s)", base.Host.CPUs, base.Host.Arch, cur.Host.CPUs, cur.Host.Arch))
	}
	for _, m := range cur.Models {
		i := slices.IndexFunc(base.Models, func(b ModelResult) bool { return b.Name == m.Name })
		if i >= 0 && m.Status == ModelRan && base.Models[i].Status == ModelRan {
			out = append(out, modelSetupChanges(base.Models[i], m)...)
		}
	}
	return out
}

// modelSetupChanges is what differs in where one model ran.
func modelSetupChanges(bm, m ModelResult) []string {
	var out []string
	differ := func(what string, b, c any) {
		out = append(out, fmt.Sprintf("%s: %s %v, now %v", m.Name, what, b, c))
	}
	switch bp, p := bm.Placement, m.Placement; {
	case bp == nil && p != nil:
		out = append(out, fmt.Sprintf("%s: the baseline does not record where the model ran (now %s)", m.Name, p.Processor()))
	case bp != nil && p != nil:
		if bp.Processor() != p.Processor() {
			differ("placement", bp.Processor(), p.Processor())
		}
		if bp.ContextLength != p.ContextLength {
			differ("loaded context", bp.ContextLength, p.ContextLength)
		}
	}
	if bm.Probe != nil && m.Probe != nil && bm.Probe.ServerVersion != "" && bm.Probe.ServerVersion != m.Probe.ServerVersion {
		differ("server version", bm.Probe.ServerVersion, m.Probe.ServerVersion)
	}
	if b, c := bm.Parallel.Slots, m.Parallel.Slots; b != c && b > 0 && c > 0 {
		differ("parallel slots", b, c)
	}
	if b, c := bm.Parallel.Cells, m.Parallel.Cells; b != c && b > 0 && c > 0 {
		differ("cells at once", b, c)
	}
	return out
}

// gpuNames is the machine's devices as one string ("" when unknown).
func gpuNames(r *Report) string {
	if r.Machine == nil {
		return ""
	}
	var names []string
	for _, g := range r.Machine.GPUs {
		n := g.Name
		if g.Memory != "" {
			n += " " + g.Memory
		}
		names = append(names, n)
	}
	return strings.Join(names, ", ")
}
