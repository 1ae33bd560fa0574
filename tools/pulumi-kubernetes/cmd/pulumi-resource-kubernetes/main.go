// Command pulumi-resource-kubernetes serves Pulumi's Kubernetes provider.
//
// The provider module's own main embeds a schema its Makefile generates and git ignores, so that
// package does not build from the module zip. tools/build.py writes the same two files here from
// the module's schema.json and terraform-mapping.json (the schema with its version set) before
// building, and this main serves the provider exactly as the stock one does.
package main

import (
	_ "embed"

	"github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/provider"
	"github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version"
)

//go:embed schema-embed.json
var schema []byte

//go:embed terraform-mapping-embed.json
var terraformMapping []byte

func main() {
	provider.Serve("kubernetes", version.Version, schema, terraformMapping)
}
