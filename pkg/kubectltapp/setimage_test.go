package kubectltapp

import (
	"encoding/json"
	"strings"
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	corev1 "k8s.io/api/core/v1"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

// applyImagePatch applies ImagePatch's patch to tapp and returns the images of every template as
// "template/container=image" (init containers marked), or the error.
func applyImagePatch(t *testing.T, tapp *tkestackv1.TApp, template string, images map[string]string) (string, []ImageChange, error) {
	t.Helper()
	patch, changes, err := ImagePatch(tapp, template, images)
	if err != nil || patch == nil {
		return "", changes, err
	}
	doc, err := json.Marshal(tapp)
	if err != nil {
		t.Fatal(err)
	}
	decoded, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		t.Fatalf("patch %s: %v", patch, err)
	}
	patched, err := decoded.Apply(doc)
	if err != nil {
		t.Fatalf("patch %s: %v", patch, err)
	}
	var out tkestackv1.TApp
	if err := json.Unmarshal(patched, &out); err != nil {
		t.Fatal(err)
	}
	var got []string
	list := func(name string, spec corev1.PodSpec) {
		for _, c := range spec.InitContainers {
			got = append(got, name+"/init:"+c.Name+"="+c.Image)
		}
		for _, c := range spec.Containers {
			got = append(got, name+"/"+c.Name+"="+c.Image)
		}
	}
	list("default", out.Spec.Template.Spec)
	for _, name := range sortedPoolNames(&out) {
		list(name, out.Spec.TemplatePool[name].Spec)
	}
	return strings.Join(got, " "), changes, nil
}

func TestImagePatch(t *testing.T) {
	withSidecar := func(tapp *tkestackv1.TApp) {
		tapp.Spec.Template.Spec.InitContainers = []corev1.Container{{Name: "setup", Image: "busybox:1"}}
		pool := tapp.Spec.TemplatePool["canary"]
		pool.Spec.Containers = append(pool.Spec.Containers, corev1.Container{Name: "sidecar", Image: "envoy:1"})
		tapp.Spec.TemplatePool["canary"] = pool
		tapp.Spec.TemplatePool["a/b~c"] = pool
	}
	for _, tc := range []struct {
		name     string
		template string
		images   map[string]string
		want     string
		changes  int
		err      string
	}{{
		name: "default template", template: "default", images: map[string]string{"app": "nginx:9"}, changes: 1,
		want: "default/init:setup=busybox:1 default/app=nginx:9 a/b~c/app=nginx:2 a/b~c/sidecar=envoy:1 canary/app=nginx:2 canary/sidecar=envoy:1",
	}, {
		name: "init container", template: "default", images: map[string]string{"setup": "busybox:2"}, changes: 1,
		want: "default/init:setup=busybox:2 default/app=nginx:1 a/b~c/app=nginx:2 a/b~c/sidecar=envoy:1 canary/app=nginx:2 canary/sidecar=envoy:1",
	}, {
		name: "pool template with an escaped name", template: "a/b~c", images: map[string]string{"sidecar": "envoy:2"}, changes: 1,
		want: "default/init:setup=busybox:1 default/app=nginx:1 a/b~c/app=nginx:2 a/b~c/sidecar=envoy:2 canary/app=nginx:2 canary/sidecar=envoy:1",
	}, {
		name: "all templates, a container only some have", template: "all", images: map[string]string{"sidecar": "envoy:3"}, changes: 2,
		want: "default/init:setup=busybox:1 default/app=nginx:1 a/b~c/app=nginx:2 a/b~c/sidecar=envoy:3 canary/app=nginx:2 canary/sidecar=envoy:3",
	}, {
		name: "wildcard", template: "canary", images: map[string]string{"*": "x:1"}, changes: 2,
		want: "default/init:setup=busybox:1 default/app=nginx:1 a/b~c/app=nginx:2 a/b~c/sidecar=envoy:1 canary/app=x:1 canary/sidecar=x:1",
	}, {
		name: "named container wins over the wildcard", template: "canary", images: map[string]string{"*": "x:1", "app": "nginx:5"}, changes: 2,
		want: "default/init:setup=busybox:1 default/app=nginx:1 a/b~c/app=nginx:2 a/b~c/sidecar=envoy:1 canary/app=nginx:5 canary/sidecar=x:1",
	}, {
		name: "unchanged image", template: "default", images: map[string]string{"app": "nginx:1"},
	}, {
		name: "container not in the template", template: "default", images: map[string]string{"sidecar": "envoy:2"},
		err: `TApp ns/web: no container ["sidecar"] in template(s) default (containers: default: setup (init), app)`,
	}, {
		name: "unknown template", template: "nope", images: map[string]string{"app": "nginx:2"},
		err: `TApp ns/web has no template "nope": its templates are default, a/b~c, canary (or --template=all)`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			tapp := testTApp(3, withSidecar)
			got, changes, err := applyImagePatch(t, tapp, tc.template, tc.images)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("err = %v, want %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(changes) != tc.changes || got != tc.want {
				t.Errorf("changes %+v, images %s; want %d changes, %s", changes, got, tc.changes, tc.want)
			}
		})
	}
}

func TestImagePatchTestsContainerNames(t *testing.T) {
	tapp := testTApp(1)
	patch, _, err := ImagePatch(tapp, "default", map[string]string{"app": "nginx:2"})
	if err != nil {
		t.Fatal(err)
	}
	// The TApp changed meanwhile: another container is now at index 0.
	tapp.Spec.Template.Spec.Containers[0].Name = "other"
	doc, _ := json.Marshal(tapp)
	decoded, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := decoded.Apply(doc); err == nil {
		t.Errorf("patch %s applied to a TApp whose container 0 is not app", patch)
	}
}

func TestParseImageArgs(t *testing.T) {
	if got, err := ParseImageArgs([]string{"app=nginx:1", "*=x:2"}); err != nil || len(got) != 2 || got["app"] != "nginx:1" || got["*"] != "x:2" {
		t.Errorf("ParseImageArgs = %v, %v", got, err)
	}
	for _, args := range [][]string{{"app"}, {"=x"}, {"app="}, {"app=a", "app=b"}, {}} {
		if _, err := ParseImageArgs(args); err == nil {
			t.Errorf("ParseImageArgs(%q) accepted", args)
		}
	}
}

func TestRolloutNote(t *testing.T) {
	tapp := testTApp(4, func(tapp *tkestackv1.TApp) {
		tapp.Spec.Templates = map[string]string{"2": "canary"}
		tapp.Spec.Statuses = map[string]tkestackv1.InstanceStatus{"1": "Killed"}
		tapp.Spec.UpdateStrategy.Partition = 3
		tapp.Spec.UpdateStrategy.Paused = true
	})
	got := RolloutNote(tapp, map[string]bool{"default": true, "canary": true})
	for _, want := range []string{"instance(s) 3 ", "below partition 3", "kubectl tapp rollout resume web", "kubectl tapp rollout status web"} {
		if !strings.Contains(got, want) {
			t.Errorf("RolloutNote = %q, want %q in it", got, want)
		}
	}
	if got := RolloutNote(tapp, map[string]bool{"canary": true}); !strings.HasPrefix(got, "no instance runs the changed template") {
		t.Errorf("RolloutNote for canary only (instance 2, below the partition) = %q", got)
	}
}

func TestInstanceCompletions(t *testing.T) {
	tapp := testTApp(12, func(tapp *tkestackv1.TApp) {
		tapp.Spec.Templates = map[string]string{"1": "canary"}
		tapp.Spec.Statuses = map[string]tkestackv1.InstanceStatus{"10": "Killed"}
	})
	got := InstanceCompletions(tapp, "1", []string{"11"})
	want := []string{"1\ttemplate canary, pod web-1", "10\ttemplate default, killed"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("InstanceCompletions = %q, want %q", got, want)
	}
}

func TestContainerPortCompletions(t *testing.T) {
	spec := &corev1.PodSpec{Containers: []corev1.Container{
		{Name: "app", Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 80}, {Name: "dns", ContainerPort: 53, Protocol: corev1.ProtocolUDP}}},
		{Name: "metrics", Ports: []corev1.ContainerPort{{ContainerPort: 8080}}},
	}}
	if got := strings.Join(ContainerPortCompletions(spec, ""), "|"); got != "80\tcontainer app|http\tcontainer app|8080\tcontainer metrics" {
		t.Errorf("ContainerPortCompletions = %q", got)
	}
	if got := strings.Join(ContainerPortCompletions(spec, "h"), "|"); got != "http\tcontainer app" {
		t.Errorf("ContainerPortCompletions(h) = %q", got)
	}
}
