package integration

import (
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

type openAPISchema struct {
	Properties map[string]json.RawMessage `json:"properties"`
	Required   []string                   `json:"required"`
	GVKs       []struct {
		Group   string `json:"group"`
		Version string `json:"version"`
		Kind    string `json:"kind"`
	} `json:"x-kubernetes-group-version-kind"`
}

// findSchema returns the definition whose name ends in "."+typeName and, when group is set, that is
// tagged with that group and kind.
func findSchema(defs map[string]openAPISchema, typeName, group string) (string, openAPISchema, bool) {
	for name, def := range defs {
		if !strings.HasSuffix(name, "."+typeName) {
			continue
		}
		if group == "" {
			return name, def, true
		}
		for _, gvk := range def.GVKs {
			if gvk.Group == group && gvk.Kind == typeName {
				return name, def, true
			}
		}
	}
	return "", openAPISchema{}, false
}

func checkSchemas(t *testing.T, what string, defs map[string]openAPISchema) {
	t.Helper()
	type want struct {
		typeName, group string
		props           []string
	}
	for _, w := range []want{
		{"TApp", "apps.tkestack.io", []string{"metadata", "spec", "status"}},
		{"TAppSpec", "", []string{"replicas", "selector", "template", "templatePool", "templates", "statuses", "updateStrategy", "defaultTemplateName"}},
		{"TAppStatus", "", []string{"replicas", "readyReplicas", "appStatus", "scaleLabelSelector"}},
		{"YurtAppDaemon", "apps.openyurt.io", []string{"metadata", "spec", "status"}},
		{"YurtAppDaemonSpec", "", []string{"selector", "workloadTemplate", "nodepoolSelector"}},
		{"NodePool", "apps.openyurt.io", []string{"metadata", "spec", "status"}},
		{"NodePoolSpec", "", []string{"type", "selector", "taints"}},
		{"YurtAppSet", "apps.openyurt.io", []string{"metadata", "spec", "status"}},
		{"YurtAppSetSpec", "", []string{"workload", "nodepoolSelector", "pools", "revisionHistoryLimit"}},
		{"Workload", "", []string{"workloadTemplate", "workloadTweaks"}},
		{"WorkloadTweak", "", []string{"nodepoolSelector", "pools", "tweaks"}},
		{"Tweaks", "", []string{"replicas", "containerImages", "patches"}},
		{"Patch", "", []string{"path", "operation", "value"}},
		{"YurtAppSetStatus", "", []string{"observedGeneration", "collisionCount", "currentRevision", "conditions",
			"readyWorkloads", "updatedWorkloads", "totalWorkloads"}},
	} {
		if what != "v2" && (strings.HasPrefix(w.typeName, "TApp") != strings.Contains(what, "tkestack")) {
			continue
		}
		yasType := strings.HasPrefix(w.typeName, "YurtAppSet") || slices.Contains([]string{"Workload", "WorkloadTweak", "Tweaks", "Patch"}, w.typeName)
		if strings.Contains(what, "v1beta1") && !strings.HasPrefix(w.typeName, "NodePool") && !yasType {
			continue // apps.openyurt.io/v1beta1 serves NodePools and YurtAppSets
		}
		if strings.Contains(what, "v1beta2") && !strings.HasPrefix(w.typeName, "NodePool") {
			continue // apps.openyurt.io/v1beta2 serves NodePools only
		}
		if strings.Contains(what, "v1alpha1") && yasType {
			continue // YurtAppSet exists in v1beta1 only
		}
		if w.group == "" && yasType {
			w.typeName = "v1beta1." + w.typeName // Workload and Patch are common names: take ours
		}
		name, def, ok := findSchema(defs, w.typeName, w.group)
		if !ok {
			t.Errorf("%s: no schema for %s (group %q)", what, w.typeName, w.group)
			continue
		}
		for _, p := range w.props {
			if _, ok := def.Properties[p]; !ok {
				t.Errorf("%s: schema %s has no property %q", what, name, p)
			}
		}
	}
}

func TestOpenAPI(t *testing.T) {
	s := sharedServer(t)

	code, body := httpGet(t, s.URL+"/openapi/v2", "application/json")
	if code != http.StatusOK {
		t.Fatalf("/openapi/v2 returned %d: %.200s", code, body)
	}
	var v2 struct {
		Swagger     string                   `json:"swagger"`
		Definitions map[string]openAPISchema `json:"definitions"`
		Paths       map[string]json.RawMessage
	}
	if err := json.Unmarshal(body, &v2); err != nil {
		t.Fatalf("/openapi/v2 is not JSON: %v", err)
	}
	if v2.Swagger != "2.0" {
		t.Errorf("/openapi/v2 swagger = %q, want 2.0", v2.Swagger)
	}
	checkSchemas(t, "v2", v2.Definitions)
	for _, p := range []string{
		"/apis/apps.tkestack.io/v1/namespaces/{namespace}/tapps/{name}/scale",
		"/apis/apps.tkestack.io/v1/namespaces/{namespace}/tapps/{name}/status",
		"/apis/apps.openyurt.io/v1alpha1/nodepools/{name}",
		"/apis/apps.openyurt.io/v1alpha1/namespaces/{namespace}/yurtappdaemons",
		"/apis/apps.openyurt.io/v1beta1/nodepools/{name}",
		"/apis/apps.openyurt.io/v1beta1/nodepools/{name}/status",
		"/apis/apps.openyurt.io/v1beta1/namespaces/{namespace}/yurtappsets/{name}",
		"/apis/apps.openyurt.io/v1beta1/namespaces/{namespace}/yurtappsets/{name}/status",
		"/apis/apps.openyurt.io/v1beta2/nodepools/{name}",
		"/apis/apps.openyurt.io/v1beta2/nodepools/{name}/status",
	} {
		if _, ok := v2.Paths[p]; !ok {
			t.Errorf("/openapi/v2 has no path %s", p)
		}
	}

	if _, ok := v2.Paths["/apis/apps.openyurt.io/v1beta1/namespaces/{namespace}/yurtappdaemons"]; ok {
		t.Errorf("/openapi/v2 has yurtappdaemons in apps.openyurt.io/v1beta1")
	}
	if _, ok := v2.Paths["/apis/apps.openyurt.io/v1alpha1/namespaces/{namespace}/yurtappsets"]; ok {
		t.Errorf("/openapi/v2 has yurtappsets in apps.openyurt.io/v1alpha1")
	}
	checkNodePoolVersions(t, "v2", v2.Definitions)

	for _, gv := range []string{"apps.tkestack.io/v1", "apps.openyurt.io/v1alpha1", "apps.openyurt.io/v1beta1", "apps.openyurt.io/v1beta2"} {
		url := s.URL + "/openapi/v3/apis/" + gv
		code, body := httpGet(t, url, "application/json")
		if code != http.StatusOK {
			t.Errorf("%s returned %d: %.200s", url, code, body)
			continue
		}
		var v3 struct {
			OpenAPI    string `json:"openapi"`
			Components struct {
				Schemas map[string]openAPISchema `json:"schemas"`
			} `json:"components"`
		}
		if err := json.Unmarshal(body, &v3); err != nil {
			t.Errorf("%s is not JSON: %v", url, err)
			continue
		}
		if !strings.HasPrefix(v3.OpenAPI, "3.") {
			t.Errorf("%s openapi = %q, want 3.x", url, v3.OpenAPI)
		}
		what := "v3 " + gv
		if strings.Contains(gv, "tkestack") {
			what = "v3 tkestack"
		}
		checkSchemas(t, what, v3.Components.Schemas)
		if strings.Contains(gv, "openyurt") {
			checkNodePoolVersions(t, what, v3.Components.Schemas)
		}
		if gv == "apps.openyurt.io/v1alpha1" {
			// The server defaults the selector of a YurtAppDaemon's workload template: kubectl's client-side
			// validation must not demand it.
			for _, name := range []string{"io.k8s.api.apps.v1.DeploymentSpec", "io.k8s.api.apps.v1.StatefulSetSpec"} {
				def, ok := v3.Components.Schemas[name]
				if !ok {
					t.Errorf("%s has no %s", url, name)
				} else if slices.Contains(def.Required, "selector") || !slices.Contains(def.Required, "template") {
					t.Errorf("%s: %s requires %v, want template and not selector", url, name, def.Required)
				}
			}
		}
	}

	// The v3 discovery document lists both groups.
	code, body = httpGet(t, s.URL+"/openapi/v3", "application/json")
	if code != http.StatusOK {
		t.Fatalf("/openapi/v3 returned %d", code)
	}
	var index struct {
		Paths map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(body, &index); err != nil {
		t.Fatalf("/openapi/v3 is not JSON: %v", err)
	}
	for _, p := range []string{"apis/apps.tkestack.io/v1", "apis/apps.openyurt.io/v1alpha1", "apis/apps.openyurt.io/v1beta1", "apis/apps.openyurt.io/v1beta2"} {
		if _, ok := index.Paths[p]; !ok {
			t.Errorf("/openapi/v3 does not list %s: %v", p, keys(index.Paths))
		}
	}
}

// checkNodePoolVersions checks the NodePool schemas of each version a document holds: v1beta1's and
// v1beta2's spec have hostNetwork, v1alpha1's does not (it carries it as an annotation), only v1beta2 has
// the leader fields, and each NodePool is tagged with its own version, which server-side apply and kubectl
// explain rely on.
func checkNodePoolVersions(t *testing.T, what string, defs map[string]openAPISchema) {
	t.Helper()
	found := 0
	for _, version := range []string{"v1alpha1", "v1beta1", "v1beta2"} {
		pool, ok := defs["io.openyurt.apps."+version+".NodePool"]
		if !ok {
			continue
		}
		found++
		if len(pool.GVKs) != 1 || pool.GVKs[0].Version != version || pool.GVKs[0].Kind != "NodePool" {
			t.Errorf("%s: NodePool %s is tagged %+v", what, version, pool.GVKs)
		}
		spec, ok := defs["io.openyurt.apps."+version+".NodePoolSpec"]
		if !ok {
			t.Errorf("%s: no NodePoolSpec of %s", what, version)
			continue
		}
		_, hasHostNetwork := spec.Properties["hostNetwork"]
		if hasHostNetwork != (version != "v1alpha1") {
			t.Errorf("%s: %s NodePoolSpec has hostNetwork = %v", what, version, hasHostNetwork)
		}
		for _, p := range []string{"interConnectivity", "enableLeaderElection", "leaderElectionStrategy", "leaderNodeLabelSelector", "leaderReplicas", "poolScopeMetadata"} {
			if _, ok := spec.Properties[p]; ok != (version == "v1beta2") {
				t.Errorf("%s: %s NodePoolSpec has %q = %v", what, version, p, ok)
			}
		}
		for _, p := range []string{"type", "selector", "labels", "annotations", "taints"} {
			if _, ok := spec.Properties[p]; !ok {
				t.Errorf("%s: %s NodePoolSpec has no %q", what, version, p)
			}
		}
	}
	if found == 0 {
		t.Errorf("%s: no NodePool schema of v1alpha1 or v1beta1: %v", what, keys(defs))
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func findResource(list *metav1.APIResourceList, name string) *metav1.APIResource {
	if list == nil {
		return nil
	}
	for i := range list.APIResources {
		if list.APIResources[i].Name == name {
			return &list.APIResources[i]
		}
	}
	return nil
}

func checkDiscoveryResources(t *testing.T, what string, lists map[string]*metav1.APIResourceList) {
	t.Helper()
	tk, oy := lists["apps.tkestack.io/v1"], lists["apps.openyurt.io/v1alpha1"]
	if tk == nil || oy == nil {
		t.Fatalf("%s: resource lists for apps.tkestack.io/v1 and apps.openyurt.io/v1alpha1 missing: %v", what, keys(lists))
	}

	type want struct {
		list       *metav1.APIResourceList
		name, kind string
		namespaced bool
		shortNames []string
		categories []string
	}
	for _, w := range []want{
		{tk, "tapps", "TApp", true, []string{"tapp"}, []string{"all"}},
		{oy, "yurtappdaemons", "YurtAppDaemon", true, []string{"yad"}, []string{"all"}},
		{oy, "nodepools", "NodePool", false, []string{"np"}, nil},
	} {
		r := findResource(w.list, w.name)
		if r == nil {
			t.Errorf("%s: no resource %s", what, w.name)
			continue
		}
		if r.Kind != w.kind || r.Namespaced != w.namespaced {
			t.Errorf("%s: %s kind=%s namespaced=%v, want %s and %v", what, w.name, r.Kind, r.Namespaced, w.kind, w.namespaced)
		}
		if !reflect.DeepEqual(r.ShortNames, w.shortNames) {
			t.Errorf("%s: %s shortNames = %v, want %v", what, w.name, r.ShortNames, w.shortNames)
		}
		if w.categories != nil && !reflect.DeepEqual(r.Categories, w.categories) {
			t.Errorf("%s: %s categories = %v, want %v", what, w.name, r.Categories, w.categories)
		}
		verbs := map[string]bool{}
		for _, v := range r.Verbs {
			verbs[v] = true
		}
		for _, v := range []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"} {
			if !verbs[v] {
				t.Errorf("%s: %s verbs %v lack %s", what, w.name, r.Verbs, v)
			}
		}
		status := findResource(w.list, w.name+"/status")
		if status == nil {
			t.Errorf("%s: no %s/status subresource", what, w.name)
		} else if status.Kind != w.kind {
			t.Errorf("%s: %s/status kind = %s, want %s", what, w.name, status.Kind, w.kind)
		}
	}
	scale := findResource(tk, "tapps/scale")
	if scale == nil {
		t.Fatalf("%s: no tapps/scale subresource", what)
	}
	if scale.Group != "autoscaling" || scale.Version != "v1" || scale.Kind != "Scale" {
		t.Errorf("%s: tapps/scale is %s/%s %s, want autoscaling/v1 Scale", what, scale.Group, scale.Version, scale.Kind)
	}
	if !scale.Namespaced {
		t.Errorf("%s: tapps/scale is not namespaced", what)
	}
	if findResource(oy, "yurtappdaemons/scale") != nil || findResource(oy, "nodepools/scale") != nil {
		t.Errorf("%s: openyurt resources advertise a scale subresource they do not serve", what)
	}
}

func TestDiscovery(t *testing.T) {
	s := sharedServer(t)
	dc, err := discovery.NewDiscoveryClientForConfig(rest.CopyConfig(s.Config))
	if err != nil {
		t.Fatal(err)
	}

	groups, err := dc.ServerGroups()
	if err != nil {
		t.Fatalf("server groups: %v", err)
	}
	// Versions in order of preference: apps.openyurt.io prefers v1beta2, as OpenYurt v1.7 does.
	wantGroups := map[string][]string{"apps.tkestack.io": {"v1"}, "apps.openyurt.io": {"v1beta2", "v1beta1", "v1alpha1"}}
	for _, g := range groups.Groups {
		if want, ok := wantGroups[g.Name]; ok {
			var got []string
			for _, v := range g.Versions {
				got = append(got, v.Version)
			}
			if g.PreferredVersion.Version != want[0] || !reflect.DeepEqual(got, want) {
				t.Errorf("group %s versions=%v preferred=%v, want %v preferring %s", g.Name, got, g.PreferredVersion, want, want[0])
			}
			delete(wantGroups, g.Name)
		}
	}
	if len(wantGroups) != 0 {
		t.Errorf("server groups lack %v", wantGroups)
	}

	// Aggregated discovery (what kubectl and client-go use by default).
	_, lists, err := dc.ServerGroupsAndResources()
	if err != nil {
		t.Fatalf("server groups and resources: %v", err)
	}
	byGV := map[string]*metav1.APIResourceList{}
	for _, l := range lists {
		byGV[l.GroupVersion] = l
	}
	checkDiscoveryResources(t, "aggregated discovery", byGV)
	checkBetaResources(t, "aggregated discovery", byGV["apps.openyurt.io/v1beta1"])

	// Legacy per-group-version discovery.
	legacy := map[string]*metav1.APIResourceList{}
	for _, gv := range []string{"apps.tkestack.io/v1", "apps.openyurt.io/v1alpha1", "apps.openyurt.io/v1beta1"} {
		l, err := dc.ServerResourcesForGroupVersion(gv)
		if err != nil {
			t.Fatalf("resources of %s: %v", gv, err)
		}
		legacy[gv] = l
	}
	checkDiscoveryResources(t, "legacy discovery", legacy)
	checkBetaResources(t, "legacy discovery", legacy["apps.openyurt.io/v1beta1"])
}

// checkBetaResources: apps.openyurt.io/v1beta1 serves nodepools and nodepools/status, with the short name,
// verbs and scope of v1alpha1, and yurtappsets with OpenYurt's short name and category, and no
// YurtAppDaemons.
func checkBetaResources(t *testing.T, what string, list *metav1.APIResourceList) {
	t.Helper()
	if list == nil {
		t.Fatalf("%s: no resource list for apps.openyurt.io/v1beta1", what)
	}
	var names []string
	for _, r := range list.APIResources {
		names = append(names, r.Name)
	}
	sort.Strings(names)
	if want := []string{"nodepools", "nodepools/status", "yurtappsets", "yurtappsets/status"}; !reflect.DeepEqual(names, want) {
		t.Errorf("%s: apps.openyurt.io/v1beta1 resources = %v, want %v", what, names, want)
	}
	if yas := findResource(list, "yurtappsets"); yas == nil {
		t.Errorf("%s: no yurtappsets in apps.openyurt.io/v1beta1", what)
	} else {
		if yas.Kind != "YurtAppSet" || !yas.Namespaced || !reflect.DeepEqual(yas.ShortNames, []string{"yas"}) ||
			!reflect.DeepEqual(yas.Categories, []string{"yurt"}) {
			t.Errorf("%s: yurtappsets kind=%s namespaced=%v shortNames=%v categories=%v, want YurtAppSet, namespaced, [yas], [yurt]",
				what, yas.Kind, yas.Namespaced, yas.ShortNames, yas.Categories)
		}
		verbs := "," + strings.Join(yas.Verbs, ",") + ","
		for _, v := range []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"} {
			if !strings.Contains(verbs, ","+v+",") {
				t.Errorf("%s: yurtappsets verbs %v lack %s", what, yas.Verbs, v)
			}
		}
		if status := findResource(list, "yurtappsets/status"); status == nil || status.Kind != "YurtAppSet" {
			t.Errorf("%s: yurtappsets/status = %+v, want kind YurtAppSet", what, status)
		}
	}
	pools := findResource(list, "nodepools")
	if pools == nil {
		return
	}
	if pools.Kind != "NodePool" || pools.Namespaced || !reflect.DeepEqual(pools.ShortNames, []string{"np"}) {
		t.Errorf("%s: v1beta1 nodepools kind=%s namespaced=%v shortNames=%v", what, pools.Kind, pools.Namespaced, pools.ShortNames)
	}
	verbs := strings.Join(pools.Verbs, ",")
	for _, v := range []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"} {
		if !strings.Contains(","+verbs+",", ","+v+",") {
			t.Errorf("%s: v1beta1 nodepools verbs %v lack %s", what, pools.Verbs, v)
		}
	}
}

func TestHealthAndMetrics(t *testing.T) {
	s := sharedServer(t)
	for _, path := range []string{"/healthz", "/livez", "/readyz", "/healthz/etcd", "/readyz/etcd"} {
		code, body := httpGet(t, s.URL+path, "")
		if code != http.StatusOK || strings.TrimSpace(string(body)) != "ok" {
			t.Errorf("GET %s = %d %q, want 200 ok", path, code, body)
		}
	}
	code, body := httpGet(t, s.URL+"/readyz?verbose", "")
	if code != http.StatusOK || !strings.Contains(string(body), "[+]etcd ok") {
		t.Errorf("GET /readyz?verbose = %d, want 200 listing etcd ok:\n%s", code, body)
	}

	// Make sure at least one API request was counted.
	cs := clientset(t, s)
	if _, err := cs.TKEStackAppsV1().TApps("default").List(testContext(t), metav1.ListOptions{}); err != nil {
		t.Fatalf("list: %v", err)
	}
	code, body = httpGet(t, s.URL+"/metrics", "")
	if code != http.StatusOK {
		t.Fatalf("GET /metrics = %d", code)
	}
	text := string(body)
	if !strings.Contains(text, "apiserver_request_total") {
		t.Errorf("/metrics does not contain apiserver_request_total")
	}
	if !strings.Contains(text, `group="apps.tkestack.io"`) || !strings.Contains(text, `resource="tapps"`) {
		t.Errorf("/metrics has no apiserver_request_total sample for apps.tkestack.io tapps")
	}
}
