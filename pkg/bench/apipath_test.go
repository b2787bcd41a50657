package bench

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	tappscheme "github.com/tapp-io/tapp-apiserver/pkg/generated/clientset/versioned/scheme"
)

// protobufResults is section 1 with the protobuf paths: the list and watch of the tutorial shape on the
// aggregated protobuf path meet the targets, those of the direct protobuf path miss them.
func protobufResults() *Results {
	cell := func(path, verb string, conc int, opsPerSecond, p50 float64) *APICell {
		return &APICell{Path: path, Shape: shapeTutorial, Verb: verb, Concurrency: conc, Ops: 100, OpsPerSecond: opsPerSecond,
			LatencyMs: Latency{P50: p50, P99: 2 * p50}, ObjectsPerList: 1000}
	}
	var cells []*APICell
	for _, c := range []struct {
		path                  string
		list, watch1, watch16 float64
	}{
		{pathCRD, 10, 8, 20},
		{pathAggregated, 20, 6, 12},
		{pathAggregatedProtobuf, 40, 3, 8},
		{pathDirect, 25, 5, 10},
		{pathDirectProtobuf, 30, 5, 12},
	} {
		cells = append(cells, cell(c.path, "list", 16, c.list, 1000/c.list), cell(c.path, "watch", 1, 0, c.watch1),
			cell(c.path, "watch", 16, 0, c.watch16))
	}
	computeAPIRatios(cells)
	return &Results{APIPath: &APIPathResult{Cells: cells, StoredBytes: []*StoredBytes{newStoredBytes(shapeTutorial, []int{500, 520}, []int{1000, 1040})}}}
}

func TestComputeAPIRatiosProtobufAgainstJSON(t *testing.T) {
	res := protobufResults()
	for _, tc := range []struct {
		path, verb      string
		conc            int
		toCRD, toJSON   float64
		p50CRD, p50JSON float64
	}{
		{pathAggregatedProtobuf, "list", 16, 4, 2, 0.25, 0.5},
		{pathDirectProtobuf, "list", 16, 3, 1.2, 0.333, 0.833},
		{pathAggregatedProtobuf, "watch", 1, 0, 0, 0.375, 0.5},
		{pathAggregated, "list", 16, 2, 0, 0.5, 0},
	} {
		c := findCell(res.APIPath.Cells, tc.path, shapeTutorial, tc.verb, tc.conc)
		if c.ThroughputRatioToCRD != tc.toCRD || c.ThroughputRatioToJSON != tc.toJSON || c.P50RatioToCRD != tc.p50CRD || c.P50RatioToJSON != tc.p50JSON {
			t.Errorf("%s %s c=%d: ×CRD %v ×JSON %v p50 ×CRD %v ×JSON %v, want %v %v %v %v", tc.path, tc.verb, tc.conc,
				c.ThroughputRatioToCRD, c.ThroughputRatioToJSON, c.P50RatioToCRD, c.P50RatioToJSON, tc.toCRD, tc.toJSON, tc.p50CRD, tc.p50JSON)
		}
	}
}

func TestProtobufTargets(t *testing.T) {
	want := map[string]bool{
		"API aggregated-protobuf list tutorial c=16 throughput vs CRD":               true,
		"API aggregated-protobuf list tutorial c=16 throughput vs aggregated (JSON)": true,
		"API aggregated-protobuf watch tutorial c=1 p50 latency vs CRD":              true,
		"API aggregated-protobuf watch tutorial c=16 p50 latency vs CRD":             true,
		"API direct-protobuf list tutorial c=16 throughput vs CRD":                   true,
		"API direct-protobuf list tutorial c=16 throughput vs direct (JSON)":         false,
		"API direct-protobuf watch tutorial c=1 p50 latency vs CRD":                  false,
		"API direct-protobuf watch tutorial c=16 p50 latency vs CRD":                 false,
	}
	got := map[string]bool{}
	for _, target := range evaluateTargets(protobufResults()) {
		if _, ok := want[target.Name]; ok {
			if !target.Measured {
				t.Errorf("%s: not measured", target.Name)
			}
			got[target.Name] = target.Met
		}
	}
	for name, met := range want {
		if m, ok := got[name]; !ok || m != met {
			t.Errorf("%s: present %v, met %v; want met %v", name, ok, m, met)
		}
	}
}

func TestRenderProtobufColumns(t *testing.T) {
	md := renderMarkdown(protobufResults())
	for _, s := range []string{
		"| verb | c | CRD | aggregated | × CRD | aggregated protobuf | × CRD | × JSON | direct | × CRD | direct protobuf | × CRD | × JSON |",
		"| list (1000 objects) | 16 | 10.0 (100.0 / 200.0) n=100 | 20.0 (50.0 / 100.0) n=100 | 2.00 | 40.0 (25.0 / 50.0) n=100 | 4.00 | 2.00 |",
		"| watch | 1 | 8.00 / 16.00 ms | 6.00 / 12.00 ms | 0.75 | 3.00 / 6.00 ms | 0.38 | 0.50 |",
		"its column is JSON",
		"| tutorial | 2 | 510 | 1020 | 0.50 |",
	} {
		if !strings.Contains(md, s) {
			t.Errorf("results.md has no %q:\n%s", s, md)
		}
	}
}

// TestJSONSize: a TApp stored in protobuf is measured at the size the JSON storage codec writes for it,
// and a stored JSON value at its own size.
func TestJSONSize(t *testing.T) {
	obj := benchTApp(shapePool5, "t-00000")
	obj.Namespace = "ns"
	obj.SetGroupVersionKind(tkestackv1.SchemeGroupVersion.WithKind("TApp"))
	var pb, js bytes.Buffer
	if err := protobuf.NewSerializer(tappscheme.Scheme, tappscheme.Scheme).Encode(obj, &pb); err != nil {
		t.Fatal(err)
	}
	if err := json.NewSerializerWithOptions(json.DefaultMetaFactory, tappscheme.Scheme, tappscheme.Scheme, json.SerializerOptions{}).Encode(obj, &js); err != nil {
		t.Fatal(err)
	}
	for _, value := range [][]byte{pb.Bytes(), js.Bytes()} {
		n, err := jsonSize(value)
		if err != nil || n != js.Len() {
			t.Errorf("jsonSize of %d bytes = %d, %v; want %d", len(value), n, err, js.Len())
		}
	}
	if pb.Len() >= js.Len() {
		t.Errorf("protobuf %d bytes, JSON %d: protobuf should be smaller", pb.Len(), js.Len())
	}
	if _, err := jsonSize([]byte("garbage")); err == nil {
		t.Error("jsonSize of garbage: no error")
	}
}
