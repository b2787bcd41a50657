package kubectltapp

import tkestackv1 "github.com/tapp-io/tapp-apiserver/pkg/apis/tkestack/v1"

// rolloutPartition is spec.updateStrategy.partition: instances with a lower id are not updated.
func rolloutPartition(tapp *tkestackv1.TApp) int { return int(tapp.Spec.UpdateStrategy.Partition) }

// rolloutPaused is spec.updateStrategy.paused.
func rolloutPaused(tapp *tkestackv1.TApp) bool { return tapp.Spec.UpdateStrategy.Paused }

// updateRevision is status.updateRevision.
func updateRevision(tapp *tkestackv1.TApp) string { return tapp.Status.UpdateRevision }
