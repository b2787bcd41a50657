package nodepool

import (
	"context"
	"testing"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
)

// TestUpdateWithoutSelectorMeansTheDefault: an update whose spec.selector is nil (a merge patch setting it
// to null, a PUT leaving it out) gets the default selector, as a create does; the stored selector is never
// silently kept.
func TestUpdateWithoutSelectorMeansTheDefault(t *testing.T) {
	custom := &metav1.LabelSelector{MatchLabels: map[string]string{"zone": "own"}}
	for _, tc := range []struct {
		name           string
		stored, sent   *metav1.LabelSelector
		want           *metav1.LabelSelector
		wantGeneration int64
	}{
		{"custom selector cleared", custom, nil, poolSelector("hangzhou"), 3},
		{"default selector cleared", poolSelector("hangzhou"), nil, poolSelector("hangzhou"), 2},
		{"custom selector kept when sent", custom, custom, custom, 2},
		{"selector changed", poolSelector("hangzhou"), custom, custom, 3},
		{"empty selector is not nil", custom, &metav1.LabelSelector{}, &metav1.LabelSelector{}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := validPool()
			old.Spec.Selector = tc.stored.DeepCopy()
			pool := old.DeepCopy()
			pool.Spec.Selector = tc.sent.DeepCopy()
			s := NewStrategy(testScheme)
			s.PrepareForUpdate(context.Background(), pool, old)
			if !apiequality.Semantic.DeepEqual(pool.Spec.Selector, tc.want) {
				t.Errorf("selector = %v, want %v", pool.Spec.Selector, tc.want)
			}
			if pool.Generation != tc.wantGeneration {
				t.Errorf("generation = %d, want %d", pool.Generation, tc.wantGeneration)
			}
			if errs := s.ValidateUpdate(context.Background(), pool, old); len(errs) != 0 {
				t.Errorf("errors = %v", errs)
			}
		})
	}
}

// TestHostNetworkAnnotationErrorsInBothVersions: the annotation's own errors are on its path in both
// versions, and a contradiction's message names spec.hostNetwork.
func TestHostNetworkAnnotationErrorsInBothVersions(t *testing.T) {
	annotationPath := "metadata.annotations[nodepool.openyurt.io/hostnetwork]"
	for _, version := range []string{"v1alpha1", "v1beta1"} {
		ctx := genericapirequest.WithRequestInfo(context.Background(), &genericapirequest.RequestInfo{
			IsResourceRequest: true, APIGroup: openyurt.GroupName, APIVersion: version, Resource: "nodepools",
		})
		for _, tc := range []struct {
			value       string
			hostNetwork bool
		}{{"1", false}, {"true", false}, {"false", true}} {
			pool := validPool()
			pool.Annotations = map[string]string{openyurt.NodePoolHostNetworkAnnotation: tc.value}
			pool.Spec.HostNetwork = tc.hostNetwork
			errs := NewStrategy(testScheme).Validate(ctx, pool)
			if len(errs) != 1 || errs[0].Field != annotationPath {
				t.Errorf("%s %q beside %t: errors = %v, want one on the annotation", version, tc.value, tc.hostNetwork, errs)
			}
		}
	}
}
