package aws

import (
	"context"

	"karpenter-gitops/tools/karpenter-oracle/core"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
)

// nodeClassHash is the EC2NodeClass's static hash as the provider's drift check compares it
// (pkg/cloudprovider/drift.go, areStaticFieldsDrifted: NodeClassDrift while the hash versions agree),
// with no CA bundle (the same on both sides of a change).
func nodeClassHash(_ context.Context, request []byte) (any, error) {
	fields, err := core.Decode[struct {
		Object awsv1.EC2NodeClass `json:"object"`
	}](request)
	if err != nil {
		return nil, err
	}
	return map[string]any{"hash": fields.Object.Hash(nil), "hashVersion": awsv1.EC2NodeClassHashVersion}, nil
}
