package integration

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	openyurtv1alpha1 "github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1alpha1"
	openyurtv1beta1 "github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt/v1beta1"
	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
	"github.com/tapp-io/tapp-apiserver/pkg/apiserver"
)

const protobufMediaType = "application/vnd.kubernetes.protobuf"

// protobufClient sends raw requests and reads protobuf answers, as a client that speaks protobuf only does.
type protobufClient struct {
	t      *testing.T
	url    string
	client *http.Client
	pb     *protobuf.Serializer
}

func newProtobufClient(t *testing.T, s *testServer) *protobufClient {
	t.Helper()
	client, err := rest.HTTPClientFor(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	return &protobufClient{t: t, url: s.URL, client: client, pb: protobuf.NewSerializer(apiserver.Scheme, apiserver.Scheme)}
}

// encode encodes obj in protobuf as version gv.
func (c *protobufClient) encode(obj runtime.Object, gv schema.GroupVersion) []byte {
	c.t.Helper()
	data, err := runtime.Encode(apiserver.Codecs.EncoderForVersion(c.pb, gv), obj)
	if err != nil {
		c.t.Fatalf("encoding %T in protobuf: %v", obj, err)
	}
	return data
}

// do sends a request and returns the answer's status, content type and body.
func (c *protobufClient) do(method, path, contentType string, body []byte, accept string) (int, string, []byte) {
	c.t.Helper()
	req, err := http.NewRequestWithContext(testContext(c.t), method, c.url+path, bytes.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", accept)
	resp, err := c.client.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("%s %s: reading the answer: %v", method, path, err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), data
}

// protobuf sends a request accepting protobuf only, checks the status and the protobuf content type, and
// decodes the answer into into.
func (c *protobufClient) protobuf(method, path, contentType string, body []byte, wantStatus int, into runtime.Object) {
	c.t.Helper()
	status, gotType, data := c.do(method, path, contentType, body, protobufMediaType)
	if status != wantStatus {
		c.t.Fatalf("%s %s: status %d, want %d: %s", method, path, status, wantStatus, data)
	}
	if gotType != protobufMediaType {
		c.t.Fatalf("%s %s: Content-Type %q, want %q", method, path, gotType, protobufMediaType)
	}
	if !bytes.HasPrefix(data, []byte("k8s\x00")) {
		c.t.Fatalf("%s %s: the answer is not a protobuf envelope: %q", method, path, data)
	}
	if _, _, err := c.pb.Decode(data, nil, into); err != nil {
		c.t.Fatalf("%s %s: decoding the protobuf answer: %v", method, path, err)
	}
}

// TestProtobufServing: a client that speaks protobuf only gets, lists, watches, creates, updates and patches
// TApps, and reads and writes their scale subresource, as it does Deployments with kube-apiserver.
func TestProtobufServing(t *testing.T) {
	s := sharedServer(t)
	c := newProtobufClient(t, s)
	ns := newNamespace(t)
	base := "/apis/apps.tkestack.io/v1/namespaces/" + ns + "/tapps"

	created := &tkestackv1.TApp{}
	c.protobuf(http.MethodPost, base, protobufMediaType, c.encode(newTApp(ns, "pb", 1), tkestackv1.SchemeGroupVersion), http.StatusCreated, created)
	if created.Name != "pb" || created.Spec.Replicas != 1 || created.Spec.Template.Spec.Containers[0].Image != "nginx:1.7.9" {
		t.Fatalf("created TApp %s/%s replicas %d differs from what was sent", created.Namespace, created.Name, created.Spec.Replicas)
	}
	if created.Spec.UpdateStrategy.Template == "" {
		t.Errorf("the created TApp was not defaulted: spec.updateStrategy.template is empty")
	}

	got := &tkestackv1.TApp{}
	c.protobuf(http.MethodGet, base+"/pb", "", nil, http.StatusOK, got)
	if got.UID != created.UID {
		t.Fatalf("get returned uid %s, want %s", got.UID, created.UID)
	}

	list := &tkestackv1.TAppList{}
	c.protobuf(http.MethodGet, base, "", nil, http.StatusOK, list)
	if len(list.Items) != 1 || list.Items[0].Name != "pb" {
		t.Fatalf("list returned %d items, want the TApp pb", len(list.Items))
	}

	got.Labels = map[string]string{"updated": "protobuf"}
	updated := &tkestackv1.TApp{}
	c.protobuf(http.MethodPut, base+"/pb", protobufMediaType, c.encode(got, tkestackv1.SchemeGroupVersion), http.StatusOK, updated)
	if updated.Labels["updated"] != "protobuf" {
		t.Fatalf("update did not store the label: %v", updated.Labels)
	}

	patched := &tkestackv1.TApp{}
	c.protobuf(http.MethodPatch, base+"/pb", "application/merge-patch+json", []byte(`{"metadata":{"labels":{"patched":"yes"}}}`), http.StatusOK, patched)
	if patched.Labels["patched"] != "yes" || patched.Labels["updated"] != "protobuf" {
		t.Fatalf("patch answered labels %v", patched.Labels)
	}

	scale := &autoscalingv1.Scale{}
	c.protobuf(http.MethodGet, base+"/pb/scale", "", nil, http.StatusOK, scale)
	if scale.Spec.Replicas != 1 {
		t.Fatalf("scale reads %d replicas, want 1", scale.Spec.Replicas)
	}
	scale.Spec.Replicas = 3
	scaled := &autoscalingv1.Scale{}
	c.protobuf(http.MethodPut, base+"/pb/scale", protobufMediaType, c.encode(scale, autoscalingv1.SchemeGroupVersion), http.StatusOK, scaled)
	if scaled.Spec.Replicas != 3 {
		t.Fatalf("scale update answered %d replicas, want 3", scaled.Spec.Replicas)
	}

	// Watch from the creation: the first event is the later state of the object, framed as kube-apiserver
	// frames protobuf watch events (a 4-byte big-endian length, then a WatchEvent).
	watchType := protobufMediaType + ";stream=watch"
	req, err := http.NewRequestWithContext(testContext(t), http.MethodGet,
		fmt.Sprintf("%s%s?watch=1&resourceVersion=%s", s.URL, base, created.ResourceVersion), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", watchType)
	resp, err := c.client.Do(req)
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != watchType {
		t.Fatalf("watch: status %d, Content-Type %q, want 200 and %q", resp.StatusCode, resp.Header.Get("Content-Type"), watchType)
	}
	var size uint32
	if err := binary.Read(resp.Body, binary.BigEndian, &size); err != nil {
		t.Fatalf("watch: reading the first frame's length: %v", err)
	}
	frame := make([]byte, size)
	if _, err := io.ReadFull(resp.Body, frame); err != nil {
		t.Fatalf("watch: reading the first frame: %v", err)
	}
	// The event itself is a bare message (no envelope, as kube-apiserver's stream serializer writes it).
	event := &metav1.WatchEvent{}
	if err := event.Unmarshal(frame); err != nil {
		t.Fatalf("watch: decoding the first event: %v", err)
	}
	watched := &tkestackv1.TApp{}
	if _, _, err := c.pb.Decode(event.Object.Raw, nil, watched); err != nil {
		t.Fatalf("watch: decoding the event's object: %v", err)
	}
	if event.Type != "MODIFIED" || watched.UID != created.UID || watched.Labels["updated"] != "protobuf" {
		t.Fatalf("watch: first event %s of %s (labels %v), want MODIFIED of the updated TApp", event.Type, watched.Name, watched.Labels)
	}
}

// TestProtobufMetadataAndTable: PartialObjectMetadata and its list are served in protobuf (the garbage
// collector and the namespace controller ask for them). Tables are served in JSON and YAML only, as by
// kube-apiserver: a client asking for a protobuf Table alone gets 406, one that also accepts a JSON Table
// gets that.
func TestProtobufMetadataAndTable(t *testing.T) {
	s := sharedServer(t)
	c := newProtobufClient(t, s)
	ns := newNamespace(t)
	base := "/apis/apps.tkestack.io/v1/namespaces/" + ns + "/tapps"
	created := &tkestackv1.TApp{}
	c.protobuf(http.MethodPost, base, protobufMediaType, c.encode(newTApp(ns, "meta", 1), tkestackv1.SchemeGroupVersion), http.StatusCreated, created)

	for _, tc := range []struct {
		path, as string
		into     runtime.Object
	}{
		{base + "/meta", "PartialObjectMetadata", &metav1.PartialObjectMetadata{}},
		{base, "PartialObjectMetadataList", &metav1.PartialObjectMetadataList{}},
	} {
		accept := protobufMediaType + ";as=" + tc.as + ";g=meta.k8s.io;v=v1"
		status, gotType, data := c.do(http.MethodGet, tc.path, "", nil, accept)
		if status != http.StatusOK || gotType != protobufMediaType {
			t.Fatalf("%s as %s: status %d, Content-Type %q, want 200 and %q: %s", tc.path, tc.as, status, gotType, protobufMediaType, data)
		}
		obj, _, err := c.pb.Decode(data, nil, tc.into)
		if err != nil {
			t.Fatalf("%s as %s: decoding: %v", tc.path, tc.as, err)
		}
		switch m := obj.(type) {
		case *metav1.PartialObjectMetadata:
			if m.UID != created.UID {
				t.Errorf("PartialObjectMetadata has uid %s, want %s", m.UID, created.UID)
			}
		case *metav1.PartialObjectMetadataList:
			if len(m.Items) != 1 || m.Items[0].UID != created.UID {
				t.Errorf("PartialObjectMetadataList has %d items, want the TApp meta", len(m.Items))
			}
		}
	}

	protobufTable := protobufMediaType + ";as=Table;g=meta.k8s.io;v=v1"
	if status, _, data := c.do(http.MethodGet, base, "", nil, protobufTable); status != http.StatusNotAcceptable {
		t.Errorf("a protobuf Table: status %d, want 406 as kube-apiserver answers: %s", status, data)
	}
	status, gotType, data := c.do(http.MethodGet, base, "", nil, protobufTable+", application/json;as=Table;g=meta.k8s.io;v=v1")
	if status != http.StatusOK || !strings.HasPrefix(gotType, "application/json") {
		t.Fatalf("a protobuf or JSON Table: status %d, Content-Type %q, want 200 and JSON: %s", status, gotType, data)
	}
	var table metav1.Table
	if err := json.Unmarshal(data, &table); err != nil || table.Kind != "Table" || len(table.Rows) != 1 {
		t.Fatalf("a protobuf or JSON Table: got kind %q with %d rows (%v), want a Table of 1 row", table.Kind, len(table.Rows), err)
	}
}

// TestProtobufEveryServedVersion creates, reads and lists every resource in every served version through
// protobuf.
func TestProtobufEveryServedVersion(t *testing.T) {
	s := sharedServer(t)
	c := newProtobufClient(t, s)
	ns := newNamespace(t)
	betaPool := &openyurtv1beta1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: uniqueName(t, "beta")}}
	for _, tc := range []struct {
		gv       schema.GroupVersion
		resource string
		obj      runtime.Object
		name     string
		into     func() (runtime.Object, runtime.Object)
	}{
		{tkestackv1.SchemeGroupVersion, "namespaces/" + ns + "/tapps", newTApp(ns, "every", 1), "every",
			func() (runtime.Object, runtime.Object) { return &tkestackv1.TApp{}, &tkestackv1.TAppList{} }},
		{openyurtv1alpha1.SchemeGroupVersion, "namespaces/" + ns + "/yurtappdaemons", newYurtAppDaemon(ns, "every"), "every",
			func() (runtime.Object, runtime.Object) {
				return &openyurtv1alpha1.YurtAppDaemon{}, &openyurtv1alpha1.YurtAppDaemonList{}
			}},
		{openyurtv1alpha1.SchemeGroupVersion, "nodepools", newNodePool(uniqueName(t, "alpha")), "",
			func() (runtime.Object, runtime.Object) {
				return &openyurtv1alpha1.NodePool{}, &openyurtv1alpha1.NodePoolList{}
			}},
		{openyurtv1beta1.SchemeGroupVersion, "nodepools", betaPool, betaPool.Name,
			func() (runtime.Object, runtime.Object) {
				return &openyurtv1beta1.NodePool{}, &openyurtv1beta1.NodePoolList{}
			}},
	} {
		t.Run(tc.gv.String()+"/"+tc.resource, func(t *testing.T) {
			c := *c
			c.t = t
			name := tc.name
			if name == "" {
				name = tc.obj.(metav1.Object).GetName()
			}
			path := "/apis/" + tc.gv.String() + "/" + tc.resource
			created, list := tc.into()
			c.protobuf(http.MethodPost, path, protobufMediaType, c.encode(tc.obj, tc.gv), http.StatusCreated, created)
			got, _ := tc.into()
			c.protobuf(http.MethodGet, path+"/"+name, "", nil, http.StatusOK, got)
			if got.(metav1.Object).GetUID() != created.(metav1.Object).GetUID() {
				t.Fatalf("get returned another object than the one created")
			}
			c.protobuf(http.MethodGet, path, "", nil, http.StatusOK, list)
		})
	}
}

// The namespace controller and the garbage collector use the metadata client, which prefers protobuf and
// also accepts JSON; an error here leaves namespaces stuck in Terminating.
func TestProtobufPreferringClients(t *testing.T) {
	s := sharedServer(t)
	ctx := testContext(t)
	ns := newNamespace(t)
	cs := clientset(t, s)
	for _, name := range []string{"a", "b"} {
		if _, err := cs.TKEStackAppsV1().TApps(ns).Create(ctx, newTApp(ns, name, 1), metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating TApp %s: %v", name, err)
		}
	}
	if _, err := cs.OpenYurtAppsV1alpha1().YurtAppDaemons(ns).Create(ctx, newYurtAppDaemon(ns, "yad"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating YurtAppDaemon: %v", err)
	}

	cfg := rest.CopyConfig(s.Config)
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	client, err := metadata.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tapps := schema.GroupVersionResource{Group: "apps.tkestack.io", Version: "v1", Resource: "tapps"}
	yads := schema.GroupVersionResource{Group: "apps.openyurt.io", Version: "v1alpha1", Resource: "yurtappdaemons"}

	list, err := client.Resource(tapps).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("metadata list of tapps: %v", err)
	}
	if len(list.Items) != 2 {
		t.Fatalf("metadata list returned %d tapps, want 2", len(list.Items))
	}
	for _, gvr := range []schema.GroupVersionResource{tapps, yads} {
		if err := client.Resource(gvr).Namespace(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
			t.Fatalf("metadata delete collection of %s: %v", gvr.Resource, err)
		}
		left, err := client.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatalf("metadata list of %s: %v", gvr.Resource, err)
		}
		if len(left.Items) != 0 {
			t.Errorf("%d %s left after delete collection", len(left.Items), gvr.Resource)
		}
	}
}
