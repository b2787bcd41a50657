// Package nodepool is the NodePoolInUse admission plugin: a NodePool cannot be deleted (alone or through a
// delete-collection) while nodes still belong to it, that is while a node is labelled
// apps.openyurt.io/desired-nodepool=<pool> (the user's request to join) or apps.openyurt.io/nodepool=<pool>
// (the membership the NodePool controller maintains). Deleting such a pool would leave nodes pointing at a pool
// that no longer exists, with the pool's labels, annotations and taints still applied to them.
//
// The refusal is 403 Forbidden, as for every admission refusal of Kubernetes (NamespaceLifecycle refusing to
// delete kube-system, for instance): kubectl prints `Error from server (Forbidden): ... is forbidden: nodepool
// "pool-a" still has 2 nodes (node-1, node-2); remove the apps.openyurt.io/desired-nodepool label from them
// first`. 409 Conflict would say "retry with fresh data", which client-go's conflict retries and controllers
// do automatically and pointlessly: nothing changes until someone relabels the nodes.
//
// Nodes are read from the shared informer of the core API, so the plugin only runs in cluster mode. Until that
// informer has synced (at most 10 seconds are waited per request) deletions are refused: answering from an
// empty cache would let a pool with nodes go.
package nodepool

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apiserver/pkg/admission"
	genericadmissioninitializer "k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/client-go/informers"
	corelisters "k8s.io/client-go/listers/core/v1"

	"github.com/tapp-io/tapp-apiserver/pkg/apis/openyurt"
)

// PluginName is the name of the admission plugin.
const PluginName = "NodePoolInUse"

// maxListedNodes bounds how many node names a refusal lists.
const maxListedNodes = 10

var nodePoolsResource = openyurt.Resource("nodepools")

// Register adds the plugin.
func Register(plugins *admission.Plugins) {
	plugins.Register(PluginName, func(io.Reader) (admission.Interface, error) {
		return New(), nil
	})
}

// Plugin refuses to delete NodePools that still have nodes.
type Plugin struct {
	*admission.Handler
	nodes corelisters.NodeLister
}

var (
	_ admission.ValidationInterface                                = &Plugin{}
	_ admission.InitializationValidator                            = &Plugin{}
	_ genericadmissioninitializer.WantsExternalKubeInformerFactory = &Plugin{}
)

// New returns the plugin; it needs an informer factory (SetExternalKubeInformerFactory) before use.
func New() *Plugin {
	return &Plugin{Handler: admission.NewHandler(admission.Delete)}
}

// SetExternalKubeInformerFactory implements genericadmissioninitializer.WantsExternalKubeInformerFactory.
func (p *Plugin) SetExternalKubeInformerFactory(f informers.SharedInformerFactory) {
	nodes := f.Core().V1().Nodes()
	p.nodes = nodes.Lister()
	p.SetReadyFunc(nodes.Informer().HasSynced)
}

// ValidateInitialization implements admission.InitializationValidator.
func (p *Plugin) ValidateInitialization() error {
	if p.nodes == nil {
		return fmt.Errorf("%s needs a node lister", PluginName)
	}
	return nil
}

// Validate implements admission.ValidationInterface.
func (p *Plugin) Validate(_ context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetResource().GroupResource() != nodePoolsResource || a.GetSubresource() != "" {
		return nil
	}
	// A delete-collection asks once per pool, with the pool as the old object and no name.
	name := a.GetName()
	if name == "" && a.GetOldObject() != nil {
		if accessor, err := meta.Accessor(a.GetOldObject()); err == nil {
			name = accessor.GetName()
		}
	}
	if name == "" {
		return nil
	}
	if !p.WaitForReady() {
		return apierrors.NewForbidden(nodePoolsResource, name, fmt.Errorf("not yet ready to handle request: the node cache has not synced"))
	}
	members, err := p.members(name)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	if len(members) == 0 {
		return nil
	}
	return apierrors.NewForbidden(nodePoolsResource, name, fmt.Errorf("%s", refusal(name, members)))
}

// member is a node of the pool and which of the two labels tie it to it.
type member struct {
	name    string
	desired bool
	current bool
}

// members returns the nodes labelled into the pool, sorted by name.
func (p *Plugin) members(pool string) ([]member, error) {
	byName := map[string]*member{}
	for _, key := range []string{openyurt.DesiredNodePoolLabel, openyurt.NodePoolLabel} {
		nodes, err := p.nodes.List(labels.SelectorFromSet(labels.Set{key: pool}))
		if err != nil {
			return nil, err
		}
		for _, node := range nodes {
			m := byName[node.Name]
			if m == nil {
				m = &member{name: node.Name}
				byName[node.Name] = m
			}
			m.desired = m.desired || hasLabel(node, openyurt.DesiredNodePoolLabel, pool)
			m.current = m.current || hasLabel(node, openyurt.NodePoolLabel, pool)
		}
	}
	out := make([]member, 0, len(byName))
	for _, m := range byName {
		out = append(out, *m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

func hasLabel(node *corev1.Node, key, value string) bool {
	v, ok := node.Labels[key]
	return ok && v == value
}

// refusal is the message of a refused deletion. It names the label to remove: the desired-nodepool label,
// after which the NodePool controller removes apps.openyurt.io/nodepool itself; nodes that only carry
// apps.openyurt.io/nodepool (set by hand, or left behind while no controller runs) need that one removed.
func refusal(pool string, members []member) string {
	names := make([]string, 0, maxListedNodes)
	stale := false
	for i, m := range members {
		if i < maxListedNodes {
			names = append(names, m.name)
		}
		if !m.desired {
			stale = true
		}
	}
	list := strings.Join(names, ", ")
	if extra := len(members) - len(names); extra > 0 {
		list += fmt.Sprintf(" and %d more", extra)
	}
	noun := "nodes"
	if len(members) == 1 {
		noun = "node"
	}
	var remove string
	switch {
	case !stale:
		remove = "the " + openyurt.DesiredNodePoolLabel + " label"
	case hasDesired(members):
		remove = "the " + openyurt.DesiredNodePoolLabel + " and " + openyurt.NodePoolLabel + " labels"
	default:
		remove = "the " + openyurt.NodePoolLabel + " label"
	}
	pronoun := "them"
	if len(members) == 1 {
		pronoun = "it"
	}
	return fmt.Sprintf("nodepool %q still has %d %s (%s); remove %s from %s first", pool, len(members), noun, list, remove, pronoun)
}

func hasDesired(members []member) bool {
	for _, m := range members {
		if m.desired {
			return true
		}
	}
	return false
}
