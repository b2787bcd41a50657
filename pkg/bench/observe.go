package bench

import (
	"context"
	"fmt"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// observeInformer hands every add, update and delete of inf to observe (deleted true for a delete, with the
// last known object for a tombstone), starts factory and waits until inf has synced; what names the watch in
// the error.
func observeInformer(ctx context.Context, factory informers.SharedInformerFactory, inf cache.SharedIndexInformer, what string, observe func(obj interface{}, deleted bool)) error {
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj interface{}) { observe(obj, false) },
		UpdateFunc: func(_, obj interface{}) { observe(obj, false) },
		DeleteFunc: func(obj interface{}) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			observe(obj, true)
		},
	})
	if err != nil {
		return err
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return fmt.Errorf("%s did not sync", what)
	}
	return nil
}
