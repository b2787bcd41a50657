package kubectltapp

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	corev1 "k8s.io/api/core/v1"

	tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"
)

func TestCheckIDs(t *testing.T) {
	tests := []struct {
		name     string
		replicas int32
		ids      []string
		want     []string
		wantErr  string
	}{
		{name: "valid ids keep their order, repeats dropped", replicas: 3, ids: []string{"2", "0", "2"}, want: []string{"2", "0"}},
		{name: "id at replicas", replicas: 3, ids: []string{"1", "3"}, wantErr: `no instance ["3"]: its ids are 0..2`},
		{name: "every unknown id is named", replicas: 3, ids: []string{"-1", "01", "x", "7"}, wantErr: `["-1" "01" "x" "7"]`},
		{name: "no instances", replicas: 0, ids: []string{"0"}, wantErr: "it has no instances (replicas 0)"},
		{name: "no ids", replicas: 3, ids: nil, wantErr: "no instance id given"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := CheckIDs(testTApp(tt.replicas), tt.ids)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("CheckIDs = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func TestStatusesPatch(t *testing.T) {
	tests := []struct {
		name   string
		before map[string]tkestackv1.InstanceStatus
		ids    []string
		kill   bool
		after  map[string]tkestackv1.InstanceStatus
	}{
		{name: "kill adds Killed entries", before: nil, ids: []string{"1", "3"}, kill: true,
			after: map[string]tkestackv1.InstanceStatus{"1": "Killed", "3": "Killed"}},
		{name: "kill keeps other entries", before: map[string]tkestackv1.InstanceStatus{"0": "Killed"}, ids: []string{"2"}, kill: true,
			after: map[string]tkestackv1.InstanceStatus{"0": "Killed", "2": "Killed"}},
		{name: "revive removes only the named entries", before: map[string]tkestackv1.InstanceStatus{"0": "Killed", "2": "Killed"}, ids: []string{"2"},
			after: map[string]tkestackv1.InstanceStatus{"0": "Killed"}},
		{name: "revive of the last entry", before: map[string]tkestackv1.InstanceStatus{"2": "Killed"}, ids: []string{"2"},
			after: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			patch, err := StatusesPatch(tt.ids, tt.kill)
			if err != nil {
				t.Fatal(err)
			}
			tapp := testTApp(4)
			tapp.Spec.Statuses = tt.before
			got := applyMergePatch(t, tapp, patch)
			if !reflect.DeepEqual(got.Spec.Statuses, tt.after) && !(len(got.Spec.Statuses) == 0 && len(tt.after) == 0) {
				t.Errorf("statuses after the patch = %v, want %v", got.Spec.Statuses, tt.after)
			}
			tapp.Spec.Statuses = got.Spec.Statuses
			if !reflect.DeepEqual(got, tapp) {
				t.Errorf("the patch changed more than spec.statuses: %s", patch)
			}
		})
	}
}

func TestSplitByKilled(t *testing.T) {
	killedIDs, alive := SplitByKilled(testTApp(4, killed("1", "3")), []string{"0", "1", "2", "3"})
	if !reflect.DeepEqual(killedIDs, []string{"1", "3"}) || !reflect.DeepEqual(alive, []string{"0", "2"}) {
		t.Errorf("SplitByKilled = %v, %v; want [1 3], [0 2]", killedIDs, alive)
	}
}

func TestRestartPatch(t *testing.T) {
	at := time.Date(2026, 11, 24, 19, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		tapp *tkestackv1.TApp
	}{
		{name: "template only", tapp: testTApp(2, func(tapp *tkestackv1.TApp) { tapp.Spec.TemplatePool = nil })},
		{name: "template and pool", tapp: testTApp(2, func(tapp *tkestackv1.TApp) {
			tapp.Spec.TemplatePool["blue"] = *tapp.Spec.Template.DeepCopy()
		})},
		{name: "an earlier restart and other annotations", tapp: testTApp(2, func(tapp *tkestackv1.TApp) {
			tapp.Spec.Template.Annotations = map[string]string{RestartedAtAnnotation: "2020-01-01T00:00:00Z", "keep": "me"}
		})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			patch, err := RestartPatch(tt.tapp, at)
			if err != nil {
				t.Fatal(err)
			}
			got := applyMergePatch(t, tt.tapp, patch)
			want := tt.tapp.DeepCopy()
			stamp := func(tpl *corev1.PodTemplateSpec) {
				if tpl.Annotations == nil {
					tpl.Annotations = map[string]string{}
				}
				tpl.Annotations[RestartedAtAnnotation] = "2026-11-24T19:00:00Z"
			}
			stamp(&want.Spec.Template)
			for name, tpl := range want.Spec.TemplatePool {
				stamp(&tpl)
				want.Spec.TemplatePool[name] = tpl
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("after the patch %s:\n got %+v\nwant %+v", patch, got.Spec, want.Spec)
			}
		})
	}
}

// applyMergePatch applies a JSON merge patch to a copy of tapp.
func applyMergePatch(t *testing.T, tapp *tkestackv1.TApp, patch []byte) *tkestackv1.TApp {
	t.Helper()
	original, err := json.Marshal(tapp)
	if err != nil {
		t.Fatal(err)
	}
	patched, err := jsonpatch.MergePatch(original, patch)
	if err != nil {
		t.Fatalf("merge patch %s: %v", patch, err)
	}
	var out tkestackv1.TApp
	if err := json.Unmarshal(patched, &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

func TestPausePatch(t *testing.T) {
	for _, tt := range []struct {
		name          string
		before, pause bool
	}{
		{"pause a running rollout", false, true},
		{"resume a paused rollout", true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tapp := testTApp(2)
			tapp.Spec.UpdateStrategy.Paused = tt.before
			patch, err := PausePatch(tt.pause)
			if err != nil {
				t.Fatal(err)
			}
			got := applyMergePatch(t, tapp, patch)
			want := tapp.DeepCopy()
			want.Spec.UpdateStrategy.Paused = tt.pause
			if !reflect.DeepEqual(got, want) {
				t.Errorf("after %s: updateStrategy %+v, want %+v", patch, got.Spec.UpdateStrategy, want.Spec.UpdateStrategy)
			}
		})
	}
}

// applyJSONPatch applies a JSON patch (RFC 6902) to a copy of tapp.
func applyJSONPatch(t *testing.T, tapp *tkestackv1.TApp, patch []byte) *tkestackv1.TApp {
	t.Helper()
	original, err := json.Marshal(tapp)
	if err != nil {
		t.Fatal(err)
	}
	decoded, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		t.Fatalf("decoding %s: %v", patch, err)
	}
	patched, err := decoded.Apply(original)
	if err != nil {
		t.Fatalf("applying %s: %v", patch, err)
	}
	var out tkestackv1.TApp
	if err := json.Unmarshal(patched, &out); err != nil {
		t.Fatal(err)
	}
	return &out
}
