package engine

import "sort"

// CommandKinds returns the kind of every registered command, sorted (for metrics that
// show every command from startup).
func CommandKinds() []string {
	out := make([]string, 0, len(registry))
	for k := range registry {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
