package tapp

import (
	"context"
	"encoding/json"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/registry/rest"
	scalescheme "k8s.io/client-go/scale/scheme"
	scaleautoscalingv1 "k8s.io/client-go/scale/scheme/autoscalingv1"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
)

// scaleScheme holds the internal Scale and its autoscaling/v1 form with their conversions, registered as
// pkg/apiserver's scheme registers them for the tapps/scale endpoint (that package imports this one).
var scaleScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := scalescheme.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := scaleautoscalingv1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}()

// FuzzScaleConversion drives the scale subresource with arbitrary selectors, replica counts, resource
// versions and UIDs: a TApp's Scale (scaleFromTApp), its conversion to autoscaling/v1 (where the selector is
// rendered as a string), a JSON round trip of that Scale, its conversion back, and a Scale write turned into
// a TApp write (scaleUpdatedObjectInfo). Nothing may panic, and:
//   - the autoscaling/v1 Scale carries the TApp's replicas and identity, and its selector string is the one
//     the strategy stores as status.scaleLabelSelector (what an HPA and kubectl see agree);
//   - a rendered selector parses back and renders to the same string;
//   - a write of a valid replica count changes only spec.replicas and the resourceVersion of the TApp; an
//     invalid one is refused as Invalid (or Conflict for another UID), and the stored TApp is never modified.
//
// `go test` runs the seeds; `make fuzz` explores further.
func FuzzScaleConversion(f *testing.F) {
	for _, seed := range []struct {
		selector             string
		spec, status, write  int32
		resourceVersion, uid string
	}{
		{`{"matchLabels":{"app":"x"}}`, 2, 1, 3, "5", ""},
		{`{"matchLabels":{"app":"x","tier":"web"}}`, 0, 0, 0, "", "uid-1"},
		{`null`, 1, 1, 1, "5", ""},
		{`{}`, 1, 0, tkestack.MaxReplicas, "5", ""},
		{`{"matchExpressions":[{"key":"app","operator":"In","values":["a","b"]}]}`, 3, 3, tkestack.MaxReplicas + 1, "7", ""},
		{`{"matchExpressions":[{"key":"app","operator":"NotIn","values":["a"]},{"key":"env","operator":"Exists"}]}`, 1, 2, -1, "", ""},
		{`{"matchExpressions":[{"key":"gone","operator":"DoesNotExist"}]}`, 1, 1, 2, "1", "other"},
		{`{"matchExpressions":[{"key":"app","operator":"In","values":[""]}]}`, 1, 1, 2, "1", ""},
		{`{"matchExpressions":[{"key":"app","operator":"In","values":[]}]}`, 1, 1, 2, "1", ""},
		{`{"matchExpressions":[{"key":"app","operator":"Exists","values":["x"]}]}`, 1, 1, 2, "1", ""},
		{`{"matchExpressions":[{"key":"app","operator":"Near","values":["x"]}]}`, 1, 1, 2, "1", ""},
		{`{"matchLabels":{"bad key!":"x"}}`, 1, 1, 2, "1", ""},
		{`{"matchLabels":{"app":"bad value!"}}`, 1, 1, 2, "1", ""},
		{`{"matchLabels":{"example.com/app":"x-1.2_3"},"matchExpressions":[{"key":"example.com/app","operator":"NotIn","values":["y"]}]}`, 5, 4, 6, "9", ""},
		{`{"matchLabels":{"app":"x"}}`, -2147483648, 2147483647, 2147483647, "not-a-number", "uid-1"},
		{`{"matchLabels":{"":""}}`, 1, 1, 1, "", ""},
		{`[1,2,3]`, 1, 1, 1, "", ""},
	} {
		f.Add([]byte(seed.selector), seed.spec, seed.status, seed.write, seed.resourceVersion, seed.uid)
	}
	codecs := serializer.NewCodecFactory(scaleScheme)
	codec := codecs.LegacyCodec(autoscalingv1.SchemeGroupVersion)

	f.Fuzz(func(t *testing.T, selectorJSON []byte, specReplicas, statusReplicas, writeReplicas int32, resourceVersion, uid string) {
		tapp := validTApp()
		tapp.Spec.Replicas, tapp.Status.Replicas = specReplicas, statusReplicas
		tapp.Spec.Selector = nil
		if err := json.Unmarshal(selectorJSON, &tapp.Spec.Selector); err != nil {
			tapp.Spec.Selector = nil
		}
		stored := tapp.DeepCopy()

		// Read path: TApp → internal Scale → autoscaling/v1 Scale.
		scale := scaleFromTApp(tapp)
		if !apiequality.Semantic.DeepEqual(tapp, stored) {
			t.Fatalf("scaleFromTApp modified the TApp")
		}
		if scale.Spec.Replicas != specReplicas || scale.Status.Replicas != statusReplicas ||
			scale.Name != tapp.Name || scale.Namespace != tapp.Namespace || scale.UID != tapp.UID || scale.ResourceVersion != tapp.ResourceVersion {
			t.Fatalf("scale %+v does not carry the TApp's replicas and identity", scale)
		}
		var external autoscalingv1.Scale
		convertErr := scaleScheme.Convert(scale, &external, nil)
		_, selectorErr := metav1.LabelSelectorAsSelector(tapp.Spec.Selector)
		if (convertErr != nil) != (selectorErr != nil) {
			t.Fatalf("conversion error %v, selector error %v: a Scale fails to render exactly when its selector is invalid", convertErr, selectorErr)
		}
		if convertErr != nil {
			if scaleSelector(tapp) != "" {
				t.Fatalf("invalid selector rendered as status.scaleLabelSelector %q", scaleSelector(tapp))
			}
		} else {
			if external.Status.Selector != scaleSelector(tapp) {
				t.Fatalf("Scale selector %q, status.scaleLabelSelector %q: they must agree", external.Status.Selector, scaleSelector(tapp))
			}
			if external.Spec.Replicas != specReplicas || external.Status.Replicas != statusReplicas || external.UID != tapp.UID {
				t.Fatalf("autoscaling/v1 Scale %+v lost the TApp's replicas or identity", external)
			}

			// The wire: encode and decode the autoscaling/v1 Scale.
			external.APIVersion, external.Kind = "autoscaling/v1", "Scale"
			body, err := runtime.Encode(codec, &external)
			if err != nil {
				t.Fatalf("encoding %+v: %v", external, err)
			}
			var decoded autoscalingv1.Scale
			if err := json.Unmarshal(body, &decoded); err != nil {
				t.Fatalf("decoding %s: %v", body, err)
			}
			if !apiequality.Semantic.DeepEqual(decoded, external) {
				t.Fatalf("JSON round trip changed the Scale: %+v, want %+v", decoded, external)
			}

			// And back: the rendered selector parses and renders to the same string.
			var back scalescheme.Scale
			if err := scaleScheme.Convert(&decoded, &back, nil); err != nil {
				t.Fatalf("converting back %+v: %v", decoded, err)
			}
			if back.Spec.Replicas != specReplicas || back.Status.Replicas != statusReplicas {
				t.Fatalf("converting back lost replicas: %+v", back)
			}
			if external.Status.Selector != "" {
				rerendered, err := metav1.LabelSelectorAsSelector(back.Status.Selector)
				if err != nil {
					t.Fatalf("selector %q parsed back to an invalid selector %+v: %v", external.Status.Selector, back.Status.Selector, err)
				}
				if rerendered.String() != external.Status.Selector {
					t.Fatalf("selector %q renders as %q after a round trip", external.Status.Selector, rerendered.String())
				}
			}
		}

		// Write path: a Scale asking for writeReplicas becomes a TApp write.
		write := &scalescheme.Scale{
			ObjectMeta: metav1.ObjectMeta{Name: tapp.Name, Namespace: tapp.Namespace, UID: types.UID(uid), ResourceVersion: resourceVersion},
			Spec:       scalescheme.ScaleSpec{Replicas: writeReplicas},
		}
		info := &scaleUpdatedObjectInfo{name: tapp.Name, reqObjInfo: rest.DefaultUpdatedObjectInfo(write)}
		obj, err := info.UpdatedObject(context.Background(), tapp)
		if !apiequality.Semantic.DeepEqual(tapp, stored) {
			t.Fatalf("a Scale write modified the stored TApp")
		}
		switch {
		case writeReplicas < 0 || writeReplicas > tkestack.MaxReplicas:
			if !apierrors.IsInvalid(err) {
				t.Fatalf("replicas %d: err = %v, want Invalid", writeReplicas, err)
			}
		case uid != "" && types.UID(uid) != tapp.UID:
			if !apierrors.IsConflict(err) {
				t.Fatalf("uid %q: err = %v, want Conflict", uid, err)
			}
		case err != nil:
			t.Fatalf("replicas %d, uid %q: %v", writeReplicas, uid, err)
		default:
			want := stored.DeepCopy()
			want.Spec.Replicas, want.ResourceVersion = writeReplicas, resourceVersion
			if got := obj.(*tkestack.TApp); !apiequality.Semantic.DeepEqual(got, want) {
				t.Fatalf("Scale write produced %+v, want only replicas and resourceVersion changed: %+v", got, want)
			}
		}
	})
}
