package quota

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	quotav1 "k8s.io/apiserver/pkg/quota/v1"
	"k8s.io/client-go/rest"
)

// recordingPlugin is an admission plugin that wants the quota configuration.
type recordingPlugin struct {
	admission.Interface
	configuration quotav1.Configuration
}

func (p *recordingPlugin) SetQuotaConfiguration(c quotav1.Configuration) { p.configuration = c }

func (p *recordingPlugin) ValidateInitialization() error { return nil }

func TestInitializerConfiguresObjectCounts(t *testing.T) {
	init, err := NewInitializer(&rest.Config{Host: "https://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	plugin := &recordingPlugin{}
	init.Initialize(plugin)
	if plugin.configuration == nil {
		t.Fatal("the plugin got no quota configuration")
	}
	got := map[schema.GroupResource]string{}
	for _, e := range plugin.configuration.Evaluators() {
		names := e.MatchingResources([]corev1.ResourceName{"count/tapps.apps.tkestack.io", "count/yurtappdaemons.apps.openyurt.io", "count/yurtappsets.apps.openyurt.io", "pods"})
		if len(names) != 1 {
			t.Errorf("%v matches %v, want exactly its own count", e.GroupResource(), names)
			continue
		}
		got[e.GroupResource()] = string(names[0])
	}
	want := map[schema.GroupResource]string{
		{Group: "apps.tkestack.io", Resource: "tapps"}:          "count/tapps.apps.tkestack.io",
		{Group: "apps.openyurt.io", Resource: "yurtappdaemons"}: "count/yurtappdaemons.apps.openyurt.io",
		{Group: "apps.openyurt.io", Resource: "yurtappsets"}:    "count/yurtappsets.apps.openyurt.io",
	}
	if len(got) != len(want) {
		t.Fatalf("evaluators = %v, want %v", got, want)
	}
	for gr, name := range want {
		if got[gr] != name {
			t.Errorf("evaluator for %v counts %q, want %q", gr, got[gr], name)
		}
	}
}
