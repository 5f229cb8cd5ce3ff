package resource

// Label and annotation keys of the management API.
const (
	// LabelProject names the project a VirtualClusterInstance belongs to.
	LabelProject = "management.service/project"
	// AnnotationMigratedFrom records, on a moved VirtualClusterInstance, the
	// "namespace/name" it was moved from.
	AnnotationMigratedFrom = "management.service/migrated-from"
)

// DefaultProjectNamespacePrefix is the prefix of a project's namespace: project "a"
// lives in namespace "p-a".
const DefaultProjectNamespacePrefix = "p-"

// RequestTarget names what a request is addressed to, for scope rules.
type RequestTarget string

// The request targets a scope rule may name.
const (
	RequestTargetManagement            RequestTarget = "Management"
	RequestTargetCluster               RequestTarget = "Cluster"
	RequestTargetVirtualCluster        RequestTarget = "VirtualCluster"
	RequestTargetProjectSpace          RequestTarget = "ProjectSpace"
	RequestTargetProjectVirtualCluster RequestTarget = "ProjectVirtualCluster"
)

// AccessKeyScope narrows what a key or token may do. A nil scope is no restriction
// beyond the subject's own rights; Projects, Spaces, VirtualClusters and Rules are
// alternatives, any of which may allow a request.
type AccessKeyScope struct {
	// AllowServiceCli allows the read-only requests the service's command-line client
	// needs.
	AllowServiceCli bool `json:"allowServiceCli,omitempty"`
	// Projects the key may access.
	Projects []AccessKeyScopeProject `json:"projects,omitempty"`
	// Spaces the key may access.
	Spaces []AccessKeyScopeSpace `json:"spaces,omitempty"`
	// VirtualClusters the key may access.
	VirtualClusters []AccessKeyScopeVirtualCluster `json:"virtualClusters,omitempty"`
	// Rules is deprecated: use Projects, Spaces and VirtualClusters.
	Rules []AccessKeyScopeRule `json:"rules,omitempty"`
}

// AccessKeyScopeProject selects a project; "*" selects every project.
type AccessKeyScopeProject struct {
	// Project is the project name, or "*".
	Project string `json:"project"`
}

// AccessKeyScopeSpace selects a space of a project; space "*" selects all of them.
type AccessKeyScopeSpace struct {
	// Project is the project name.
	Project string `json:"project"`
	// Space is the space name, or "*".
	Space string `json:"space"`
}

// AccessKeyScopeVirtualCluster selects a virtual cluster of a project; "*" selects all.
type AccessKeyScopeVirtualCluster struct {
	// Project is the project name.
	Project string `json:"project"`
	// VirtualCluster is the virtual cluster name, or "*".
	VirtualCluster string `json:"virtualCluster"`
}

// AccessKeyScopeRule is a deprecated request-matching rule, modelled on Kubernetes'
// audit policy rule. Empty lists mean "every" where the field says so.
type AccessKeyScopeRule struct {
	// Verbs matched; empty means every verb.
	Verbs []string `json:"verbs,omitempty"`
	// Resources matched; empty means all kinds in all API groups.
	Resources []GroupResources `json:"resources,omitempty"`
	// ResourceNames are the instance names matched; requires Resources. Empty means all.
	ResourceNames []string `json:"resourceNames,omitempty"`
	// Namespaces matched; "" matches cluster-scoped resources. Empty means every one.
	Namespaces []string `json:"namespaces,omitempty"`
	// NonResourceURLs are URL paths matched; "*" only as the whole, final path step.
	NonResourceURLs []string `json:"nonResourceURLs,omitempty"`
	// RequestTargets allowed; empty means every request.
	RequestTargets []RequestTarget `json:"requestTargets,omitempty"`
	// Cluster matched. When set, only cluster requests to it are allowed.
	Cluster string `json:"cluster,omitempty"`
	// VirtualClusters matched, for virtual cluster requests only. Empty means all.
	VirtualClusters []AccessKeyVirtualCluster `json:"virtualClusters,omitempty"`
}

// GroupResources selects resources of one API group.
type GroupResources struct {
	// Group is the API group; "" is the core group.
	Group string `json:"group,omitempty"`
	// Resources are resource names: "name", "name/sub", "*", "name/*" or "*/sub".
	// Empty means every resource and subresource of the group.
	Resources []string `json:"resources,omitempty"`
}

// AccessKeyVirtualCluster selects virtual clusters in a scope rule.
type AccessKeyVirtualCluster struct {
	// Name of the virtual cluster; empty means all.
	Name string `json:"name,omitempty"`
	// Namespace of the virtual cluster; empty means all namespaces.
	Namespace string `json:"namespace,omitempty"`
}

// DirectClusterEndpointToken asks for a signed token that a connected cluster verifies
// on its own. Cluster-scoped. The create response carries the token in Status.Token;
// the stored record never does.
type DirectClusterEndpointToken struct {
	TypeMeta `json:",inline"`
	// ObjectMeta is the standard metadata.
	ObjectMeta `json:"metadata"`
	// Spec is the requested lifetime and scope.
	Spec DirectClusterEndpointTokenSpec `json:"spec,omitzero"`
	// Status holds the issued token (in the create response only) and its expiry.
	Status DirectClusterEndpointTokenStatus `json:"status,omitzero"`
}

// DirectClusterEndpointTokenSpec is the request for a token.
type DirectClusterEndpointTokenSpec struct {
	// TTL is the token lifetime in seconds; 0 means the issuer's default.
	TTL int64 `json:"ttl,omitempty"`
	// Scope narrows what the token allows; nil means the caller's own scope.
	Scope *AccessKeyScope `json:"scope,omitempty"`
}

// DirectClusterEndpointTokenStatus is the issued token.
type DirectClusterEndpointTokenStatus struct {
	// Token is the signed token, a secret; present only in the create response.
	Token string `json:"token,omitempty"`
	// ExpirationTimestamp is when the token stops being valid.
	ExpirationTimestamp *Time `json:"expirationTimestamp,omitempty"`
}

// DirectClusterEndpointTokenList is a list of [DirectClusterEndpointToken].
type DirectClusterEndpointTokenList = List[DirectClusterEndpointToken, *DirectClusterEndpointToken]

// ProjectMigrateVirtualClusterInstance asks to move a virtual cluster instance into
// the project the request is addressed to (a subresource of Project).
type ProjectMigrateVirtualClusterInstance struct {
	TypeMeta `json:",inline"`
	// ObjectMeta is the standard metadata; a name makes the request idempotent.
	ObjectMeta `json:"metadata"`
	// SourceVirtualClusterInstance names the instance to move.
	SourceVirtualClusterInstance SourceVirtualClusterInstance `json:"sourceVirtualClusterInstance"`
	// Status is the result of the move.
	Status ProjectMigrateVirtualClusterInstanceStatus `json:"status,omitzero"`
}

// SourceVirtualClusterInstance names the virtual cluster instance to move.
type SourceVirtualClusterInstance struct {
	// Name of the instance.
	Name string `json:"name"`
	// Namespace of the instance: the namespace of the project that holds it now.
	Namespace string `json:"namespace"`
}

// ProjectMigrateVirtualClusterInstanceStatus names the moved instance.
type ProjectMigrateVirtualClusterInstanceStatus struct {
	// Namespace the instance now lives in.
	Namespace string `json:"namespace,omitempty"`
	// Name of the moved instance.
	Name string `json:"name,omitempty"`
	// UID of the moved instance (a new one).
	UID string `json:"uid,omitempty"`
}

// ProjectMigrateVirtualClusterInstanceList is a list of
// [ProjectMigrateVirtualClusterInstance].
type ProjectMigrateVirtualClusterInstanceList = List[ProjectMigrateVirtualClusterInstance, *ProjectMigrateVirtualClusterInstance]

// Owner names the user or team that owns a project or instance.
type Owner struct {
	// User name.
	User string `json:"user,omitempty"`
	// Team name.
	Team string `json:"team,omitempty"`
}

// Project groups virtual cluster instances; its namespace is the project namespace
// prefix plus its name. Cluster-scoped.
type Project struct {
	TypeMeta `json:",inline"`
	// ObjectMeta is the standard metadata.
	ObjectMeta `json:"metadata"`
	// Spec is the project's desired state.
	Spec ProjectSpec `json:"spec,omitzero"`
	// Status is the project's observed state, written by the server (the progress of
	// its deletion, for one).
	Status ProjectStatus `json:"status,omitzero"`
}

// ProjectStatus is the observed state of a [Project].
type ProjectStatus struct {
	// Conditions are the project's observed conditions, such as what its deletion
	// still waits for.
	Conditions []Condition `json:"conditions,omitempty"`
}

// ProjectSpec is the desired state of a [Project].
type ProjectSpec struct {
	// DisplayName is a human-readable name.
	DisplayName string `json:"displayName,omitempty"`
	// Description says what the project is for.
	Description string `json:"description,omitempty"`
	// Owner of the project.
	Owner *Owner `json:"owner,omitempty"`
	// AllowedClusters are the clusters instances of this project may run on. Empty, or
	// an entry "*", allows every cluster.
	AllowedClusters []AllowedCluster `json:"allowedClusters,omitempty"`
}

// AllowedCluster names a cluster a project may use, or "*".
type AllowedCluster struct {
	// Name of the cluster, or "*".
	Name string `json:"name"`
}

// ProjectList is a list of [Project].
type ProjectList = List[Project, *Project]

// VirtualClusterInstance is a virtual cluster that belongs to a project. It lives in the
// project's namespace and carries the [LabelProject] label.
type VirtualClusterInstance struct {
	TypeMeta `json:",inline"`
	// ObjectMeta is the standard metadata.
	ObjectMeta `json:"metadata"`
	// Spec is the instance's desired state.
	Spec VirtualClusterInstanceSpec `json:"spec,omitzero"`
	// Status is the observed state.
	Status VirtualClusterInstanceStatus `json:"status,omitzero"`
}

// VirtualClusterInstanceSpec is the desired state of a [VirtualClusterInstance].
type VirtualClusterInstanceSpec struct {
	// DisplayName is a human-readable name.
	DisplayName string `json:"displayName,omitempty"`
	// Description says what the instance is for.
	Description string `json:"description,omitempty"`
	// Owner of the instance.
	Owner *Owner `json:"owner,omitempty"`
	// ClusterRef says where the virtual cluster runs.
	ClusterRef ClusterRef `json:"clusterRef,omitzero"`
	// TemplateRef names the template the instance was made from.
	TemplateRef *TemplateRef `json:"templateRef,omitempty"`
	// Parameters are template parameters, as a YAML string.
	Parameters string `json:"parameters,omitempty"`
}

// ClusterRef locates a virtual cluster on a connected cluster.
type ClusterRef struct {
	// Cluster is the connected cluster's name.
	Cluster string `json:"cluster,omitempty"`
	// Namespace on that cluster.
	Namespace string `json:"namespace,omitempty"`
	// VirtualCluster is the virtual cluster's name there.
	VirtualCluster string `json:"virtualCluster,omitempty"`
}

// TemplateRef names a template and its version.
type TemplateRef struct {
	// Name of the template.
	Name string `json:"name"`
	// Version of the template; empty means the latest.
	Version string `json:"version,omitempty"`
}

// Phases of a [VirtualClusterInstance].
const (
	InstancePhasePending  = "Pending"
	InstancePhaseReady    = "Ready"
	InstancePhaseSleeping = "Sleeping"
	InstancePhaseFailed   = "Failed"
)

// VirtualClusterInstanceStatus is the observed state of a [VirtualClusterInstance].
type VirtualClusterInstanceStatus struct {
	// Phase is Pending, Ready, Sleeping or Failed.
	Phase string `json:"phase,omitempty"`
	// Reason is a machine-readable reason for the phase.
	Reason string `json:"reason,omitempty"`
	// Message is a human-readable account of the phase.
	Message string `json:"message,omitempty"`
	// Conditions are the instance's detailed conditions.
	Conditions []Condition `json:"conditions,omitempty"`
}

// Condition is one observed aspect of an object's state.
type Condition struct {
	// Type of the condition, e.g. "Ready".
	Type string `json:"type"`
	// Status is "True", "False" or "Unknown".
	Status string `json:"status"`
	// LastTransitionTime is when Status last changed.
	LastTransitionTime *Time `json:"lastTransitionTime,omitempty"`
	// Reason is a machine-readable reason.
	Reason string `json:"reason,omitempty"`
	// Message is a human-readable message.
	Message string `json:"message,omitempty"`
}

// VirtualClusterInstanceList is a list of [VirtualClusterInstance].
type VirtualClusterInstanceList = List[VirtualClusterInstance, *VirtualClusterInstance]

// AccessKey is a bearer credential. Its secret is accepted on create and stored only as
// a hash. Cluster-scoped.
type AccessKey struct {
	TypeMeta `json:",inline"`
	// ObjectMeta is the standard metadata.
	ObjectMeta `json:"metadata"`
	// Spec describes the key.
	Spec AccessKeySpec `json:"spec,omitzero"`
}

// AccessKeySpec describes an [AccessKey].
type AccessKeySpec struct {
	// DisplayName is a human-readable name.
	DisplayName string `json:"displayName,omitempty"`
	// Description says what the key is for.
	Description string `json:"description,omitempty"`
	// User the key belongs to.
	User string `json:"user,omitempty"`
	// Team the key belongs to.
	Team string `json:"team,omitempty"`
	// Subject is who the key acts for.
	Subject string `json:"subject,omitempty"`
	// Key is the secret; accepted on create and on rotation (an update that sets it),
	// stored only as a hash outside the AccessKey, never returned.
	Key string `json:"key,omitempty"`
	// KeyHash is not used: package token keeps the secret's hash in its own internal
	// records, never on the AccessKey (so no reader of keys sees it), and its admission
	// refuses a write that sets it. It stays for the objects older servers stored.
	KeyHash string `json:"keyHash,omitempty"`
	// Scope narrows what the key may do; nil means no restriction.
	Scope *AccessKeyScope `json:"scope,omitempty"`
	// TTL is the key's lifetime in seconds from creation; 0 means no expiry.
	TTL int64 `json:"ttl,omitempty"`
	// TokenGeneration, when raised, revokes every token issued for this key's subject
	// at a lower generation.
	TokenGeneration int64 `json:"tokenGeneration,omitempty"`
}

// AccessKeyList is a list of [AccessKey].
type AccessKeyList = List[AccessKey, *AccessKey]
