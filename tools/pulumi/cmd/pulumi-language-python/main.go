// Command pulumi-language-python is our Python language host for the Pulumi CLI.
//
// Pulumi's own host is a module of its own (sdk/python/cmd/pulumi-language-python/v3) that the Go
// module proxy we can reach does not serve, so the CLI built by `make tools` gets this one. It speaks
// the same LanguageRuntime protocol and does what the upstream host does for the requests a
// preview, update, refresh, destroy or policy run makes: it resolves the interpreter with the SDK's
// own toolchain package (the runtime options of Pulumi.yaml or PulumiPolicy.yaml), runs programs
// through the SDK's pulumi-language-python-exec shim with the same arguments and environment, and
// starts policy packs as `python -u -m pulumi.policy` behind the SDK's policy proxy. Code
// generation, templates and dependency installation are left to the upstream host.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/emptypb"

	sdk "github.com/pulumi/pulumi/sdk/v3"
	"github.com/pulumi/pulumi/sdk/v3/go/common/apitype"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/cmdutil"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	"github.com/pulumi/pulumi/sdk/v3/go/common/version"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"github.com/pulumi/pulumi/sdk/v3/python/toolchain"
)

// The exec shim runs a program; the engine expects config and secret keys in these variables.
const (
	executorName     = "pulumi-language-python-exec"
	configVar        = "PULUMI_CONFIG"
	secretKeysVar    = "PULUMI_CONFIG_SECRET_KEYS"
	userErrorStatus  = 32 // the SDK exits with this after it has shown the user a message already
	engineHealthWait = 5 * time.Minute
)

func main() {
	showVersion := flag.Bool("version", false, "print the plugin version and exit")
	flag.String("tracing", "", "accepted as the engine passes it; tracing is not collected")
	flag.Parse()
	if *showVersion {
		fmt.Println(version.Version)
		return
	}

	self, err := os.Executable()
	if err != nil {
		cmdutil.Exit(fmt.Errorf("could not locate this executable: %w", err))
	}
	executor := filepath.Join(filepath.Dir(self), executorName)
	if _, err := os.Stat(executor); err != nil {
		cmdutil.Exit(fmt.Errorf("missing executor %s beside the language host: %w", executor, err))
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	cancel := make(chan bool)
	go func() { <-ctx.Done(); stop(); close(cancel) }()

	host := &languageHost{executor: executor}
	if args := flag.Args(); len(args) > 0 {
		host.engineAddress = args[0]
		if err := rpcutil.Healthcheck(ctx, host.engineAddress, engineHealthWait, stop); err != nil {
			cmdutil.Exit(fmt.Errorf("could not start the engine health check: %w", err))
		}
	}
	handle, err := rpcutil.ServeWithOptions(rpcutil.ServeOptions{
		Cancel: cancel,
		Init: func(srv *grpc.Server) error {
			pulumirpc.RegisterLanguageRuntimeServer(srv, host)
			return nil
		},
	})
	if err != nil {
		cmdutil.Exit(fmt.Errorf("could not start the language host: %w", err))
	}
	fmt.Printf("%d\n", handle.Port) // the engine reads the port from our first line
	if err := <-handle.Done; err != nil {
		cmdutil.Exit(fmt.Errorf("language host stopped serving: %w", err))
	}
}

type languageHost struct {
	pulumirpc.UnimplementedLanguageRuntimeServer

	executor      string
	engineAddress string
}

func (h *languageHost) Handshake(
	ctx context.Context, req *pulumirpc.LanguageHandshakeRequest,
) (*pulumirpc.LanguageHandshakeResponse, error) {
	h.engineAddress = req.EngineAddress
	return &pulumirpc.LanguageHandshakeResponse{}, nil
}

func (h *languageHost) GetPluginInfo(context.Context, *emptypb.Empty) (*pulumirpc.PluginInfo, error) {
	return &pulumirpc.PluginInfo{Version: version.Version}, nil
}

// GetRequiredPackages lists nothing: the engine then loads each provider when a resource first asks
// for it, at the version that resource names. Listing every Pulumi package of the virtualenv, as the
// upstream host does, would make the engine demand the pulumi-aws plugin before the program runs,
// and that plugin cannot be built from a Go module (its programs keep their mock tests).
func (h *languageHost) GetRequiredPackages(
	context.Context, *pulumirpc.GetRequiredPackagesRequest,
) (*pulumirpc.GetRequiredPackagesResponse, error) {
	return &pulumirpc.GetRequiredPackagesResponse{}, nil
}

func (h *languageHost) GetRequiredPlugins(
	context.Context, *pulumirpc.GetRequiredPluginsRequest,
) (*pulumirpc.GetRequiredPluginsResponse, error) {
	return &pulumirpc.GetRequiredPluginsResponse{}, nil
}

// Run runs the program through the exec shim with the interpreter Pulumi.yaml's runtime names.
func (h *languageHost) Run(ctx context.Context, req *pulumirpc.RunRequest) (*pulumirpc.RunResponse, error) {
	tc, err := resolveToolchain(req.Info, false)
	if err != nil {
		return nil, err
	}
	if err := tc.ValidateVenv(ctx); err != nil {
		return nil, err
	}
	cmd, err := tc.Command(ctx, append([]string{h.executor}, h.runArguments(req)...)...)
	if err != nil {
		return nil, err
	}
	config, err := json.Marshal(req.GetConfig())
	if err != nil {
		return nil, fmt.Errorf("could not serialise the stack configuration: %w", err)
	}
	secretKeys := req.GetConfigSecretKeys()
	if secretKeys == nil {
		secretKeys = []string{}
	}
	secrets, err := json.Marshal(secretKeys)
	if err != nil {
		return nil, fmt.Errorf("could not serialise the secret configuration keys: %w", err)
	}
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	if req.GetConfig() != nil {
		cmd.Env = append(cmd.Env, configVar+"="+string(config))
	}
	cmd.Env = append(cmd.Env, secretKeysVar+"="+string(secrets))
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 5 * time.Second

	if err := cmd.Run(); err != nil {
		_ = os.Stdout.Sync()
		_ = os.Stderr.Sync()
		var exited *exec.ExitError
		if !errors.As(err, &exited) {
			return &pulumirpc.RunResponse{Error: fmt.Sprintf("could not run the language executor: %v", err)}, nil
		}
		if exited.ExitCode() == userErrorStatus {
			return &pulumirpc.RunResponse{Bail: true}, nil
		}
		return &pulumirpc.RunResponse{Error: fmt.Sprintf("program exited with non-zero exit code: %d", exited.ExitCode())}, nil
	}
	return &pulumirpc.RunResponse{}, nil
}

// runArguments are the exec shim's flags, in the form the SDK's argument parser reads.
func (h *languageHost) runArguments(req *pulumirpc.RunRequest) []string {
	var args []string
	add := func(name, value string) {
		if value != "" {
			args = append(args, "--"+name, value)
		}
	}
	add("monitor", req.GetMonitorAddress())
	add("engine", h.engineAddress)
	add("project", req.GetProject())
	add("root_directory", req.GetInfo().GetRootDirectory())
	add("stack", req.GetStack())
	add("pwd", req.GetPwd())
	add("dry_run", strconv.FormatBool(req.GetDryRun()))
	add("parallel", strconv.Itoa(int(req.GetParallel())))
	add("organization", req.GetOrganization())
	args = append(args, req.GetInfo().GetEntryPoint())
	return append(args, req.GetArgs()...)
}

// RunPlugin starts a policy pack (`python -u -m pulumi.policy ARGS PACKDIR`, in the pack's directory,
// with the stack's configuration in its environment) or a plugin's __main__.py.
func (h *languageHost) RunPlugin(req *pulumirpc.RunPluginRequest, server pulumirpc.LanguageRuntime_RunPluginServer) error {
	ctx := server.Context()
	analyzer := req.GetKind() == string(apitype.AnalyzerPlugin)
	tc, err := resolveToolchain(req.Info, !analyzer)
	if err != nil {
		return err
	}
	var args []string
	if analyzer {
		args = append(append([]string{"-u", "-m", "pulumi.policy"}, req.GetArgs()...), req.Info.GetProgramDirectory())
	} else {
		args = append([]string{req.Info.GetProgramDirectory()}, req.GetArgs()...)
	}
	cmd, err := tc.Command(ctx, args...)
	if err != nil {
		return err
	}
	closer, stdout, stderr, err := rpcutil.MakeRunPluginStreams(server, false)
	if err != nil {
		return err
	}
	defer closer.Close()
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}

	var proxy *sdk.PolicyProxy
	if analyzer {
		cmd.Dir = req.Info.GetProgramDirectory()
		if proxy, stdout, err = sdk.NewPolicyProxy(ctx, stdout); err != nil {
			return fmt.Errorf("could not start the policy pack proxy: %w", err)
		}
		stack, err := proxy.AwaitConfiguration(ctx)
		if err != nil {
			return fmt.Errorf("could not get the stack configuration: %w", err)
		}
		cmd.Env = append(cmd.Env, stackEnvironment(stack)...)
	} else {
		cmd.Dir = req.GetPwd()
	}
	cmd.Env = append(cmd.Env, req.GetEnv()...)
	cmd.Stdout, cmd.Stderr = stdout, stderr

	if err := cmd.Start(); err != nil {
		return fmt.Errorf("could not run the plugin: %w", err)
	}
	if proxy != nil {
		return proxy.Attach(ctx, cmd)
	}
	if err := cmd.Wait(); err != nil {
		var exited *exec.ExitError
		if errors.As(err, &exited) {
			if status, ok := exited.Sys().(syscall.WaitStatus); ok {
				return server.Send(&pulumirpc.RunPluginResponse{
					Output: &pulumirpc.RunPluginResponse_Exitcode{Exitcode: int32(status.ExitStatus())},
				})
			}
		}
		return fmt.Errorf("plugin exited unexpectedly: %w", err)
	}
	return closer.Close()
}

// stackEnvironment is what a policy pack reads about the stack it judges.
func stackEnvironment(stack *pulumirpc.AnalyzerStackConfigureRequest) []string {
	if stack == nil {
		return nil
	}
	var env []string
	add := func(name, value string) {
		if value != "" {
			env = append(env, name+"="+value)
		}
	}
	add("PULUMI_ORGANIZATION", stack.GetOrganization())
	add("PULUMI_PROJECT", stack.GetProject())
	add("PULUMI_STACK", stack.GetStack())
	add("PULUMI_DRY_RUN", strconv.FormatBool(stack.GetDryRun()))
	if stack.GetConfig() != nil {
		if config, err := json.Marshal(stack.GetConfig()); err == nil {
			add(configVar, string(config))
		}
	}
	return env
}

func (h *languageHost) Cancel(context.Context, *emptypb.Empty) (*emptypb.Empty, error) {
	return &emptypb.Empty{}, nil
}

// resolveToolchain reads the runtime options (toolchain, virtualenv) as the upstream host does;
// plugins other than policy packs default to a `venv` virtualenv, as there.
func resolveToolchain(info *pulumirpc.ProgramInfo, isPlugin bool) (toolchain.Toolchain, error) {
	opts := toolchain.PythonOptions{Root: info.GetRootDirectory(), ProgramDir: info.GetProgramDirectory()}
	options := info.GetOptions().AsMap()
	if value, ok := options["virtualenv"]; ok {
		venv, isString := value.(string)
		if !isString {
			return nil, errors.New("virtualenv option must be a string")
		}
		opts.Virtualenv = venv
	}
	if value, ok := options["toolchain"]; ok {
		switch value {
		case "pip":
			opts.Toolchain = toolchain.Pip
		case "poetry":
			opts.Toolchain = toolchain.Poetry
		case "uv":
			opts.Toolchain = toolchain.Uv
		default:
			return nil, fmt.Errorf("unsupported toolchain option: %v", value)
		}
	}
	if isPlugin && (opts.Toolchain == toolchain.Pip || opts.Toolchain == toolchain.Auto) && opts.Virtualenv == "" {
		opts.Virtualenv = "venv"
	}
	return toolchain.ResolveToolchain(opts)
}
