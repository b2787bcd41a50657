// Package apiserver assembles the aggregated API server: the scheme, the REST storage of every resource
// and the API groups apps.tkestack.io/v1 and apps.openyurt.io/v1beta1 (NodePools, preferred) and v1alpha1.
package apiserver

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
	"github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack"
	"github.com/tapp-io/tapp-apiserver/pkg/registry/openyurt/nodepool"
	"github.com/tapp-io/tapp-apiserver/pkg/registry/openyurt/yurtappdaemon"
	"github.com/tapp-io/tapp-apiserver/pkg/registry/tkestack/tapp"
)

// Config is the configuration of the server.
type Config struct {
	GenericConfig *genericapiserver.RecommendedConfig
}

// CompletedConfig is a Config whose defaults have been filled in.
type CompletedConfig struct {
	generic genericapiserver.CompletedConfig
}

// Server is the running aggregated API server.
type Server struct {
	GenericAPIServer *genericapiserver.GenericAPIServer
}

// Complete fills in the defaults of the generic configuration.
func (c *Config) Complete() CompletedConfig {
	return CompletedConfig{generic: c.GenericConfig.Complete()}
}

// New builds the server and installs both API groups.
func (c CompletedConfig) New() (*Server, error) {
	generic, err := c.generic.New("tapp-apiserver", genericapiserver.NewEmptyDelegate())
	if err != nil {
		return nil, err
	}
	optsGetter := c.generic.RESTOptionsGetter

	tapps, err := tapp.NewStorage(Scheme, optsGetter)
	if err != nil {
		return nil, err
	}
	tkestackGroup := genericapiserver.NewDefaultAPIGroupInfo(tkestack.GroupName, Scheme, metav1.ParameterCodec, Codecs)
	tkestackGroup.NegotiatedSerializer = withoutProtobuf{tkestackGroup.NegotiatedSerializer}
	tkestackGroup.VersionedResourcesStorageMap["v1"] = map[string]rest.Storage{
		"tapps":        tapps.TApp,
		"tapps/status": tapps.Status,
		"tapps/scale":  tapps.Scale,
	}

	yads, err := yurtappdaemon.NewStorage(Scheme, optsGetter)
	if err != nil {
		return nil, err
	}
	pools, err := nodepool.NewStorage(Scheme, optsGetter)
	if err != nil {
		return nil, err
	}
	openyurtGroup := genericapiserver.NewDefaultAPIGroupInfo(openyurt.GroupName, Scheme, metav1.ParameterCodec, Codecs)
	openyurtGroup.NegotiatedSerializer = withoutProtobuf{openyurtGroup.NegotiatedSerializer}
	openyurtGroup.VersionedResourcesStorageMap["v1alpha1"] = map[string]rest.Storage{
		"yurtappdaemons":        yads.YurtAppDaemon,
		"yurtappdaemons/status": yads.Status,
		"nodepools":             pools.NodePool,
		"nodepools/status":      pools.Status,
	}
	// One store serves NodePools in both versions; requests are converted through the internal type and
	// stored as v1alpha1. YurtAppDaemon never had another version.
	openyurtGroup.VersionedResourcesStorageMap["v1beta1"] = map[string]rest.Storage{
		"nodepools":        pools.NodePool,
		"nodepools/status": pools.Status,
	}

	if err := generic.InstallAPIGroups(&tkestackGroup, &openyurtGroup); err != nil {
		return nil, err
	}
	return &Server{GenericAPIServer: generic}, nil
}
