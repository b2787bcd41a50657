package refusal

import (
	"encoding/json"
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The bodies are kube-apiserver's answers to dry-run pod creates with generateName "web-" in namespace ns1,
// as the e2e test TestPodTemplateRefusalClasses receives them.
var recorded = []struct {
	name string
	body string
	want Class
}{
	{"exceeded quota", `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods \"web-abcde\" is forbidden: exceeded quota: no-pods, requested: pods=1, used: pods=0, limited: pods=0","reason":"Forbidden","details":{"name":"web-abcde","kind":"pods"},"code":403}`, UsageQuota},
	{"quota status unknown", `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods \"web-abcde\" is forbidden: status unknown for quota: no-pods, resources: pods","reason":"Forbidden","details":{"name":"web-abcde","kind":"pods"},"code":403}`, UsageQuota},
	{"quota needs limits", `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods \"web-abcde\" is forbidden: failed quota: compute: must specify limits.cpu for: app","reason":"Forbidden","details":{"name":"web-abcde","kind":"pods"},"code":403}`, Refused},
	{"missing service account", `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods \"web-\" is forbidden: error looking up service account ns1/runner: serviceaccount \"runner\" not found","reason":"Forbidden","details":{"name":"web-","kind":"pods"},"code":403}`, MissingServiceAccount},
	{"missing priority class", `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods \"web-\" is forbidden: no PriorityClass with name high was found","reason":"Forbidden","details":{"name":"web-","kind":"pods"},"code":403}`, MissingReference},
	{"missing runtime class", `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods \"web-\" is forbidden: pod rejected: RuntimeClass \"gvisor\" not found","reason":"Forbidden","details":{"name":"web-","kind":"pods"},"code":403}`, MissingReference},
	{"terminating namespace", `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods \"web-\" is forbidden: unable to create new content in namespace ns1 because it is being terminated","reason":"Forbidden","details":{"name":"web-","kind":"pods","causes":[{"reason":"NamespaceTerminating","message":"namespace ns1 is being terminated","field":"metadata.namespace"}]},"code":403}`, NamespaceTerminating},
	{"missing namespace", `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"namespaces \"ns1\" not found","reason":"NotFound","details":{"name":"ns1","kind":"namespaces"},"code":404}`, NamespaceNotFound},
	{"authorization denial", `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods is forbidden: User \"nobody\" cannot create resource \"pods\" in API group \"\" in the namespace \"ns1\"","reason":"Forbidden","details":{"kind":"pods"},"code":403}`, AuthorizationDenied},
	{"LimitRange", `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods \"web-abcde\" is forbidden: maximum cpu usage per Container is 1, but limit is 2","reason":"Forbidden","details":{"name":"web-abcde","kind":"pods"},"code":403}`, Refused},
	{"PodSecurity", `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods \"web-abcde\" is forbidden: violates PodSecurity \"restricted:latest\": runAsNonRoot != true","reason":"Forbidden","details":{"name":"web-abcde","kind":"pods"},"code":403}`, Refused},
	{"validation", `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Pod \"web-abcde\" is invalid: spec.containers[0].image: Required value","reason":"Invalid","details":{"name":"web-abcde","kind":"Pod","causes":[{"reason":"FieldValueRequired","message":"Required value","field":"spec.containers[0].image"}]},"code":422}`, Invalid},
	{"admission policy denial", `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods \"web-abcde\" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: no","reason":"Invalid","details":{"name":"web-abcde","kind":"pods","causes":[{"message":"ValidatingAdmissionPolicy 'p' with binding 'b' denied request: no"}]},"code":422}`, Invalid},
	{"webhook denial without reason", `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"admission webhook \"deny.example.com\" denied the request: no latest tags","code":403}`, Refused},
	{"webhook denial 400", `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"admission webhook \"deny.example.com\" denied the request: no latest tags","code":400}`, Refused},
	{"failing webhook", `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Internal error occurred: failed calling webhook \"x\": connection refused","reason":"InternalError","details":{"causes":[{"message":"failed calling webhook \"x\": connection refused"}]},"code":500}`, Unavailable},
	{"throttled", `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"slow down","reason":"TooManyRequests","details":{"retryAfterSeconds":1},"code":429}`, Unavailable},
	{"timeout", `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"request did not complete within requested timeout","reason":"Timeout","details":{},"code":504}`, Unavailable},
	{"name taken", `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods \"web-abcde\" already exists","reason":"AlreadyExists","details":{"name":"web-abcde","kind":"pods"},"code":409}`, NameTaken},
	// Dry-run creates of a YurtAppDaemon's Deployment or StatefulSet.
	{"deployment validation", `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Deployment.apps \"web-abcde\" is invalid: spec.template.spec.containers[0].image: Required value","reason":"Invalid","details":{"name":"web-abcde","group":"apps","kind":"Deployment","causes":[{"reason":"FieldValueRequired","message":"Required value","field":"spec.template.spec.containers[0].image"}]},"code":422}`, Invalid},
	{"deployment authorization denial", `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"deployments.apps is forbidden: User \"nobody\" cannot create resource \"deployments\" in API group \"apps\" in the namespace \"ns1\"","reason":"Forbidden","details":{"group":"apps","kind":"deployments"},"code":403}`, AuthorizationDenied},
	{"statefulset exceeded quota", `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"statefulsets.apps \"web-\" is forbidden: exceeded quota: q, requested: count/statefulsets.apps=1, used: count/statefulsets.apps=1, limited: count/statefulsets.apps=1","reason":"Forbidden","details":{"name":"web-","group":"apps","kind":"statefulsets"},"code":403}`, UsageQuota},
	{"another NotFound", `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server could not find the requested resource","reason":"NotFound","details":{},"code":404}`, Unavailable},
}

func TestClassifyRecordedAnswers(t *testing.T) {
	for _, tt := range recorded {
		t.Run(tt.name, func(t *testing.T) {
			var s metav1.Status
			if err := json.Unmarshal([]byte(tt.body), &s); err != nil {
				t.Fatal(err)
			}
			if got := Classify(&apierrors.StatusError{ErrStatus: s}).Class; got != tt.want {
				t.Errorf("Classify = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestClassifyWithoutStatus(t *testing.T) {
	if got := Classify(nil).Class; got != Created {
		t.Errorf("Classify(nil) = %v", got)
	}
	if got := Classify(errors.New("dial tcp 10.0.0.1:443: connect: connection refused")).Class; got != Unavailable {
		t.Errorf("Classify(network error) = %v", got)
	}
}

func TestMessageLosesThePodName(t *testing.T) {
	for body, want := range map[string]string{
		`{"message":"pods \"web-abcde\" is forbidden: exceeded quota: pods","reason":"Forbidden","code":403}`: "exceeded quota: pods",
		`{"message":"Pod \"web-abcde\" is invalid: spec.containers[0].image: Required value","code":422}`:     "spec.containers[0].image: Required value",
		`{"message":"admission webhook \"deny.example.com\" denied the request: no latest tags","code":400}`:  `admission webhook "deny.example.com" denied the request: no latest tags`,
		`{"message":"Deployment.apps \"web-\" is invalid: spec.replicas: Invalid value: -1","code":422}`:      "spec.replicas: Invalid value: -1",
		`{"message":"statefulsets.apps \"web-\" is forbidden: exceeded quota: q","code":403}`:                 "exceeded quota: q",
	} {
		var s metav1.Status
		if err := json.Unmarshal([]byte(body), &s); err != nil {
			t.Fatal(err)
		}
		if got := Classify(&apierrors.StatusError{ErrStatus: s}).Message; got != want {
			t.Errorf("Message = %q, want %q", got, want)
		}
	}
}
