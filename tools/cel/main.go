// kubelet-cel answers, for each JSON line on stdin, what cel-go says of one kubelet expression in the
// environment Karpenter 1.15 declares for spec.kubelet (six variables, max/min with int and double
// overloads): the compile error or output type, and the value or error of an evaluation against the
// variables given. The differential tests compare our Python checker and evaluator with it.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

type request struct {
	Expression string         `json:"expression"`
	Vars       map[string]any `json:"vars"`
}

type answer struct {
	CompileError *string  `json:"compileError"`
	OutputType   string   `json:"outputType,omitempty"`
	Int          *int64   `json:"int,omitempty"`
	Double       *float64 `json:"double,omitempty"`
	Special      string   `json:"special,omitempty"` // +Inf, -Inf or NaN: JSON has no number for them
	EvalError    *string  `json:"evalError,omitempty"`
}

var intVars = []string{"vcpus", "memory_mib", "default_enis", "ips_per_eni", "max_pods"}

// pick is Karpenter's max/min binding: the left argument when strictly better, else the right; two ints
// compare as ints, anything else as doubles.
func pick(better func(l, r float64) bool, betterInt func(l, r int64) bool) func(lhs, rhs ref.Val) ref.Val {
	return func(lhs, rhs ref.Val) ref.Val {
		if l, ok := lhs.(types.Int); ok {
			if r, ok := rhs.(types.Int); ok {
				if betterInt(int64(l), int64(r)) {
					return l
				}
				return r
			}
		}
		l, r := asDouble(lhs), asDouble(rhs)
		if better(float64(l), float64(r)) {
			return l
		}
		return r
	}
}

func asDouble(v ref.Val) types.Double {
	if i, ok := v.(types.Int); ok {
		return types.Double(i)
	}
	return v.(types.Double)
}

func environment() (*cel.Env, error) {
	var opts []cel.EnvOption
	for _, name := range intVars {
		opts = append(opts, cel.Variable(name, cel.IntType))
	}
	opts = append(opts, cel.Variable("instance_type", cel.StringType))
	for _, fn := range []struct {
		name    string
		left    func(l, r float64) bool
		leftInt func(l, r int64) bool
	}{
		{"max", func(l, r float64) bool { return l > r }, func(l, r int64) bool { return l > r }},
		{"min", func(l, r float64) bool { return l < r }, func(l, r int64) bool { return l < r }},
	} {
		binding := cel.BinaryBinding(pick(fn.left, fn.leftInt))
		opts = append(opts, cel.Function(fn.name,
			cel.Overload(fn.name+"_int_int", []*cel.Type{cel.IntType, cel.IntType}, cel.IntType, binding),
			cel.Overload(fn.name+"_double_double", []*cel.Type{cel.DoubleType, cel.DoubleType}, cel.DoubleType, binding),
			cel.Overload(fn.name+"_int_double", []*cel.Type{cel.IntType, cel.DoubleType}, cel.DoubleType, binding),
			cel.Overload(fn.name+"_double_int", []*cel.Type{cel.DoubleType, cel.IntType}, cel.DoubleType, binding),
		))
	}
	return cel.NewEnv(opts...)
}

func judge(env *cel.Env, req request) answer {
	ast, issues := env.Compile(req.Expression)
	if issues != nil && issues.Err() != nil {
		text := issues.Err().Error()
		return answer{CompileError: &text}
	}
	out := answer{OutputType: ast.OutputType().String()}
	if req.Vars == nil {
		return out
	}
	program, err := env.Program(ast)
	if err != nil {
		text := err.Error()
		out.EvalError = &text
		return out
	}
	activation := map[string]any{}
	for name, value := range req.Vars {
		if number, ok := value.(float64); ok {
			activation[name] = int64(number)
		} else {
			activation[name] = value
		}
	}
	value, _, err := program.Eval(activation)
	if err != nil {
		text := err.Error()
		out.EvalError = &text
		return out
	}
	switch v := value.Value().(type) {
	case int64:
		out.Int = &v
	case float64:
		switch {
		case math.IsNaN(v):
			out.Special = "NaN"
		case math.IsInf(v, 1):
			out.Special = "+Inf"
		case math.IsInf(v, -1):
			out.Special = "-Inf"
		default:
			out.Double = &v
		}
	}
	return out
}

func main() {
	env, err := environment()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	scanner := bufio.NewScanner(os.Stdin)
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	encoder := json.NewEncoder(os.Stdout)
	for scanner.Scan() {
		var req request
		if err := json.Unmarshal(scanner.Bytes(), &req); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		if err := encoder.Encode(judge(env, req)); err != nil {
			os.Exit(1)
		}
	}
}
