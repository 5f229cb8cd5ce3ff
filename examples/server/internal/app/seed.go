package app

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/management-service/mgmt/resource"
	"github.com/management-service/mgmt/store"
)

// seedKinds are the kinds a seed file may hold.
var seedKinds = map[string]bool{
	resource.KindProject:                true,
	resource.KindVirtualClusterInstance: true,
	resource.KindAccessKey:              true,
}

// splitYAML splits a YAML stream into its documents at lines that are exactly "---"
// (optionally followed by a comment); empty documents are dropped.
func splitYAML(data []byte) [][]byte {
	var docs [][]byte
	var cur bytes.Buffer
	flush := func() {
		if len(bytes.TrimSpace(stripComments(cur.Bytes()))) > 0 {
			docs = append(docs, append([]byte(nil), cur.Bytes()...))
		}
		cur.Reset()
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		t := strings.TrimRight(line, " \t\r")
		if t == "---" || strings.HasPrefix(t, "--- #") {
			flush()
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
	}
	flush()
	return docs
}

func stripComments(b []byte) []byte {
	var out bytes.Buffer
	for _, line := range bytes.Split(b, []byte("\n")) {
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] != '#' {
			out.Write(line)
			out.WriteByte('\n')
		}
	}
	return out.Bytes()
}

// loadSeed creates the objects of a seed file: Projects, VirtualClusterInstances
// (their status too) and AccessKeys (with their scopes; the keys are stored hashed by
// the admission hook). Objects that exist already (a restart with --data-dir) are
// left as they are.
func loadSeed(ctx context.Context, st *store.Store, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	codec := resource.NewCodec(st.Scheme(), resource.CodecOptions{})
	for i, doc := range splitYAML(data) {
		obj, err := codec.Decode(doc, resource.MediaTypeYAML, nil)
		if err != nil {
			return fmt.Errorf("document %d: %w", i+1, err)
		}
		kind := obj.GetTypeMeta().Kind
		if !seedKinds[kind] || obj.GetTypeMeta().APIVersion != resource.GroupVersion {
			return fmt.Errorf("document %d: a seed file holds Projects, VirtualClusterInstances and AccessKeys of %s, not %s %s",
				i+1, resource.GroupVersion, obj.GetTypeMeta().APIVersion, kind)
		}
		var status *resource.VirtualClusterInstanceStatus
		if v, ok := obj.(*resource.VirtualClusterInstance); ok && !isZeroStatus(v.Status) {
			s := v.Status
			status = &s
		}
		opts := store.CreateOptions{WriteOptions: store.WriteOptions{FieldManager: "seed"}}
		if err := st.Create(ctx, obj, opts); err != nil {
			if errors.Is(err, resource.ErrAlreadyExists) {
				continue
			}
			return fmt.Errorf("document %d (%s %q): %w", i+1, kind, obj.GetObjectMeta().Name, err)
		}
		if status != nil {
			v := obj.(*resource.VirtualClusterInstance)
			v.Status = *status
			if err := st.UpdateStatus(ctx, v, store.UpdateOptions{WriteOptions: store.WriteOptions{FieldManager: "seed"}}); err != nil {
				return fmt.Errorf("document %d (status of %q): %w", i+1, v.Name, err)
			}
		}
	}
	return nil
}

func isZeroStatus(s resource.VirtualClusterInstanceStatus) bool {
	return s.Phase == "" && s.Reason == "" && s.Message == "" && len(s.Conditions) == 0
}
