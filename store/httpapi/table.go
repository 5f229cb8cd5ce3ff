package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/management-service/mgmt/resource"
)

// Column is a column of the Table a resource is printed as (kubectl get), after the
// Name column every table has: kube-apiserver's additionalPrinterColumns of a custom
// resource. A resource without Columns has one, Age.
type Column struct {
	// Name is the column's header ("Display Name").
	Name string
	// Type is the type of the cells: string, integer, number, boolean or date. A date
	// cell holds an RFC 3339 time and is printed as the time since then ("5m").
	Type string
	// Format is an OpenAPI format of the cells (name, date-time, ...), optional.
	Format string
	// Description says what the column holds.
	Description string
	// Priority 0 is printed by "kubectl get"; higher ones only with "-o wide".
	Priority int32
	// JSONPath locates the cell in the object: a dotted path from the object's root,
	// with optional [index] steps (".spec.clusterRef.cluster", ".status.conditions[0].type").
	// A path that finds nothing leaves the cell empty ("<none>").
	JSONPath string
	// Value, when set, computes the cell in place of JSONPath (nil for none); a date
	// column's Value returns a time.Time or an RFC 3339 string.
	Value func(obj resource.Object) any
}

// AgeColumn is the Age column: the time since the object was created.
var AgeColumn = Column{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp",
	Description: "The time since the object was created."}

// The media-type conversions a client can ask for with "as", "g" and "v" in Accept.
const (
	asTable       = "Table"
	asPartial     = "PartialObjectMetadata"
	asPartialList = "PartialObjectMetadataList"
	metaGroup     = "meta.k8s.io"
)

// tableColumn is a column definition of a Table (meta.k8s.io/v1 TableColumnDefinition).
type tableColumn struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Format      string `json:"format"`
	Description string `json:"description"`
	Priority    int32  `json:"priority"`
}

type tableRow struct {
	Cells  []any `json:"cells"`
	Object any   `json:"object"` // null with includeObject=None, as kube-apiserver writes it
}

type table struct {
	Kind              string            `json:"kind"`
	APIVersion        string            `json:"apiVersion"`
	Metadata          resource.ListMeta `json:"metadata"`
	ColumnDefinitions []tableColumn     `json:"columnDefinitions"`
	Rows              []tableRow        `json:"rows"`
}

type partialObject struct {
	Kind       string               `json:"kind"`
	APIVersion string               `json:"apiVersion"`
	Metadata   *resource.ObjectMeta `json:"metadata"`
}

type partialList struct {
	Kind       string            `json:"kind"`
	APIVersion string            `json:"apiVersion"`
	Metadata   resource.ListMeta `json:"metadata"`
	Items      []partialObject   `json:"items"`
}

// nameColumn is the first column of every Table. It is described by the documentation
// of metadata.name, as kube-apiserver describes the Name column of every kind by
// ObjectMeta's; ours is the schema's (common.json, the spec's words).
var nameColumn = tableColumn{Name: "Name", Type: "string", Format: "name", Description: objectMetaDoc("name")}

// objectMetaDoc returns the description of a field of metadata in common.json; ""
// when it has none.
func objectMetaDoc(field string) string {
	var doc struct {
		Defs struct {
			ObjectMeta struct {
				Properties map[string]struct {
					Description string `json:"description"`
				} `json:"properties"`
			} `json:"objectMeta"`
		} `json:"$defs"`
	}
	if json.Unmarshal(commonSchema, &doc) != nil {
		return ""
	}
	return doc.Defs.ObjectMeta.Properties[field].Description
}

// tableOptions reads includeObject: Metadata (the default), Object or None.
func tableOptions(r *http.Request) (string, error) {
	v := r.URL.Query().Get("includeObject")
	switch v {
	case "", "Metadata", "Object", "None":
		if v == "" {
			v = "Metadata"
		}
		return v, nil
	}
	return "", resource.NewBadRequest("Unable to convert to Table as requested: " + resource.Invalid(
		resource.NewPath("includeObject"), v, "must be 'Metadata', 'Object', 'None', or empty").Error())
}

// convert turns a response into the form the client asked for with "as": a Table, a
// PartialObjectMetadata or a PartialObjectMetadataList, of the meta.k8s.io version it
// named (v1 or v1beta1, as kube-apiserver still serves both). A Status is never
// converted. headers false leaves out the column definitions (every watch event but
// the first).
func (s *Server) convert(r *http.Request, sr *servedResource, t target, v any, headers bool) (any, error) {
	if _, ok := v.(resource.Status); ok {
		return v, nil
	}
	metaVersion := metaGroup + "/v1"
	if t.version == "v1beta1" {
		metaVersion = metaGroup + "/v1beta1"
	}
	list, isList := v.(resource.ObjectList)
	switch t.as {
	case asPartial:
		if isList {
			return nil, resource.NewNotAcceptable(fmt.Sprintf(
				"you requested PartialObjectMetadata, but the requested object is a list (%T)", v))
		}
		obj := v.(resource.Object)
		return partialObject{Kind: asPartial, APIVersion: metaVersion, Metadata: obj.GetObjectMeta()}, nil
	case asPartialList:
		if !isList {
			return nil, resource.NewNotAcceptable(fmt.Sprintf(
				"you requested PartialObjectMetadataList, but the requested object is not a list (%T)", v))
		}
		out := partialList{Kind: asPartialList, APIVersion: metaVersion, Metadata: *list.GetListMeta(),
			Items: make([]partialObject, 0, list.Len())}
		for i := 0; i < list.Len(); i++ {
			out.Items = append(out.Items, partialObject{Kind: asPartial, APIVersion: metaVersion,
				Metadata: list.Item(i).GetObjectMeta()})
		}
		return out, nil
	case asTable:
		include, err := tableOptions(r)
		if err != nil {
			return nil, err
		}
		tb := table{Kind: asTable, APIVersion: metaVersion, Rows: []tableRow{}}
		cols := sr.columns
		if headers {
			tb.ColumnDefinitions = make([]tableColumn, 0, len(cols)+1)
			tb.ColumnDefinitions = append(tb.ColumnDefinitions, nameColumn)
			for _, c := range cols {
				tb.ColumnDefinitions = append(tb.ColumnDefinitions, tableColumn{Name: c.Name, Type: c.Type,
					Format: c.Format, Description: c.Description, Priority: c.Priority})
			}
		}
		now := time.Now()
		row := func(obj resource.Object) (tableRow, error) {
			var doc any
			row := tableRow{Cells: make([]any, 0, len(cols)+1)}
			row.Cells = append(row.Cells, obj.GetObjectMeta().Name)
			for _, c := range cols {
				var val any
				if c.Value != nil {
					val = c.Value(obj)
				} else {
					if doc == nil {
						b, err := json.Marshal(obj)
						if err != nil {
							return row, resource.NewInternalError(err)
						}
						if err := json.Unmarshal(b, &doc); err != nil {
							return row, resource.NewInternalError(err)
						}
					}
					val = lookupPath(doc, c.JSONPath)
				}
				row.Cells = append(row.Cells, cell(c.Type, val, now))
			}
			switch include {
			case "Object":
				row.Object = obj
			case "Metadata":
				row.Object = partialObject{Kind: asPartial, APIVersion: metaVersion, Metadata: obj.GetObjectMeta()}
			}
			return row, nil
		}
		if isList {
			tb.Metadata = *list.GetListMeta()
			for i := 0; i < list.Len(); i++ {
				rw, err := row(list.Item(i))
				if err != nil {
					return nil, err
				}
				tb.Rows = append(tb.Rows, rw)
			}
			return tb, nil
		}
		obj := v.(resource.Object)
		tb.Metadata.ResourceVersion = obj.GetObjectMeta().ResourceVersion
		rw, err := row(obj)
		if err != nil {
			return nil, err
		}
		tb.Rows = append(tb.Rows, rw)
		return tb, nil
	}
	return v, nil
}

// lookupPath follows a simple JSONPath (".a.b[0].c", with or without the braces of
// "{.a.b}") through a decoded JSON document; nil when it finds nothing.
func lookupPath(doc any, path string) any {
	// Only the spaces kube's JSONPath parser skips: a key may be any other
	// character, a Unicode space such as U+1680 included.
	path = strings.TrimSuffix(strings.TrimPrefix(strings.Trim(path, " \t\r\n"), "{"), "}")
	path = strings.TrimPrefix(path, "$")
	cur := doc
	for path != "" {
		switch path[0] {
		case '.':
			path = path[1:]
			end := strings.IndexAny(path, ".[")
			if end < 0 {
				end = len(path)
			}
			m, ok := cur.(map[string]any)
			if !ok {
				return nil
			}
			cur, path = m[path[:end]], path[end:]
		case '[':
			end := strings.IndexByte(path, ']')
			if end < 0 {
				return nil
			}
			i, err := strconv.Atoi(path[1:end])
			a, ok := cur.([]any)
			if err != nil || !ok || i < 0 || i >= len(a) {
				return nil
			}
			cur, path = a[i], path[end+1:]
		default:
			return nil
		}
		if cur == nil {
			return nil
		}
	}
	return cur
}

// cell renders a value as a Table cell of the column type, as kube-apiserver renders
// the columns of a custom resource: nil for nothing, a string column's non-string
// values as JSON, a date as the time since it.
func cell(typ string, v any, now time.Time) any {
	if v == nil {
		return nil
	}
	switch typ {
	case "string":
		if s, ok := v.(string); ok {
			return s
		}
		if t, ok := v.(time.Time); ok {
			return t.UTC().Format(time.RFC3339)
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil
		}
		return string(b)
	case "integer":
		switch n := v.(type) {
		case float64:
			return int64(n)
		case int64:
			return n
		case int:
			return int64(n)
		}
	case "number":
		switch n := v.(type) {
		case float64:
			return n
		case int64:
			return float64(n)
		case int:
			return float64(n)
		}
	case "boolean":
		if b, ok := v.(bool); ok {
			return b
		}
	case "date":
		var t time.Time
		switch d := v.(type) {
		case time.Time:
			t = d
		case *resource.Time:
			if d == nil {
				return nil
			}
			t = d.Time
		case string:
			var err error
			if t, err = time.Parse(time.RFC3339, d); err != nil {
				return "<invalid>"
			}
		default:
			return nil
		}
		if t.IsZero() {
			return "<unknown>"
		}
		return HumanDuration(now.Sub(t))
	}
	return nil
}

// HumanDuration prints a duration the way kubectl prints ages: seconds below two
// minutes, then minutes (with seconds below ten minutes), hours (with minutes below
// eight hours), days (with hours below eight days) and years (with days below eight
// years). A duration below -1 s is "<invalid>" (clocks more than a second apart).
func HumanDuration(d time.Duration) string {
	sec := int64(d / time.Second)
	switch {
	case sec < -1:
		return "<invalid>"
	case sec < 0:
		return "0s"
	case sec < 120:
		return fmt.Sprintf("%ds", sec)
	}
	withRest := func(n int64, unit string, rest int64, restUnit string) string {
		if rest == 0 {
			return fmt.Sprintf("%d%s", n, unit)
		}
		return fmt.Sprintf("%d%s%d%s", n, unit, rest, restUnit)
	}
	min := int64(d / time.Minute)
	switch {
	case min < 10:
		return withRest(min, "m", sec%60, "s")
	case min < 3*60:
		return fmt.Sprintf("%dm", min)
	}
	hours := int64(d / time.Hour)
	switch {
	case hours < 8:
		return withRest(hours, "h", min%60, "m")
	case hours < 48:
		return fmt.Sprintf("%dh", hours)
	case hours < 8*24:
		return withRest(hours/24, "d", hours%24, "h")
	case hours < 2*365*24:
		return fmt.Sprintf("%dd", hours/24)
	case hours < 8*365*24:
		return withRest(hours/24/365, "y", (hours/24)%365, "d")
	}
	return fmt.Sprintf("%dy", hours/24/365)
}

// watchConverter returns what a watch encodes for each event's object: nil when Accept
// asks for the objects themselves, otherwise their conversion (a Table whose first
// event alone has the column definitions, or PartialObjectMetadata). Watches are streamed as JSON only
// (406 otherwise). An object that cannot be converted is sent as it is, as
// kube-apiserver sends it.
func (s *Server) watchConverter(r *http.Request, ri *route) (func(resource.Object) any, error) {
	t, _ := negotiateTarget(r.Header.Get("Accept"), true)
	if t.mediaType != resource.MediaTypeJSON {
		return nil, resource.NewNotAcceptable(r.Header.Get("Accept") + " (watches are streamed as application/json)")
	}
	if t.as == asTable {
		if _, err := tableOptions(r); err != nil {
			return nil, err
		}
	}
	if t.as == "" {
		return nil, nil
	}
	headers := true
	return func(obj resource.Object) any {
		out, err := s.convert(r, ri.res, t, obj, headers)
		if err != nil {
			return obj
		}
		if t.as == asTable {
			headers = false
		}
		return out
	}, nil
}
