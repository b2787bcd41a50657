package manager

import (
	"k8s.io/utils/clock"

	"github.com/tapp-io/tapp-apiserver/pkg/controller/nodepool"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/tapp"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/yurtappdaemon"
	"github.com/tapp-io/tapp-apiserver/pkg/controller/yurtappset"
)

// registry lists every controller by the name --controllers uses.
var registry = map[string]initFunc{
	tapp.Name: func(c *Context) (Controller, error) {
		return tapp.NewController(c.KubeClient, c.PodStatusClient, c.Client,
			c.KubeInformers.Core().V1().Pods(), c.KubeInformers.Core().V1().PersistentVolumeClaims(),
			c.KubeInformers.Storage().V1().StorageClasses(), c.KubeInformers.Core().V1().Nodes(), c.Informers.TKEStackApps().V1().TApps(),
			c.KubeInformers.Apps().V1().ControllerRevisions(), c.Recorder, clock.RealClock{})
	},
	yurtappdaemon.Name: func(c *Context) (Controller, error) {
		return yurtappdaemon.NewController(c.KubeClient, c.Client,
			c.Informers.OpenYurtApps().V1alpha1().YurtAppDaemons(), c.Informers.OpenYurtApps().V1alpha1().NodePools(),
			c.KubeInformers.Apps().V1().Deployments(), c.KubeInformers.Apps().V1().StatefulSets(),
			c.KubeInformers.Apps().V1().ControllerRevisions(), c.Recorder, clock.RealClock{})
	},
	yurtappset.Name: func(c *Context) (Controller, error) {
		return yurtappset.NewController(c.KubeClient, c.Client,
			c.Informers.OpenYurtApps().V1beta1().YurtAppSets(), c.Informers.OpenYurtApps().V1alpha1().NodePools(),
			c.KubeInformers.Apps().V1().Deployments(), c.KubeInformers.Apps().V1().StatefulSets(),
			c.KubeInformers.Apps().V1().ControllerRevisions(), c.Recorder, clock.RealClock{})
	},
	nodepool.Name: func(c *Context) (Controller, error) {
		return nodepool.NewController(c.KubeClient, c.Client,
			c.Informers.OpenYurtApps().V1beta2().NodePools(), c.KubeInformers.Core().V1().Nodes(), c.Recorder, clock.RealClock{})
	},
}
