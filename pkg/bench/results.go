package bench

import "fmt"

// Results is the document written to _output/bench/results.json. docs/benchmarks.md describes every field.
type Results struct {
	// SchemaVersion changes when a field changes meaning.
	SchemaVersion int `json:"schemaVersion"`
	// Command is what was run; Args are the flags the benchmark saw.
	Command string   `json:"command"`
	Args    []string `json:"args"`
	// StartedAt is RFC 3339; DurationSeconds covers the whole run, cluster starts included.
	StartedAt       string  `json:"startedAt"`
	DurationSeconds float64 `json:"durationSeconds"`
	Machine         Machine `json:"machine"`
	// Scale multiplies every count (1 = the counts of the issue).
	Scale    float64  `json:"scale"`
	Settings Settings `json:"settings"`
	// Sections that ran; absent sections are null.
	APIPath *APIPathResult `json:"apiPath,omitempty"`
	// Admission is section 1b: creates through tapp-apiserver's shipped admission chain, which APIPath
	// runs without (TAppPodTemplateDryRun disabled).
	Admission     *APIPathResult `json:"admission,omitempty"`
	Memory        *MemoryResult  `json:"memory,omitempty"`
	ScaleUp       []WorkloadRun  `json:"scaleUp,omitempty"`
	ScaleDown     []WorkloadRun  `json:"scaleDown,omitempty"`
	RollingUpdate []RolloutRun   `json:"rollingUpdate,omitempty"`
	// Resize is section 4b: a change of the template's container resources, TApp in place against a
	// StatefulSet's recreation.
	Resize []ResizeRun `json:"resize,omitempty"`
	// ClaimExpansion is section 4d: every instance's claim raised from 1Gi to 2Gi, by the TApp controller
	// against a StatefulSet's user patching each claim.
	ClaimExpansion []ClaimExpansionRun `json:"claimExpansion,omitempty"`
	FanOut         *FanOutResult       `json:"fanOut,omitempty"`
	YASFanOut      *YASFanOutResult    `json:"yurtAppSetFanOut,omitempty"`
	// RolloutModelled is the rollout under a modelled node cost; the figures above are the primary ones.
	RolloutModelled *ModelledRollout `json:"rolloutModelled,omitempty"`
	// Growth is section 6: how the figures of one TApp of many instances and of many TApps in one server
	// grow from the small size to the large one (1,000 and 10,000 at scale 1).
	Growth *GrowthResult `json:"growth,omitempty"`
	// Targets are the targets with the measured value and whether each is met.
	Targets []Target `json:"targets"`
	// Errors are problems that did not stop the run (a section that failed, a wait that timed out).
	Errors []string `json:"errors,omitempty"`
}

// Machine describes where the run happened.
type Machine struct {
	CPUs        int    `json:"cpus"`
	CPUModel    string `json:"cpuModel"`
	MemoryBytes int64  `json:"memoryBytes"`
	Kernel      string `json:"kernel"`
	GoVersion   string `json:"goVersion"`
	// LoadAverage1m when the run started (other work on the machine skews every figure).
	LoadAverage1m float64 `json:"loadAverage1m"`
	// LoadAverageMax is the largest 1-minute load average sampled every 5 s during the run.
	LoadAverageMax float64 `json:"loadAverage1mMax"`
}

// Settings are the knobs every section shares.
type Settings struct {
	ClientQPS   float32 `json:"clientQPS"`
	ClientBurst int     `json:"clientBurst"`
	// Budgets are the controllers' client rate limits sections 3 and 4 ran at, one workloads cluster each
	// (the first also runs 4b, 4d, 5 and the modelled rollout, and its flags are those of the other clusters).
	// The budget's flags are not repeated in ServerArgs and ControllerManagerArgs.
	Budgets           []Budget `json:"budgets"`
	ControllerWorkers int      `json:"controllerWorkers"`
	// Rounds is how many times sections 3 and 4 ran every kind (--rounds).
	Rounds     int      `json:"rounds"`
	ServerArgs []string `json:"serverArgs"`
	// APIServerArgs are the extra flags of tapp-apiserver on the API/memory cluster.
	APIServerArgs         []string `json:"apiServerArgs"`
	KubeAPIServerArgs     []string `json:"kubeAPIServerArgs"`
	ControllerManagerArgs []string `json:"controllerManagerArgs"`
	SchedulerArgs         []string `json:"schedulerArgs"`
	Nodes                 int      `json:"nodes"`
}

// APIPathResult is section 1.
type APIPathResult struct {
	// ObjectBytes is the JSON size of each shape as created.
	ObjectBytes map[string]int `json:"objectBytes"`
	// CRDSchemaBytes is the size of the generated openAPIV3Schema; PreservedUnknownFields lists where
	// x-kubernetes-preserve-unknown-fields replaced a structural schema.
	CRDSchemaBytes         int        `json:"crdSchemaBytes"`
	PreservedUnknownFields []string   `json:"preservedUnknownFields"`
	IntOrStringTypes       []string   `json:"intOrStringTypes"`
	AtomicLists            []string   `json:"atomicLists"`
	Cells                  []*APICell `json:"cells"`
	// StoredBytes is, per shape, the size of the objects of the list cell of the direct path as
	// tapp-apiserver's etcd holds them, against the same objects in JSON.
	StoredBytes []*StoredBytes `json:"storedBytes,omitempty"`
}

// StoredBytes is the size per object of one shape in tapp-apiserver's etcd.
type StoredBytes struct {
	Shape   string `json:"shape"`
	Objects int    `json:"objects"`
	// StoredBytesPerObject is the mean size of the values read from etcd, in the media type the server
	// stores (--storage-media-type, protobuf by default).
	StoredBytesPerObject float64 `json:"storedBytesPerObject"`
	// JSONBytesPerObject is the mean size of the same objects encoded by the JSON storage codec, what
	// --storage-media-type=application/json stores.
	JSONBytesPerObject float64 `json:"jsonBytesPerObject"`
	// ProtobufToJSON is StoredBytesPerObject / JSONBytesPerObject.
	ProtobufToJSON float64 `json:"protobufToJSON"`
}

// APICell is one path × shape × verb × concurrency.
type APICell struct {
	Path        string `json:"path"`
	Shape       string `json:"shape"`
	Verb        string `json:"verb"`
	Concurrency int    `json:"concurrency"`
	Ops         int    `json:"ops"`
	Errors      int    `json:"errors"`
	// FirstError is the first error seen, if any.
	FirstError   string  `json:"firstError,omitempty"`
	Seconds      float64 `json:"seconds"`
	OpsPerSecond float64 `json:"opsPerSecond"`
	// LatencyMs is the client-observed latency of each operation; for watch, the time from just before
	// the update was sent to the event's arrival.
	LatencyMs Latency `json:"latencyMs"`
	// WatchReopened (watch cells) is how often the server ended the benchmark's watch during the cell; it was
	// re-opened at the last resource version seen each time, so its events arrived late, not never.
	WatchReopened int `json:"watchReopened,omitempty"`
	// TerminatedWatchers (watch cells) is the growth of apiserver_terminated_watchers_total for TApps on the
	// server whose watch cache serves the path, during the update cell and the wait for its events: watches of
	// every client (kube-controller-manager's too) closed because they did not keep up with the events.
	TerminatedWatchers int `json:"terminatedWatchers,omitempty"`
	// ObjectsPerList is the number of objects each list returned.
	ObjectsPerList int `json:"objectsPerList,omitempty"`
	// Ratios to the CRD cell of the same shape, verb and concurrency (throughput: higher is better;
	// latency: lower is better).
	ThroughputRatioToCRD float64 `json:"throughputRatioToCRD,omitempty"`
	P50RatioToCRD        float64 `json:"p50RatioToCRD,omitempty"`
	P99RatioToCRD        float64 `json:"p99RatioToCRD,omitempty"`
	// Ratios of a protobuf path's cell to the JSON cell of the same path (aggregated or direct), shape,
	// verb and concurrency.
	ThroughputRatioToJSON float64 `json:"throughputRatioToJSON,omitempty"`
	P50RatioToJSON        float64 `json:"p50RatioToJSON,omitempty"`
}

// MemoryResult is section 2.
type MemoryResult struct {
	Objects int    `json:"objects"`
	Shape   string `json:"shape"`
	// CreateSeconds is how long creating the objects took on each path.
	TAppCreateSeconds float64 `json:"tappCreateSeconds"`
	CRDCreateSeconds  float64 `json:"crdCreateSeconds"`
	// TAppAPIServer: before and after creating the TApps (its embedded etcd is in the same process).
	TAppAPIServer ProcessMemory `json:"tappAPIServer"`
	// KubeAPIServer and Etcd: before and after creating the CRD objects.
	KubeAPIServer ProcessMemory `json:"kubeAPIServer"`
	Etcd          ProcessMemory `json:"etcd"`
	// KubeAPIServerDuringTApps is kube-apiserver's growth while the TApps were created (direct path).
	KubeAPIServerDuringTAppsBytes int64 `json:"kubeAPIServerDuringTAppsBytes"`
}

// ProcessMemory is one process before and after, from /proc/<pid>/status and the Go heap of /metrics
// after a forced garbage collection.
type ProcessMemory struct {
	PID             int   `json:"pid"`
	BeforeRSSBytes  int64 `json:"beforeRSSBytes"`
	AfterRSSBytes   int64 `json:"afterRSSBytes"`
	GrowthRSSBytes  int64 `json:"growthRSSBytes"`
	BeforeAnonBytes int64 `json:"beforeRssAnonBytes"`
	AfterAnonBytes  int64 `json:"afterRssAnonBytes"`
	BeforeFileBytes int64 `json:"beforeRssFileBytes"`
	AfterFileBytes  int64 `json:"afterRssFileBytes"`
	BeforeHeapInuse int64 `json:"beforeHeapInuseBytes,omitempty"`
	AfterHeapInuse  int64 `json:"afterHeapInuseBytes,omitempty"`
	GrowthHeapInuse int64 `json:"growthHeapInuseBytes,omitempty"`
	// BeforeHeapLive and AfterHeapLive are the live objects' bytes (go_memstats_heap_alloc_bytes after the
	// collection); the heap in use less them is free room inside the spans that hold objects.
	BeforeHeapLive    int64 `json:"beforeHeapLiveBytes,omitempty"`
	AfterHeapLive     int64 `json:"afterHeapLiveBytes,omitempty"`
	HeapMeasurementOK bool  `json:"heapMeasured"`
}

// WorkloadRun is one scale-up or scale-down of one kind.
type WorkloadRun struct {
	Kind     string `json:"kind"`
	Replicas int    `json:"replicas"`
	// Budget is the controllers' (and the bare client's) client rate limit of the run.
	Budget Budget `json:"budget"`
	// Seconds until every pod is Ready (scale-up) or gone (scale-down).
	Seconds float64 `json:"seconds"`
	// AllCreatedSeconds: until kube-apiserver completed the last pod create (scale-up; its audit log).
	AllCreatedSeconds float64 `json:"allCreatedSeconds,omitempty"`
	// AllSeenSeconds: until the benchmark's pod watch had shown every pod (scale-up).
	AllSeenSeconds float64 `json:"allSeenSeconds,omitempty"`
	// TAppStatusBytes is the JSON size of the TApp's status once it counts every instance ready (TApp only).
	TAppStatusBytes int     `json:"tappStatusBytes,omitempty"`
	PodsPerSecond   float64 `json:"podsPerSecond"`
	// PodLatencyMs: per pod, from the start to its first Ready (scale-up) or its disappearance (scale-down).
	PodLatencyMs Latency `json:"podLatencyMs"`
	// CreatedLatencyMs: per pod, from the start to when the pod watch first showed it (scale-up only).
	CreatedLatencyMs Latency `json:"createdLatencyMs,omitempty"`
	// RatioToStatefulSet and RatioToLimit compare times (lower is faster) and throughputs.
	TimeRatioToStatefulSet      float64 `json:"timeRatioToStatefulSet,omitempty"`
	ThroughputRatioToLimit      float64 `json:"throughputRatioToLimit,omitempty"`
	Completed                   bool    `json:"completed"`
	ServerCPUSeconds            float64 `json:"tappAPIServerCPUSeconds"`
	KubeAPIServerCPUSeconds     float64 `json:"kubeAPIServerCPUSeconds"`
	ControllerManagerCPUSeconds float64 `json:"controllerManagerCPUSeconds"`
	SchedulerCPUSeconds         float64 `json:"schedulerCPUSeconds"`
	EtcdCPUSeconds              float64 `json:"etcdCPUSeconds"`
	BenchmarkProcessCPUSeconds  float64 `json:"benchmarkProcessCPUSeconds"`
	// KubeAPIWrites and TAppAPIWrites count the write requests each server received during the run, by
	// "VERB resource[/subresource] [(error code)]" (apiserver_request_total).
	KubeAPIWrites map[string]int `json:"kubeAPIWrites,omitempty"`
	TAppAPIWrites map[string]int `json:"tappAPIWrites,omitempty"`
	// RoundSeconds is every round's time, in the order run, when the kind ran more than one round (--rounds):
	// the run recorded is then the round of the median time, with AllCreatedSeconds, AllSeenSeconds and
	// PodsPerSecond the medians over the rounds.
	RoundSeconds []float64 `json:"roundSeconds,omitempty"`
}

// Budget is a client rate limit of the controllers: tapp-apiserver's --controller-kube-api-qps/-burst,
// kube-controller-manager's --kube-api-qps/-burst and the bare client's limit.
type Budget struct {
	QPS   float32 `json:"qps"`
	Burst int     `json:"burst"`
}

// String is "qps/burst", as --budgets takes it.
func (b Budget) String() string { return fmt.Sprintf("%g/%d", b.QPS, b.Burst) }

// RollRun is what every roll of N instances records (sections 4, 4b and the modelled rollout): how long it
// took, what it left behind and what it cost the servers.
type RollRun struct {
	Kind           string `json:"kind"`
	Replicas       int    `json:"replicas"`
	MaxUnavailable string `json:"maxUnavailable"`
	// Seconds: from the template update until every pod is Ready on the new template.
	Seconds float64 `json:"seconds"`
	// PodsRecreated counts live pods at the end whose UID was not there at the start.
	PodsRecreated int `json:"podsRecreated"`
	// MaxUnavailableObserved is the largest replicas − ready seen by the pod watch.
	MaxUnavailableObserved int `json:"maxUnavailableObserved"`
	// InstanceLatencyMs: per instance (pod name), from the start until it is Ready on the new template.
	InstanceLatencyMs           Latency `json:"instanceLatencyMs"`
	SpeedupVsStatefulSet        float64 `json:"speedupVsStatefulSet,omitempty"`
	Completed                   bool    `json:"completed"`
	ServerCPUSeconds            float64 `json:"tappAPIServerCPUSeconds"`
	KubeAPIServerCPUSeconds     float64 `json:"kubeAPIServerCPUSeconds"`
	ControllerManagerCPUSeconds float64 `json:"controllerManagerCPUSeconds"`
	// KubeAPIServerCPUMsPerInstance and KubeAPIWritesPerInstance divide kube-apiserver's CPU time and its
	// write requests (as counted in the writes table: events, leases and endpoints left out) by Replicas.
	KubeAPIServerCPUMsPerInstance float64 `json:"kubeAPIServerCPUMsPerInstance"`
	KubeAPIWritesPerInstance      float64 `json:"kubeAPIWritesPerInstance"`
	// KubeAPIWrites and TAppAPIWrites count the write requests each server received during the roll.
	KubeAPIWrites map[string]int `json:"kubeAPIWrites,omitempty"`
	TAppAPIWrites map[string]int `json:"tappAPIWrites,omitempty"`
	// RoundSeconds and RoundCPUMsPerInstance are every round's time and kube-apiserver CPU per instance, in the
	// order run, when the kind ran more than one round (--rounds, section 4): the roll recorded is then the
	// round of the median time, with KubeAPIServerCPUMsPerInstance and KubeAPIWritesPerInstance the medians.
	RoundSeconds          []float64 `json:"roundSeconds,omitempty"`
	RoundCPUMsPerInstance []float64 `json:"roundCPUMsPerInstance,omitempty"`
}

// RolloutRun is one rolling image update of one kind (section 4 and the modelled rollout).
type RolloutRun struct {
	RollRun
	// Budget is the controllers' client rate limit of the cluster the roll ran on.
	Budget Budget `json:"budget"`
}

// ResizeRun is one change of the template's container resources of one kind (section 4b).
type ResizeRun struct {
	RollRun
	// ResourcesBefore and ResourcesAfter are the container's requests and limits before and after.
	ResourcesBefore string `json:"resourcesBefore"`
	ResourcesAfter  string `json:"resourcesAfter"`
	// PodsKept counts live pods at the end whose UID was there at the start, ContainerRestarts the growth of
	// their restartCount.
	PodsKept          int `json:"podsKept"`
	ContainerRestarts int `json:"containerRestarts"`
}

// ClaimExpansionRun is the expansion of every instance's claim of one kind (section 4d). Of RollRun,
// Seconds runs from the first request of the expansion until every claim is bound at SizeAfter with no
// resize condition left (and, for the TApp, its status.volumeClaims says every claim compatible and
// ready); InstanceLatencyMs is per claim, until it was first seen so; MaxUnavailableObserved is the
// largest replicas − Ready pods seen meanwhile; the writes are kube-apiserver's during that time, the
// user's patches included.
type ClaimExpansionRun struct {
	RollRun
	// StorageClass of the claims; SizeBefore and SizeAfter their storage request before and after.
	StorageClass string `json:"storageClass"`
	SizeBefore   string `json:"sizeBefore"`
	SizeAfter    string `json:"sizeAfter"`
	// How says what raised the claims: the TApp controller, or the user's client loop.
	How string `json:"how"`
	// ClientBudget is the client rate limit of the user's loop (the first budget).
	ClientBudget *Budget `json:"clientBudget,omitempty"`
	// TemplateUpdate is kube-apiserver's answer to raising the workload's claim template: "accepted" or the
	// refusal as the client reports it, verbatim, with its HTTP code in TemplateUpdateCode.
	TemplateUpdate     string `json:"templateUpdate"`
	TemplateUpdateCode int32  `json:"templateUpdateCode,omitempty"`
	// TemplateStorageAfter is the claim template's storage request after the expansion, and
	// NewInstanceClaimStorage the capacity of the claim of an instance added afterwards (N→N+1).
	TemplateStorageAfter    string `json:"templateStorageAfter"`
	NewInstanceClaimStorage string `json:"newInstanceClaimStorage,omitempty"`
	// ClaimsExpanded counts the claims seen at SizeAfter; MaxClaimsResizing is the most claims seen
	// resizing at once (request above capacity, or a resize step reported).
	ClaimsExpanded    int `json:"claimsExpanded"`
	MaxClaimsResizing int `json:"maxClaimsResizing"`
	// PodsKept counts live pods at the end whose UID was there at the start, ContainerRestarts the growth of
	// their restartCount (PodsRecreated: the others).
	PodsKept          int `json:"podsKept"`
	ContainerRestarts int `json:"containerRestarts"`
	// ControllerActions are, for the TApp, its controller's API actions during the expansion, by "action"
	// and, for results other than success, "action (result)" (tapp_controller_actions_total).
	ControllerActions map[string]int `json:"controllerActions,omitempty"`
	// ClaimStatus is, for the TApp, status.volumeClaims and the VolumeClaimsUpdated condition at the end.
	ClaimStatus string `json:"claimStatus,omitempty"`
	// TimeRatioToStatefulSet and WritesRatioToStatefulSet are Seconds and KubeAPIWritesPerInstance over
	// the StatefulSet run's.
	TimeRatioToStatefulSet   float64 `json:"timeRatioToStatefulSet,omitempty"`
	WritesRatioToStatefulSet float64 `json:"writesRatioToStatefulSet,omitempty"`
}

// ModelledRollout is the rollout-modelled section: scale-up and rolling image update of TApp and
// StatefulSet on a cluster whose pod simulator models what a node spends on a pod.
type ModelledRollout struct {
	// NodeCost is the model's parameters, in milliseconds.
	NodeCost      NodeCostMs    `json:"nodeCost"`
	ScaleUp       []WorkloadRun `json:"scaleUp,omitempty"`
	RollingUpdate []RolloutRun  `json:"rollingUpdate,omitempty"`
}

// NodeCostMs is localcluster.NodeCostModel in milliseconds.
type NodeCostMs struct {
	SandboxCreate  float64 `json:"sandboxCreateMs"`
	ImagePull      float64 `json:"imagePullMs"`
	ContainerStart float64 `json:"containerStartMs"`
	VolumeAttach   float64 `json:"volumeAttachMs"`
}

// FanOutResult is section 5.
type FanOutResult struct {
	NodePools int `json:"nodePools"`
	// Registered says whether the YurtAppDaemon controller was part of tapp-apiserver's --controllers.
	Registered bool        `json:"registered"`
	Runs       []FanOutRun `json:"runs"`
	// Seconds per variant over repeats.
	YADCreated   Spread `json:"yadCreatedSeconds"`
	PoolsCreated Spread `json:"poolsCreatedSeconds"`
}

// FanOutRun is one repeat of one variant: "yad-created" (the pools exist, the YurtAppDaemon is created)
// or "pools-created" (the YurtAppDaemon exists, the pools are created at concurrency 16).
type FanOutRun struct {
	Variant string `json:"variant"`
	// WorkloadsSeconds: until every Deployment exists; ProvisionedSeconds: until the status says
	// WorkLoadProvisioned=True over every pool (the figure of the target).
	WorkloadsSeconds   float64 `json:"workloadsSeconds"`
	ProvisionedSeconds float64 `json:"provisionedSeconds"`
	Completed          bool    `json:"completed"`
	// WritesPerPool: the controller's successful API actions over the run (<controller>_controller_actions_total
	// of tapp-apiserver: workload, revision and status writes), divided by the pools; 0 when not scraped.
	WritesPerPool float64 `json:"writesPerPool,omitempty"`
}

// YASFanOutResult is section 5's YurtAppSet part: variant "yas-created" (the pools exist, a YurtAppSet with
// tweaks selecting them is created); ProvisionedSeconds is until the status counts every workload with
// PoolFound and AppDispatched True.
type YASFanOutResult struct {
	NodePools int `json:"nodePools"`
	// Registered says whether the YurtAppSet controller was part of tapp-apiserver's --controllers.
	Registered bool        `json:"registered"`
	Runs       []FanOutRun `json:"runs"`
	Created    Spread      `json:"createdSeconds"`
}

// Target is one target of the issue.
type Target struct {
	Name     string  `json:"name"`
	Goal     string  `json:"goal"`
	Value    float64 `json:"value"`
	Unit     string  `json:"unit"`
	Met      bool    `json:"met"`
	Measured bool    `json:"measured"`
}

// GrowthResult is section 6.
type GrowthResult struct {
	// Instances are one TApp scaled up and rolled in place at each size.
	Instances []GrowthInstances `json:"instances"`
	// TApps are the TApps of no replicas one server holds at each size.
	TApps []GrowthTApps `json:"tapps"`
	// Figures are the figures measured at both sizes with their growth exponents.
	Figures []GrowthFigure `json:"figures"`
}

// GrowthInstances is one TApp of Instances instances: 0→Instances until Ready, then an in-place rolling
// image update, then back to 0 (section 3's run at this size, at the first budget).
type GrowthInstances struct {
	Instances        int     `json:"instances"`
	ScaleUpSeconds   float64 `json:"scaleUpSeconds"`
	ScaleUpCompleted bool    `json:"scaleUpCompleted"`
	RollSeconds      float64 `json:"rollSeconds"`
	RollCompleted    bool    `json:"rollCompleted"`
	// StatusBytes is the JSON size of the TApp's status with every instance Ready.
	StatusBytes int `json:"statusBytes"`
	// The write requests kube-apiserver and tapp-apiserver received during the scale-up and the rolling
	// update (as section 3 counts them: events, leases and endpoints left out of kube-apiserver's).
	ScaleUpKubeAPIWrites int `json:"scaleUpKubeAPIWrites"`
	ScaleUpTAppAPIWrites int `json:"scaleUpTAppAPIWrites"`
	RollKubeAPIWrites    int `json:"rollKubeAPIWrites"`
	RollTAppAPIWrites    int `json:"rollTAppAPIWrites"`
	// ScaleUpAllCreatedSeconds is when kube-apiserver completed the last pod create of the scale-up (its
	// audit log), which the controllers' client budget paces; the rest of ScaleUpSeconds is the pods' way
	// to Ready.
	ScaleUpAllCreatedSeconds float64 `json:"scaleUpAllCreatedSeconds,omitempty"`
	// ScaleUpCPUSeconds and RollCPUSeconds are the CPU seconds each process spent during the scale-up and the
	// rolling update, by process ("tapp-apiserver" with its embedded etcd, "kube-apiserver",
	// "kube-controller-manager", "kube-scheduler", "etcd", "benchmark" with the pod simulator): which of
	// them grows faster than the instances says where a super-linear time comes from.
	ScaleUpCPUSeconds map[string]float64 `json:"scaleUpCPUSeconds,omitempty"`
	RollCPUSeconds    map[string]float64 `json:"rollCPUSeconds,omitempty"`
	// ScaleUpWrites and RollWrites are the write requests of both servers by "VERB resource[/subresource]"
	// (kube-apiserver's as section 3 counts them, tapp-apiserver's prefixed "tapp-apiserver ").
	ScaleUpWrites map[string]int `json:"scaleUpWrites,omitempty"`
	// Syncs and SyncSeconds are how many syncs the TApp controller made from the scale-up to the end of the
	// scale-down (every TApp's: the benchmark's is the only one with pods), and their summed duration.
	Syncs       int            `json:"syncs,omitempty"`
	SyncSeconds float64        `json:"syncSeconds,omitempty"`
	RollWrites  map[string]int `json:"rollWrites,omitempty"`
}

// GrowthTApps is tapp-apiserver holding TApps TApps of the tutorial shape with no replicas.
type GrowthTApps struct {
	TApps int `json:"tapps"`
	// RSSGrowthBytes is the resident set of tapp-apiserver restarted with the TApps (its controller synced)
	// over that of the fresh process before the first TApp (each read after a forced garbage collection).
	RSSGrowthBytes int64 `json:"rssGrowthBytes"`
	// FirstSyncSeconds is the time from the end of the creates until the controller has synced each TApp
	// once (every status.observedGeneration written); for the large size, of the TApps created after the
	// small size's.
	FirstSyncSeconds float64 `json:"firstSyncSeconds,omitempty"`
	// HeapGrowthBytes is the same growth of its Go heap in use (after a forced garbage collection).
	HeapGrowthBytes int64 `json:"heapGrowthBytes,omitempty"`
	// ListSeconds is the median of three lists of all of them, directly, in protobuf.
	ListSeconds float64 `json:"listSeconds"`
	// WatchFanOutSeconds is the time from the update of one TApp until each of Watchers watches of the
	// namespace, opened at its current resource version, has its event (median of three).
	Watchers           int     `json:"watchers"`
	WatchFanOutSeconds float64 `json:"watchFanOutSeconds"`
	// ResyncSeconds is the time from the start of a restart of tapp-apiserver until the new process's TApp
	// controller has taken every TApp from its queue (workqueue_adds_total and workqueue_depth of
	// name="tapp"); RestartSeconds is the restart's own part (stop, start, ready through the aggregator).
	ResyncSeconds  float64 `json:"resyncSeconds"`
	RestartSeconds float64 `json:"restartSeconds"`
}

// GrowthFigure is one figure at both sizes.
type GrowthFigure struct {
	Name   string  `json:"name"`
	Unit   string  `json:"unit"`
	SmallN int     `json:"smallN"`
	LargeN int     `json:"largeN"`
	Small  float64 `json:"small"`
	Large  float64 `json:"large"`
	// Exponent is log(Large/Small) / log(LargeN/SmallN): 1 linear, 0 constant, above 1 super-linear.
	Exponent float64 `json:"exponent"`
	// ExpectedExponent is the growth of a figure that scales as it should: 1 for totals, 0 for what should
	// not depend on the size (the watch fan-out).
	ExpectedExponent float64 `json:"expectedExponent"`
}
