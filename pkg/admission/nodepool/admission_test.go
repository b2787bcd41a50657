package nodepool

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	genericadmissioninitializer "k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
)

func node(name string, labels map[string]string) runtime.Object {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

// newPlugin returns a plugin whose node informer holds nodes and has synced.
func newPlugin(t *testing.T, nodes ...runtime.Object) *Plugin {
	t.Helper()
	factory := informers.NewSharedInformerFactory(fake.NewClientset(nodes...), 0)
	p := New()
	p.SetExternalKubeInformerFactory(factory)
	if err := p.ValidateInitialization(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	return p
}

func deletePool(p *Plugin, name string) error {
	attrs := admission.NewAttributesRecord(nil, &openyurt.NodePool{ObjectMeta: metav1.ObjectMeta{Name: name}},
		openyurt.Kind("NodePool").WithVersion("v1alpha1"), "", name, openyurt.Resource("nodepools").WithVersion("v1alpha1"), "",
		admission.Delete, &metav1.DeleteOptions{}, false, nil)
	return p.Validate(context.Background(), attrs, nil)
}

func TestDeleteRefusedWhileNodesBelongToThePool(t *testing.T) {
	desired := func(pool string) map[string]string { return map[string]string{openyurt.DesiredNodePoolLabel: pool} }
	member := func(pool string) map[string]string {
		return map[string]string{openyurt.DesiredNodePoolLabel: pool, openyurt.NodePoolLabel: pool}
	}
	current := func(pool string) map[string]string { return map[string]string{openyurt.NodePoolLabel: pool} }
	many := []runtime.Object{}
	for i := 12; i >= 1; i-- {
		many = append(many, node(fmt.Sprintf("node-%02d", i), member("pool-a")))
	}
	tests := []struct {
		name  string
		nodes []runtime.Object
		want  string // the message of the refusal; "" when the deletion is allowed
	}{
		{name: "no nodes at all"},
		{
			name:  "only nodes of other pools or none",
			nodes: []runtime.Object{node("node-1", member("pool-b")), node("node-2", nil), node("node-3", desired("pool-a2"))},
		},
		{
			name:  "members and a node asking to join",
			nodes: []runtime.Object{node("node-2", member("pool-a")), node("node-1", desired("pool-a")), node("node-3", member("pool-b"))},
			want:  `nodepool "pool-a" still has 2 nodes (node-1, node-2); remove the apps.openyurt.io/desired-nodepool label from them first`,
		},
		{
			name:  "a node leaving to another pool is still a member until the controller moves it",
			nodes: []runtime.Object{node("node-1", map[string]string{openyurt.DesiredNodePoolLabel: "pool-b", openyurt.NodePoolLabel: "pool-a"})},
			want:  `nodepool "pool-a" still has 1 node (node-1); remove the apps.openyurt.io/nodepool label from it first`,
		},
		{
			name:  "membership label only",
			nodes: []runtime.Object{node("node-1", current("pool-a"))},
			want:  `nodepool "pool-a" still has 1 node (node-1); remove the apps.openyurt.io/nodepool label from it first`,
		},
		{
			name:  "both kinds",
			nodes: []runtime.Object{node("node-1", current("pool-a")), node("node-2", desired("pool-a"))},
			want: `nodepool "pool-a" still has 2 nodes (node-1, node-2); remove the apps.openyurt.io/desired-nodepool and ` +
				`apps.openyurt.io/nodepool labels from them first`,
		},
		{
			name:  "long lists are cut",
			nodes: many,
			want: `nodepool "pool-a" still has 12 nodes (node-01, node-02, node-03, node-04, node-05, node-06, node-07, node-08, ` +
				`node-09, node-10 and 2 more); remove the apps.openyurt.io/desired-nodepool label from them first`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPlugin(t, tt.nodes...)
			err := deletePool(p, "pool-a")
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate = %v, want the deletion allowed", err)
				}
				return
			}
			if !apierrors.IsForbidden(err) {
				t.Fatalf("Validate = %v, want 403 Forbidden", err)
			}
			if got, want := err.Error(), `nodepools.apps.openyurt.io "pool-a" is forbidden: `+tt.want; got != want {
				t.Fatalf("message:\n%s\nwant:\n%s", got, want)
			}
			status := err.(apierrors.APIStatus).Status()
			if status.Details == nil || status.Details.Name != "pool-a" || status.Details.Kind != "nodepools" ||
				status.Details.Group != openyurt.GroupName {
				t.Errorf("details = %+v, want nodepools.apps.openyurt.io pool-a", status.Details)
			}
		})
	}
}

func TestDeleteCollectionChecksEachPool(t *testing.T) {
	p := newPlugin(t, node("node-1", map[string]string{openyurt.DesiredNodePoolLabel: "busy"}))
	// A delete-collection admits each item with no name and the item as the old object.
	item := func(name string) admission.Attributes {
		return admission.NewAttributesRecord(nil, &openyurt.NodePool{ObjectMeta: metav1.ObjectMeta{Name: name}},
			openyurt.Kind("NodePool").WithVersion("v1alpha1"), "", "", openyurt.Resource("nodepools").WithVersion("v1alpha1"), "",
			admission.Delete, &metav1.DeleteOptions{}, false, nil)
	}
	if err := p.Validate(context.Background(), item("busy"), nil); !apierrors.IsForbidden(err) {
		t.Errorf("deleting busy in a collection: %v, want 403", err)
	}
	if err := p.Validate(context.Background(), item("idle"), nil); err != nil {
		t.Errorf("deleting idle in a collection: %v", err)
	}
}

func TestOnlyNodePoolDeletionsAreChecked(t *testing.T) {
	p := newPlugin(t, node("node-1", map[string]string{openyurt.DesiredNodePoolLabel: "x"}))
	if !p.Handles(admission.Delete) || p.Handles(admission.Create) || p.Handles(admission.Update) {
		t.Errorf("the plugin must handle deletions only")
	}
	yad := admission.NewAttributesRecord(nil, nil, schema.GroupVersionKind{Group: openyurt.GroupName, Version: "v1alpha1", Kind: "YurtAppDaemon"},
		"ns", "x", openyurt.Resource("yurtappdaemons").WithVersion("v1alpha1"), "", admission.Delete, nil, false, nil)
	if err := p.Validate(context.Background(), yad, nil); err != nil {
		t.Errorf("deleting a YurtAppDaemon named like a busy pool: %v", err)
	}
}

func TestRefusesUntilTheNodeCacheHasSynced(t *testing.T) {
	t.Parallel()
	factory := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	p := New()
	p.SetExternalKubeInformerFactory(factory) // never started: the cache never syncs
	started := time.Now()
	err := deletePool(p, "pool-a")
	if !apierrors.IsForbidden(err) {
		t.Fatalf("Validate = %v, want 403 while the node cache is not synced", err)
	}
	if time.Since(started) < 5*time.Second {
		t.Errorf("refused after %v, the plugin must wait for the cache first", time.Since(started))
	}
}

func TestInitializedByTheStandardInitializer(t *testing.T) {
	plugins := admission.NewPlugins()
	Register(plugins)
	factory := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	plugin, err := plugins.InitPlugin(PluginName, nil, genericadmissioninitializer.New(nil, nil, factory, nil, nil, nil, nil, nil))
	if err != nil {
		t.Fatalf("initializing the plugin with the standard initializer: %v", err)
	}
	if _, ok := plugin.(admission.ValidationInterface); !ok {
		t.Fatalf("%T is not a validating admission plugin", plugin)
	}
	if err := New().ValidateInitialization(); err == nil {
		t.Errorf("ValidateInitialization without an informer factory must fail")
	}
}
