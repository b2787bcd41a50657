package apiserver

import (
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// mutatingAdmissionAbsent reports, through the server's shared informers, whether the cluster has neither a
// MutatingWebhookConfiguration nor a MutatingAdmissionPolicy: the admission plugins that hand a webhook or a
// policy the object an update replaces. Until both informers have synced it reports false. Without informers
// (standalone mode, which has no admission chain) it always reports true.
func mutatingAdmissionAbsent(factory informers.SharedInformerFactory) func() bool {
	if factory == nil {
		return func() bool { return true }
	}
	admissionregistration := factory.Admissionregistration().V1()
	watched := []cache.SharedIndexInformer{
		admissionregistration.MutatingWebhookConfigurations().Informer(),
		admissionregistration.MutatingAdmissionPolicies().Informer(),
	}
	return func() bool {
		for _, informer := range watched {
			if !informer.HasSynced() || len(informer.GetStore().ListKeys()) > 0 {
				return false
			}
		}
		return true
	}
}
