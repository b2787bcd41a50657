package nodepool

import (
	"context"
	"reflect"
	"sort"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
)

var testScheme = runtime.NewScheme()

func poolSelector(name string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{openyurt.NodePoolLabel: name}}
}

// validPool is a stored, valid edge NodePool.
func validPool() *openyurt.NodePool {
	return &openyurt.NodePool{
		ObjectMeta: metav1.ObjectMeta{
			Name: "hangzhou", ResourceVersion: "3", Generation: 2,
			Labels:      map[string]string{openyurt.NodePoolTypeLabel: "edge", "region": "east"},
			Annotations: map[string]string{"note": "a"},
		},
		Spec: openyurt.NodePoolSpec{
			Type:     openyurt.Edge,
			Selector: poolSelector("hangzhou"),
			Labels:   map[string]string{"zone": "a"},
			Taints:   []corev1.Taint{{Key: "example.com/edge", Value: "true", Effect: corev1.TaintEffectNoSchedule}},

			LeaderElectionStrategy: openyurt.ElectionStrategyRandom,
			LeaderReplicas:         1,
			PoolScopeMetadata:      openyurt.DefaultPoolScopeMetadata(),
		},
		Status: openyurt.NodePoolStatus{ReadyNodeNum: 2, UnreadyNodeNum: 1, Nodes: []string{"n1", "n2", "n3"}},
	}
}

func TestStrategyScope(t *testing.T) {
	s := NewStrategy(testScheme)
	if s.NamespaceScoped() {
		t.Error("NodePools are cluster scoped")
	}
	if s.AllowCreateOnUpdate() || !s.AllowUnconditionalUpdate() {
		t.Error("want no create on update and unconditional updates allowed")
	}
	if NewStatusStrategy(testScheme).NamespaceScoped() {
		t.Error("status strategy: NodePools are cluster scoped")
	}
	if w := s.WarningsOnCreate(context.Background(), validPool()); w != nil {
		t.Errorf("create warnings = %v", w)
	}
	if w := s.WarningsOnUpdate(context.Background(), validPool(), validPool()); w != nil {
		t.Errorf("update warnings = %v", w)
	}
}

func TestPrepareForCreate(t *testing.T) {
	for _, tc := range []struct {
		name         string
		pool         func() *openyurt.NodePool
		wantSelector *metav1.LabelSelector
		wantLabels   map[string]string
	}{
		{
			name: "defaults selector and labels an edge pool",
			pool: func() *openyurt.NodePool {
				return &openyurt.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "hz"}, Spec: openyurt.NodePoolSpec{Type: openyurt.Edge}}
			},
			wantSelector: poolSelector("hz"),
			wantLabels:   map[string]string{openyurt.NodePoolTypeLabel: "edge"},
		},
		{
			name: "cloud pool keeps its labels and selector",
			pool: func() *openyurt.NodePool {
				return &openyurt.NodePool{
					ObjectMeta: metav1.ObjectMeta{Name: "hz", Labels: map[string]string{"region": "east"}},
					Spec: openyurt.NodePoolSpec{Type: openyurt.Cloud,
						Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"custom": "yes"}}},
				}
			},
			wantSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"custom": "yes"}},
			wantLabels:   map[string]string{openyurt.NodePoolTypeLabel: "cloud", "region": "east"},
		},
		{
			name: "empty selector is not defaulted",
			pool: func() *openyurt.NodePool {
				return &openyurt.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "hz"},
					Spec: openyurt.NodePoolSpec{Type: openyurt.Edge, Selector: &metav1.LabelSelector{}}}
			},
			wantSelector: &metav1.LabelSelector{},
			wantLabels:   map[string]string{openyurt.NodePoolTypeLabel: "edge"},
		},
		{
			name: "client type label is overwritten",
			pool: func() *openyurt.NodePool {
				return &openyurt.NodePool{
					ObjectMeta: metav1.ObjectMeta{Name: "hz", Labels: map[string]string{openyurt.NodePoolTypeLabel: "cloud"}},
					Spec:       openyurt.NodePoolSpec{Type: openyurt.Edge},
				}
			},
			wantSelector: poolSelector("hz"),
			wantLabels:   map[string]string{openyurt.NodePoolTypeLabel: "edge"},
		},
		{
			name: "no type, no label",
			pool: func() *openyurt.NodePool {
				return &openyurt.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "hz"}}
			},
			wantSelector: poolSelector("hz"),
			wantLabels:   nil,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pool := tc.pool()
			pool.Status = openyurt.NodePoolStatus{ReadyNodeNum: 3, Nodes: []string{"a"}}
			pool.Generation = 5
			NewStrategy(testScheme).PrepareForCreate(context.Background(), pool)
			if !apiequality.Semantic.DeepEqual(pool.Spec.Selector, tc.wantSelector) {
				t.Errorf("selector = %v, want %v", pool.Spec.Selector, tc.wantSelector)
			}
			if !reflect.DeepEqual(pool.Labels, tc.wantLabels) {
				t.Errorf("labels = %v, want %v", pool.Labels, tc.wantLabels)
			}
			if !apiequality.Semantic.DeepEqual(pool.Status, openyurt.NodePoolStatus{}) {
				t.Errorf("status = %+v, want it cleared", pool.Status)
			}
			if pool.Generation != 1 {
				t.Errorf("generation = %d, want 1", pool.Generation)
			}
		})
	}
}

func TestPrepareForUpdate(t *testing.T) {
	for _, tc := range []struct {
		name           string
		mutate         func(*openyurt.NodePool)
		wantGeneration int64
		wantTypeLabel  string
		wantSelector   *metav1.LabelSelector
	}{
		{name: "no change", mutate: func(*openyurt.NodePool) {}, wantGeneration: 2, wantTypeLabel: "edge"},
		{name: "metadata label change", mutate: func(p *openyurt.NodePool) { p.Labels["region"] = "west" },
			wantGeneration: 2, wantTypeLabel: "edge"},
		{name: "type label removed is put back", mutate: func(p *openyurt.NodePool) { delete(p.Labels, openyurt.NodePoolTypeLabel) },
			wantGeneration: 2, wantTypeLabel: "edge"},
		{name: "all labels removed", mutate: func(p *openyurt.NodePool) { p.Labels = nil },
			wantGeneration: 2, wantTypeLabel: "edge"},
		{name: "type label edited is restored", mutate: func(p *openyurt.NodePool) { p.Labels[openyurt.NodePoolTypeLabel] = "cloud" },
			wantGeneration: 2, wantTypeLabel: "edge"},
		{name: "nil selector is the default, here the stored one", mutate: func(p *openyurt.NodePool) { p.Spec.Selector = nil },
			wantGeneration: 2, wantTypeLabel: "edge"},
		{name: "spec labels change", mutate: func(p *openyurt.NodePool) { p.Spec.Labels["zone"] = "b" },
			wantGeneration: 3, wantTypeLabel: "edge"},
		{name: "taints change", mutate: func(p *openyurt.NodePool) { p.Spec.Taints = nil },
			wantGeneration: 3, wantTypeLabel: "edge"},
		{name: "selector change", mutate: func(p *openyurt.NodePool) { p.Spec.Selector = poolSelector("other") },
			wantGeneration: 3, wantTypeLabel: "edge", wantSelector: poolSelector("other")},
		{name: "type change relabels", mutate: func(p *openyurt.NodePool) { p.Spec.Type = openyurt.Cloud },
			wantGeneration: 3, wantTypeLabel: "cloud"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := validPool()
			pool := validPool()
			tc.mutate(pool)
			pool.Status = openyurt.NodePoolStatus{ReadyNodeNum: 9}
			NewStrategy(testScheme).PrepareForUpdate(context.Background(), pool, old)

			if !apiequality.Semantic.DeepEqual(pool.Status, old.Status) {
				t.Errorf("status = %+v, want the stored %+v", pool.Status, old.Status)
			}
			if pool.Generation != tc.wantGeneration {
				t.Errorf("generation = %d, want %d", pool.Generation, tc.wantGeneration)
			}
			if got := pool.Labels[openyurt.NodePoolTypeLabel]; got != tc.wantTypeLabel {
				t.Errorf("type label = %q, want %q", got, tc.wantTypeLabel)
			}
			wantSelector := tc.wantSelector
			if wantSelector == nil {
				wantSelector = old.Spec.Selector
			}
			if !apiequality.Semantic.DeepEqual(pool.Spec.Selector, wantSelector) {
				t.Errorf("selector = %v, want %v", pool.Spec.Selector, wantSelector)
			}
		})
	}
}

func hasError(errs field.ErrorList, fld string) bool {
	for _, e := range errs {
		if e.Field == fld {
			return true
		}
	}
	return false
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name      string
		mutate    func(*openyurt.NodePool)
		wantField string
	}{
		{name: "valid", mutate: func(*openyurt.NodePool) {}},
		{name: "no type", mutate: func(p *openyurt.NodePool) { p.Spec.Type = "" }, wantField: "spec.type"},
		{name: "unknown type", mutate: func(p *openyurt.NodePool) { p.Spec.Type = "Fog" }, wantField: "spec.type"},
		{name: "namespace on a cluster-scoped object", mutate: func(p *openyurt.NodePool) { p.Namespace = "default" }, wantField: "metadata.namespace"},
		{name: "taint without effect", mutate: func(p *openyurt.NodePool) { p.Spec.Taints[0].Effect = "" }, wantField: "spec.taints[0].effect"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pool := validPool()
			tc.mutate(pool)
			errs := NewStrategy(testScheme).Validate(context.Background(), pool)
			if tc.wantField == "" && len(errs) != 0 {
				t.Errorf("errors = %v, want none", errs)
			}
			if tc.wantField != "" && !hasError(errs, tc.wantField) {
				t.Errorf("errors = %v, want one on %s", errs, tc.wantField)
			}
		})
	}
}

func TestValidateUpdate(t *testing.T) {
	for _, tc := range []struct {
		name      string
		mutate    func(*openyurt.NodePool)
		wantField string
	}{
		{name: "valid", mutate: func(p *openyurt.NodePool) { p.Spec.Labels["zone"] = "b" }},
		{name: "type change", mutate: func(p *openyurt.NodePool) { p.Spec.Type = openyurt.Cloud }, wantField: "spec.type"},
		{name: "invalid spec", mutate: func(p *openyurt.NodePool) { p.Spec.Taints[0].Key = "" }, wantField: "spec.taints[0].key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := validPool()
			pool := validPool()
			tc.mutate(pool)
			s := NewStrategy(testScheme)
			s.PrepareForUpdate(context.Background(), pool, old)
			errs := s.ValidateUpdate(context.Background(), pool, old)
			if tc.wantField == "" && len(errs) != 0 {
				t.Errorf("errors = %v, want none", errs)
			}
			if tc.wantField != "" && !hasError(errs, tc.wantField) {
				t.Errorf("errors = %v, want one on %s", errs, tc.wantField)
			}
		})
	}
}

// TestValidateFieldPathsInRequestVersion: errors of spec.hostNetwork are reported where the request's
// version keeps it: spec.hostNetwork in v1beta1 (and without request information), the annotation in v1alpha1.
func TestValidateFieldPathsInRequestVersion(t *testing.T) {
	inVersion := func(version string) context.Context {
		return genericapirequest.WithRequestInfo(context.Background(), &genericapirequest.RequestInfo{
			IsResourceRequest: true, APIGroup: openyurt.GroupName, APIVersion: version, Resource: "nodepools",
		})
	}
	annotationPath := "metadata.annotations[nodepool.openyurt.io/hostnetwork]"
	for _, tc := range []struct {
		name, want string
		ctx        context.Context
	}{
		{"v1beta1", "spec.hostNetwork", inVersion("v1beta1")},
		{"v1alpha1", annotationPath, inVersion("v1alpha1")},
		{"no request information", "spec.hostNetwork", context.Background()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewStrategy(testScheme)
			cloud := validPool()
			cloud.Spec.Type = openyurt.Cloud
			cloud.Spec.HostNetwork = true
			errs := s.Validate(tc.ctx, cloud)
			if len(errs) != 1 || errs[0].Field != tc.want {
				t.Fatalf("create errors = %v, want one on %s", errs, tc.want)
			}
			if tc.want == annotationPath && errs[0].BadValue != "true" {
				t.Errorf("bad value = %#v, want the annotation value \"true\"", errs[0].BadValue)
			}

			old := validPool()
			pool := validPool()
			pool.Spec.HostNetwork = true
			s.PrepareForUpdate(tc.ctx, pool, old)
			errs = s.ValidateUpdate(tc.ctx, pool, old)
			if len(errs) != 1 || errs[0].Field != tc.want {
				t.Errorf("update errors = %v, want one on %s", errs, tc.want)
			}
		})
	}
}

func TestStatusStrategy(t *testing.T) {
	old := validPool()
	pool := validPool()
	pool.Spec.Type = openyurt.Cloud
	pool.Spec.Selector = nil
	pool.Labels = map[string]string{"other": "x"}
	pool.Annotations = map[string]string{"other": "y"}
	pool.Status = openyurt.NodePoolStatus{ReadyNodeNum: 3, UnreadyNodeNum: 0, Nodes: []string{"n1", "n2", "n3"}}
	want := *pool.Status.DeepCopy()

	s := NewStatusStrategy(testScheme)
	s.PrepareForUpdate(context.Background(), pool, old)
	if !apiequality.Semantic.DeepEqual(pool.Spec, old.Spec) {
		t.Errorf("spec = %+v, want the stored spec", pool.Spec)
	}
	if !reflect.DeepEqual(pool.Labels, old.Labels) || !reflect.DeepEqual(pool.Annotations, old.Annotations) {
		t.Errorf("labels %v annotations %v, want the stored ones", pool.Labels, pool.Annotations)
	}
	if !apiequality.Semantic.DeepEqual(pool.Status, want) {
		t.Errorf("status = %+v, want %+v", pool.Status, want)
	}
	if pool.Generation != old.Generation {
		t.Errorf("generation = %d, want %d", pool.Generation, old.Generation)
	}
	if errs := s.ValidateUpdate(context.Background(), pool, old); len(errs) != 0 {
		t.Errorf("errors = %v, want none", errs)
	}

	pool.Status.ReadyNodeNum = -1
	pool.Status.Nodes = []string{"n1", "n1"}
	errs := s.ValidateUpdate(context.Background(), pool, old)
	if !hasError(errs, "status.readyNodeNum") || !hasError(errs, "status.nodes[1]") {
		t.Errorf("errors = %v, want errors on status.readyNodeNum and status.nodes[1]", errs)
	}
}

func resetPaths(m map[fieldpath.APIVersion]*fieldpath.Set) map[fieldpath.APIVersion][]string {
	out := map[fieldpath.APIVersion][]string{}
	for v, set := range m {
		set.Iterate(func(p fieldpath.Path) { out[v] = append(out[v], p.String()) })
		sort.Strings(out[v])
	}
	return out
}

func TestGetResetFields(t *testing.T) {
	if got, want := resetPaths(NewStrategy(testScheme).GetResetFields()),
		map[fieldpath.APIVersion][]string{
			"apps.openyurt.io/v1alpha1": {".status"},
			"apps.openyurt.io/v1beta1":  {".status"},
			"apps.openyurt.io/v1beta2":  {".status"},
		}; !reflect.DeepEqual(got, want) {
		t.Errorf("main reset fields = %v, want %v", got, want)
	}
	if got, want := resetPaths(NewStatusStrategy(testScheme).GetResetFields()),
		map[fieldpath.APIVersion][]string{
			"apps.openyurt.io/v1alpha1": {".metadata.annotations", ".metadata.labels", ".spec"},
			"apps.openyurt.io/v1beta1":  {".metadata.annotations", ".metadata.labels", ".spec"},
			"apps.openyurt.io/v1beta2":  {".metadata.annotations", ".metadata.labels", ".spec"},
		}; !reflect.DeepEqual(got, want) {
		t.Errorf("status reset fields = %v, want %v", got, want)
	}
}

func TestGetAttrs(t *testing.T) {
	pool := validPool()
	ls, fs, err := GetAttrs(pool)
	if err != nil {
		t.Fatal(err)
	}
	if ls.Get(openyurt.NodePoolTypeLabel) != "edge" {
		t.Errorf("labels = %v", ls)
	}
	if fs.Get("metadata.name") != "hangzhou" || fs.Has("metadata.namespace") {
		t.Errorf("fields = %v, want metadata.name only (cluster scoped)", fs)
	}
	if _, _, err := GetAttrs(&openyurt.NodePoolList{}); err == nil {
		t.Error("GetAttrs of a list: want an error")
	}
}
