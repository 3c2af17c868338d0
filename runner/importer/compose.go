package importer

import (
	"fmt"
	"sort"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/agentrunner/runner/runner/bounded"
)

// composeKeys are the service keys the formats' standard compose files use for their one
// container that need nothing from runner (its build and image, the harness's names and
// idle command). Every other key is named in a note; volumes: and network_mode: too.
var composeKeys = map[string]bool{"build": true, "image": true, "container_name": true, "command": true, "environment": true}

// ComposeService is what runner takes from a task's one compose service.
type ComposeService struct {
	// Image is the image it names, when a fixed one.
	Image string
	// Env is its literal environment.
	Env map[string]string
	// NoNetwork is network_mode: none.
	NoNetwork bool
	// Notes name what is not carried over.
	Notes []string
}

// Compose reads the docker-compose file rel of the task directory dir (see ReadFile).
// More than one service cannot run (runner starts one container per scenario): that is an
// error.
func Compose(dir, rel string) (ComposeService, error) {
	var out ComposeService
	data, err := ReadFile(dir, rel)
	if err != nil {
		return out, fmt.Errorf("compose: %w", err)
	}
	if err := bounded.YAML(rel, data, bounded.Imported); err != nil {
		return out, fmt.Errorf("compose: %w", err)
	}
	var doc struct {
		Services map[string]map[string]any `yaml:"services"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return out, fmt.Errorf("compose %s: %w", rel, err)
	}
	if len(doc.Services) > 1 {
		names := make([]string, 0, len(doc.Services))
		for n := range doc.Services {
			names = append(names, n)
		}
		sort.Strings(names)
		return out, fmt.Errorf("compose services %s: runner runs one container per task", strings.Join(names, ", "))
	}
	for _, svc := range doc.Services {
		keys := make([]string, 0, len(svc))
		for k := range svc {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			switch {
			case composeKeys[k]:
			case k == "network_mode" && fmt.Sprint(svc[k]) == "none":
				out.NoNetwork = true
			case k == "volumes":
				n := 0
				if l, ok := svc[k].([]any); ok {
					n = len(l)
				}
				out.Notes = append(out.Notes, fmt.Sprintf("compose key \"volumes\" of the service (%d mounts) is not carried over: nothing of the host is mounted", n))
			default:
				out.Notes = append(out.Notes, fmt.Sprintf("compose key %q of the service is ignored", k))
			}
		}
		if img, ok := svc["image"].(string); ok && !strings.Contains(img, "${") {
			out.Image = img
		}
		out.Env = map[string]string{}
		switch e := svc["environment"].(type) {
		case []any:
			for _, kv := range e {
				if s, ok := kv.(string); ok {
					k, v, _ := strings.Cut(s, "=")
					addEnv(out.Env, k, v, &out.Notes)
				}
			}
		case map[string]any:
			for k, v := range e {
				addEnv(out.Env, k, fmt.Sprint(v), &out.Notes)
			}
		}
	}
	return out, nil
}

// addEnv keeps literal values; the harness's ${T_BENCH_...} variables have runner
// equivalents (TEST_DIR is set by the importer), others are reported.
func addEnv(env map[string]string, k, v string, notes *[]string) {
	switch {
	case k == "TEST_DIR":
	case strings.Contains(v, "${"):
		*notes = append(*notes, fmt.Sprintf("environment variable %s=%s needs the harness's substitution; left out", k, v))
	default:
		env[k] = v
	}
}
