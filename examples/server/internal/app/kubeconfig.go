package app

import (
	"encoding/base64"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"
)

// writeKubeconfig writes a kubeconfig with one cluster (the server URL, the CA data
// when there is TLS), one user (the admin key as a bearer token) and a current
// context, readable by its owner only.
func writeKubeconfig(path, server string, caPEM []byte, key string) error {
	cluster := map[string]any{"server": server}
	if caPEM != nil {
		cluster["certificate-authority-data"] = base64.StdEncoding.EncodeToString(caPEM)
	}
	cfg := map[string]any{
		"apiVersion":      "v1",
		"kind":            "Config",
		"clusters":        []any{map[string]any{"name": "management", "cluster": cluster}},
		"users":           []any{map[string]any{"name": "admin", "user": map[string]any{"token": key}}},
		"contexts":        []any{map[string]any{"name": "management", "context": map[string]any{"cluster": "management", "user": "admin"}}},
		"current-context": "management",
		"preferences":     map[string]any{},
	}
	b, err := yaml.Marshal(cfg)
	if err != nil {
		return err
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
