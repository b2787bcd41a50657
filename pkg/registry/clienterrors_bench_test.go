package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
)

// benchTApp is a TApp with pools template pool entries and as many killed instances, with one managedFields
// entry.
func benchTApp(pools int) *tkestack.TApp {
	template := func(i int) corev1.PodTemplateSpec {
		env := make([]corev1.EnvVar, 20)
		for j := range env {
			env[j] = corev1.EnvVar{Name: fmt.Sprintf("VAR_%d", j), Value: fmt.Sprintf("value-%d-%d", i, j)}
		}
		return corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{
				Name: "main", Image: fmt.Sprintf("registry.example.com/web:%d", i), Env: env,
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
			}}},
		}
	}
	t := &tkestack.TApp{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", ResourceVersion: "7",
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply,
				APIVersion: "apps.tkestack.io/v1", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:replicas":{}}}`)}}}},
		Spec: tkestack.TAppSpec{
			Replicas:            int32(pools),
			Selector:            &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template:            ptr.To(template(-1)),
			DefaultTemplateName: tkestack.DefaultTemplateName,
		},
	}
	if pools > 0 {
		t.Spec.TemplatePool = map[string]corev1.PodTemplateSpec{}
		t.Spec.Templates = map[string]string{}
		t.Spec.Statuses = map[string]tkestack.InstanceStatus{}
	}
	for i := range pools {
		name := fmt.Sprintf("pool-%d", i)
		t.Spec.TemplatePool[name] = template(i)
		t.Spec.Templates[fmt.Sprint(i)] = name
		t.Spec.Statuses[fmt.Sprint(i)] = tkestack.InstanceKilled
	}
	return t
}

// BenchmarkCheckWriteSize measures the size guard on the write of a small and a large TApp (every create and
// update encodes the object once; a server-side apply of an object with managedFields twice).
func BenchmarkCheckWriteSize(b *testing.B) {
	g := testGuard()
	for _, c := range []struct {
		name string
		obj  *tkestack.TApp
	}{
		{"small", benchTApp(0)},
		{"large", benchTApp(600)},
	} {
		encoded, err := json.Marshal(c.obj)
		if err != nil {
			b.Fatal(err)
		}
		for _, write := range []struct {
			name string
			ctx  context.Context
		}{
			{"update", context.Background()},
			{"apply", WithServerSideApply(context.Background())},
		} {
			b.Run(c.name+"/"+write.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if err := g.checkWriteSize(write.ctx, c.obj); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(len(encoded)), "object-bytes")
			})
		}
	}
}
