package manager

import (
	"github.com/tapp-io/tapp-apiserver/pkg/controller/tapp"
)

// registry lists every controller by the name --controllers uses.
var registry = map[string]initFunc{
	tapp.Name: func(c *Context) (Controller, error) {
		return tapp.NewController(c.KubeClient, c.Client,
			c.KubeInformers.Core().V1().Pods(), c.KubeInformers.Core().V1().Nodes(),
			c.Informers.TKEStackApps().V1().TApps(), c.Recorder)
	},
}
