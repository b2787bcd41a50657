package integration

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	genericapiserver "k8s.io/apiserver/pkg/server"
	utilcompatibility "k8s.io/apiserver/pkg/util/compatibility"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"

	"github.com/tapp-io/tapp-apiserver/cmd/tapp-apiserver/app"
	"github.com/tapp-io/tapp-apiserver/pkg/admission/nodepool"
	"github.com/tapp-io/tapp-apiserver/pkg/admission/podtemplate"
	"github.com/tapp-io/tapp-apiserver/pkg/admission/quota"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
	openyurtv1alpha1 "github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/apiserver"
)

// TestAdmissionPluginOrder checks that the server's own plugins are on by default and run before
// ResourceQuota, which charges usage and must be the last validating plugin.
func TestAdmissionPluginOrder(t *testing.T) {
	order := app.NewOptions().Recommended.Admission.RecommendedPluginOrder
	index := map[string]int{}
	for i, name := range order {
		index[name] = i
	}
	for _, name := range []string{podtemplate.PluginName, nodepool.PluginName} {
		i, ok := index[name]
		if !ok {
			t.Errorf("%s is not in the admission order %q", name, order)
		} else if i > index[quota.PluginName] {
			t.Errorf("%s runs after %s in %q", name, quota.PluginName, order)
		}
	}
	if order[len(order)-1] != quota.PluginName {
		t.Errorf("admission order %q, want %s last", order, quota.PluginName)
	}
}

// clusterModeChain builds the admission chain exactly as cluster mode does (app.NewOptions, the standard
// initializers plus the server's own), against a fake core API: namespace ns1 exists, node-1 asks to join
// pool "busy", and a dry-run pod whose first container's image is "bad" is invalid.
func clusterModeChain(t *testing.T) admission.ValidationInterface {
	t.Helper()
	kube := fake.NewClientset(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns1"}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", Labels: map[string]string{openyurt.DesiredNodePoolLabel: "busy"}}},
	)
	kube.PrependReactor("create", "pods", func(action clienttesting.Action) (bool, runtime.Object, error) {
		create := action.(clienttesting.CreateActionImpl)
		if dryRun := create.GetCreateOptions().DryRun; len(dryRun) != 1 || dryRun[0] != metav1.DryRunAll {
			t.Errorf("a pod create without dryRun=All reached the core API: %v", dryRun)
		}
		pod := create.GetObject().(*corev1.Pod)
		if pod.Spec.Containers[0].Image == "bad" {
			return true, nil, apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, pod.GenerateName+"abcde", field.ErrorList{
				field.Invalid(field.NewPath("spec", "containers").Index(0).Child("image"), "bad", "core says no"),
			})
		}
		return true, pod, nil
	})
	factory := informers.NewSharedInformerFactory(kube, 0)
	dynamic := dynamicfake.NewSimpleDynamicClient(runtime.NewScheme())

	o := app.NewOptions()
	// The admission policy plugins read OpenAPI v3 from discovery, which the fake clientset cannot serve; every
	// other plugin of the chain runs.
	o.Recommended.Admission.DisablePlugins = []string{"ValidatingAdmissionPolicy", "MutatingAdmissionPolicy"}
	config := genericapiserver.NewRecommendedConfig(apiserver.Codecs)
	config.LoopbackClientConfig = &rest.Config{Host: "https://127.0.0.1:1"}
	config.Authorization.Authorizer = authorizerfactory.NewAlwaysAllowAuthorizer()
	extra, err := o.Recommended.ExtraAdmissionInitializers(config)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Recommended.Admission.ApplyTo(&config.Config, factory, kube, dynamic, utilfeature.DefaultFeatureGate,
		utilcompatibility.DefaultBuildEffectiveVersion(), extra...); err != nil {
		t.Fatalf("building the admission chain: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	chain, ok := config.AdmissionControl.(admission.ValidationInterface)
	if !ok {
		t.Fatalf("the admission chain %T does not validate", config.AdmissionControl)
	}
	return chain
}

func internalTApp(t *testing.T, image string) *tkestack.TApp {
	t.Helper()
	v1 := newTApp("ns1", "web", 2)
	v1.UID = "uid-web"
	v1.Spec.Template.Spec.Containers[0].Image = image
	apiserver.Scheme.Default(v1)
	out := &tkestack.TApp{}
	if err := apiserver.Scheme.Convert(v1, out, nil); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestClusterModeAdmissionChain(t *testing.T) {
	chain := clusterModeChain(t)
	objects := admission.NewObjectInterfacesFromScheme(apiserver.Scheme)
	admin := &user.DefaultInfo{Name: "admin", Groups: []string{user.SystemPrivilegedGroup}}
	ctx := testContext(t)

	createTApp := func(image string) error {
		tapp := internalTApp(t, image)
		return chain.Validate(ctx, admission.NewAttributesRecord(tapp, nil, tkestackv1.SchemeGroupVersion.WithKind("TApp"),
			"ns1", tapp.Name, tkestackv1.SchemeGroupVersion.WithResource("tapps"), "", admission.Create,
			&metav1.CreateOptions{}, false, admin), objects)
	}
	if err := createTApp("nginx:1.25"); err != nil {
		t.Errorf("creating a valid TApp: %v", err)
	}
	err := createTApp("bad")
	var se *apierrors.StatusError
	if !errors.As(err, &se) || !apierrors.IsInvalid(err) {
		t.Fatalf("creating a TApp whose template the core API refuses: %v, want 422 Invalid", err)
	}
	if len(se.ErrStatus.Details.Causes) != 1 || se.ErrStatus.Details.Causes[0].Field != "spec.template.spec.containers[0].image" {
		t.Errorf("causes = %+v, want one on spec.template.spec.containers[0].image", se.ErrStatus.Details.Causes)
	}
	if !strings.Contains(err.Error(), `spec.template.spec.containers[0].image: Invalid value: "bad": core says no`) {
		t.Errorf("message = %q", err.Error())
	}

	deletePool := func(name string) error {
		pool := &openyurt.NodePool{ObjectMeta: metav1.ObjectMeta{Name: name}}
		return chain.Validate(ctx, admission.NewAttributesRecord(nil, pool, openyurtv1alpha1.SchemeGroupVersion.WithKind("NodePool"),
			"", name, openyurtv1alpha1.SchemeGroupVersion.WithResource("nodepools"), "", admission.Delete,
			&metav1.DeleteOptions{}, false, admin), objects)
	}
	err = deletePool("busy")
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(),
		`nodepool "busy" still has 1 node (node-1); remove the apps.openyurt.io/desired-nodepool label from it first`) {
		t.Errorf("deleting a pool with a node: %v, want 403 naming node-1", err)
	}
	if err := deletePool("idle"); err != nil {
		t.Errorf("deleting a pool without nodes: %v", err)
	}
}

// TestStandaloneSkipsCoreAPIAdmission checks that standalone mode, which has no core API, serves without
// the plugins: a template only the core API would refuse is stored and a pool is deleted.
func TestStandaloneSkipsCoreAPIAdmission(t *testing.T) {
	s := sharedServer(t)
	cs := clientset(t, s)
	ctx := testContext(t)
	ns := newNamespace(t)

	tapp := newTApp(ns, uniqueName(t, "tapp"), 1)
	tapp.Spec.Template.Spec.DNSPolicy = "Bogus" // the core API's pod validation refuses this; ours does not check it
	if _, err := cs.TKEStackAppsV1().TApps(ns).Create(ctx, tapp, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating a TApp in standalone mode: %v", err)
	}
	pool, err := cs.OpenYurtAppsV1alpha1().NodePools().Create(ctx, newNodePool(uniqueName(t, "pool")), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.OpenYurtAppsV1alpha1().NodePools().Delete(ctx, pool.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting a NodePool in standalone mode: %v", err)
	}
}
