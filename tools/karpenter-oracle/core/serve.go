// Package core answers questions about Karpenter with the code of sigs.k8s.io/karpenter, whichever
// release the importing module requires, so the project's offline verdicts can be compared with the
// real ones (tests/_oracle.py drives the program).
//
// Protocol: one JSON request per line on stdin, one JSON answer per line on stdout, in order. A
// request names its "op"; an answer that could not be given carries "error" instead, and one whose
// Karpenter code panicked carries "panic" (a panic is Karpenter's answer too: its controller would
// crash on that object).
package core

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/awslabs/operatorpkg/status"
	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// Question answers one request, given its whole JSON line.
type Question func(ctx context.Context, request []byte) (any, error)

// Decode reads a request's fields into T.
func Decode[T any](request []byte) (T, error) {
	var fields T
	if err := json.Unmarshal(request, &fields); err != nil {
		return fields, fmt.Errorf("request: %w", err)
	}
	return fields, nil
}

// Serve answers the lines on stdin with ``questions`` (merged; a later set's op wins) until stdin ends.
func Serve(questions ...map[string]Question) {
	// Karpenter logs through controller-runtime; the oracle answers in JSON only.
	log.SetLogger(logr.Discard())
	ops := map[string]Question{}
	for _, set := range questions {
		for op, question := range set {
			ops[op] = question
		}
	}
	ops["questions"] = func(context.Context, []byte) (any, error) { return sortedKeys(ops), nil }
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		line := strings.TrimSpace(in.Text())
		if line == "" {
			continue
		}
		if err := out.Encode(answer(ops, []byte(line))); err != nil {
			fmt.Fprintln(os.Stderr, "karpenter-oracle:", err)
			os.Exit(1)
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "karpenter-oracle:", err)
		os.Exit(1)
	}
}

func answer(ops map[string]Question, line []byte) (reply any) {
	head, err := Decode[struct {
		Op string `json:"op"`
	}](line)
	if err != nil {
		return map[string]string{"error": err.Error()}
	}
	question, ok := ops[head.Op]
	if !ok {
		return map[string]string{"error": fmt.Sprintf("unknown op %q", head.Op)}
	}
	defer func() {
		if recovered := recover(); recovered != nil {
			reply = map[string]string{"panic": fmt.Sprint(recovered)}
		}
	}()
	result, err := question(context.Background(), line)
	if err != nil {
		return map[string]string{"error": err.Error()}
	}
	return result
}

// Questions are the ones every release answers from the core module alone.
func Questions() map[string]Question {
	return map[string]Question{
		"release":       release,
		"nodepool":      nodePool,
		"labels":        labels,
		"label":         label,
		"nodeoverlay":   nodeOverlay,
		"nodepooldrift": nodePoolDrift,
	}
}

// release names the Karpenter modules this binary was built from (the test suite checks it asks the
// release it means to).
func release(context.Context, []byte) (any, error) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return nil, fmt.Errorf("no build information in the binary")
	}
	versions := map[string]string{"go": info.GoVersion}
	for _, module := range info.Deps {
		switch module.Path {
		case "sigs.k8s.io/karpenter":
			versions["core"] = module.Version
		case "github.com/aws/karpenter-provider-aws":
			versions["provider"] = module.Version
		}
	}
	return versions, nil
}

func sortedKeys[V any](items map[string]V) []string {
	keys := make([]string, 0, len(items))
	for key := range items {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	return keys
}

func sorted(items []string) []string {
	sort.Strings(items)
	return items
}

// Condition is one status condition as answers carry it.
type Condition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// Conditions are a status's conditions in the answer's shape, by type.
func Conditions(conditions []status.Condition) []Condition {
	out := []Condition{}
	for _, condition := range conditions {
		out = append(out, Condition{condition.Type, string(condition.Status), condition.Reason, condition.Message})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Type < out[j].Type })
	return out
}
