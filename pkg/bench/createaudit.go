package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// createAuditPolicy has kube-apiserver record one audit event per pod create, when the create completes
// (stage ResponseComplete, microsecond timestamps), and nothing else (dry-run creates are recorded too, and left out when read): the moment the last pod of a scale-up
// was created, whoever created it, without the delay of any watch (see docs/benchmarks.md, Sections).
const createAuditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted, Panic]
rules:
- level: Metadata
  verbs: [create]
  resources:
  - group: ""
    resources: [pods]
- level: None
`

// createAuditArgs writes the policy into dir and returns kube-apiserver's flags that log the pod creates to
// logPath (a blocking log: each event is written before its response is sent).
func createAuditArgs(dir, logPath string) ([]string, error) {
	policy := filepath.Join(dir, "pod-create-audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(createAuditPolicy), 0o644); err != nil {
		return nil, err
	}
	return []string{"--audit-policy-file=" + policy, "--audit-log-path=" + logPath, "--audit-log-format=json", "--audit-log-mode=blocking"}, nil
}

// auditEvent is what podCreatesDone reads of an audit event.
type auditEvent struct {
	Stage      string `json:"stage"`
	Verb       string `json:"verb"`
	RequestURI string `json:"requestURI"`
	ObjectRef  *struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
		Namespace   string `json:"namespace"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	StageTimestamp time.Time `json:"stageTimestamp"`
}

// fileSize is the size of the file at path, 0 if it cannot be read.
func fileSize(path string) int64 {
	info, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return info.Size()
}

// podCreatesDone reads the audit log at path from byte offset on (the start of a line) and returns the number of
// pods created in namespace between from and to, and when the last of those creates completed.
func podCreatesDone(path string, offset int64, namespace string, from, to time.Time) (count int, last time.Time, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, time.Time{}, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return 0, time.Time{}, err
	}
	scanner := bufio.NewScanner(f)
	scanner.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for scanner.Scan() {
		var e auditEvent
		if err := json.Unmarshal(scanner.Bytes(), &e); err != nil {
			return 0, time.Time{}, fmt.Errorf("%s: %w", path, err)
		}
		if e.Stage != "ResponseComplete" || e.Verb != "create" || e.ObjectRef == nil || e.ResponseStatus == nil ||
			e.ObjectRef.Resource != "pods" || e.ObjectRef.Subresource != "" || e.ObjectRef.Namespace != namespace ||
			e.ResponseStatus.Code != 201 || strings.Contains(e.RequestURI, "dryRun=") || e.StageTimestamp.Before(from) || e.StageTimestamp.After(to) {
			continue
		}
		count++
		if e.StageTimestamp.After(last) {
			last = e.StageTimestamp
		}
	}
	return count, last, scanner.Err()
}
