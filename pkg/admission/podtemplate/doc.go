// Package podtemplate is the TAppPodTemplateDryRun admission plugin. It checks every workload template of a
// TApp, a YurtAppDaemon or a YurtAppSet against the real core API before the object is stored, so a template
// whose pods or workloads the core API would refuse is refused at `kubectl apply` instead of surfacing later
// as creation failures of the controller, retried forever. A YurtAppSet's template is checked as rendered,
// and again with each of its tweaks applied (yurtappset.go), when spec.workload changed.
//
// One mechanism serves both kinds: each template becomes the object its controller would create from it
// (a pod for a TApp template; a Deployment or StatefulSet for a YurtAppDaemon's deploymentTemplate or
// statefulSetTemplate), which is created with dryRun=All; the answer is judged as below, and the created
// object's field paths are moved onto the checked object. For a YurtAppDaemon the workload is rendered as the
// controller renders it for a pool (pkg/controller/yurtappdaemon/policy), with generateName "<name>-";
// spec.template.spec.containers[0].image of the Deployment becomes
// spec.workloadTemplate.deploymentTemplate.spec.template.spec.containers[0].image, its metadata.labels
// spec.workloadTemplate.deploymentTemplate.metadata.labels, its name metadata.name and its selector
// spec.selector (render builds it from the YurtAppDaemon's). It is checked on create, and on update when
// the workload template or the selector changed. The rest of this comment describes TApps; YurtAppDaemons
// follow the same rules.
//
// On create, and on update when a template changed, the plugin builds the pod the TApp controller would
// create from each template concerned (spec.template and every spec.templatePool entry; the same labels,
// annotations, readiness gate, hostname and claim volumes, with generateName "<tapp>-" so no existing pod
// collides) and creates it with dryRun=All in the TApp's namespace. The core API then runs its defaulting,
// validation and admission (PodSecurity, LimitRanger, webhooks, admission policies) without storing anything.
// On update only new or changed templates are checked, or all of them when serviceName or
// volumeClaimTemplates changed (they shape every pod): an unchanged template is never re-judged, so a policy
// tightened later does not block unrelated edits. The status and scale subresources are not checked.
//
// What the dry run answers decides the TApp write:
//
//   - 422 Invalid: refused with 422 Invalid. Each cause keeps the core API's message and type, and its field
//     is moved onto the TApp: spec.containers[0].image of spec.template becomes
//     spec.template.spec.containers[0].image, of pool entry "big" spec.templatePool[big].spec.containers[0].image;
//     the pod's name and hostname map to metadata.name, its subdomain to spec.serviceName and a claim volume to
//     its spec.volumeClaimTemplates entry.
//   - 403 Forbidden from admission (PodSecurity, LimitRange, a webhook or policy denial) and 400 Bad Request
//     (a webhook denial): these are real, lasting reasons why no pod of the template would be created, so the
//     TApp is refused too, with a 422 whose Forbidden (or Invalid) cause on the template path carries the core
//     API's message. A 422 keeps every template's problem in one answer with a field path, like the TApp's own
//     validation.
//   - ResourceQuota refusals that depend on the namespace's current usage ("exceeded quota", "status unknown
//     for quota", "insufficient quota") are ignored: quota limits running pods, not templates, and the
//     controller creates the pods once there is room. "failed quota: ... must specify ..." is a template
//     defect (it lacks requests or limits a quota demands) and refuses the TApp.
//   - A refusal because an object the pod refers to does not exist yet (its ServiceAccount, PriorityClass or
//     RuntimeClass) admits the TApp with a warning: `kubectl apply -f dir/` must not depend on file order, and
//     the pods are created once the object exists. The default ServiceAccount, which every new namespace lacks
//     for a moment, does not even warn. (The core API stops at such a refusal, so that template's other checks
//     are skipped.)
//   - A missing or terminating namespace is ignored: the namespace lifecycle plugin of this server owns that.
//   - Anything else (the core API unreachable, timeouts, 429, 5xx, a failing webhook, and a 403 refusing this
//     server's own identity the pods create verb) fails open for that template: the server logs an error and
//     the response carries one warning naming the templates that were not checked; the refusals of the
//     templates that were checked still refuse the TApp, whatever their order. Failing closed would make every
//     TApp create and template edit depend on the core API and on every pod webhook being up, although the
//     TApp controller reports a template problem anyway (events and status) when it creates the pods; this
//     check is an early answer for the user, not a safety guarantee.
//
// The templates of one write are checked concurrently (at most 8 dry runs in flight), and templates whose
// dry-run objects are identical are sent once (each template is hashed once, for its pod and for the pod its
// cache key is made of; a pod is built only when it is sent or its answer is judged). A dry run asks for the
// created object's metadata alone (PartialObjectMetadata) and does not decode it: only whether the core API
// would create it counts, and a refusal, a Status, comes back whole. Refusals are listed in template order whatever order the
// answers came in. A clean verdict (the core API created the object, stopping at no refusal) is remembered
// for 30 s per namespace and dry-run object, with the object's name and uid replaced by placeholders of the
// same shape while no admission policy exists (built-in admission judges names by their length and
// characters only; a policy may read them). Nothing is remembered until informers of everything the core
// API's admission reads have synced: LimitRanges, ResourceQuotas (their spec), Namespaces, ServiceAccounts,
// PriorityClasses, RuntimeClasses, webhook configurations and validating and mutating admission policies
// and bindings; any change to one of them forgets every remembered verdict, so the next write is checked
// again, and nothing is remembered for 3 s after it (kube-apiserver's admission may see the change after
// this server does). While a webhook configuration may match the dry-run creates, or an admission policy takes
// parameters, nothing is remembered: what decides is then out of sight of the informers. Refusals and every
// other answer are never remembered.
//
// Package refusal tells these answers apart by the status reason, causes and details of the core API's answer
// (and by the message only where the core API says nothing else). pod.go builds the dry-run pod with
// pkg/tapppod, as the controller builds its pods, and maps the pod's field paths back onto the TApp.
//
// The plugin needs the core API, so it only runs in cluster mode; in standalone mode there is no admission
// chain at all. It sends the dry runs through a client of its own (NewInitializer), or else through the
// server's shared external clientset.
package podtemplate
