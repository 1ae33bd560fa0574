"""The Pulumi policy pack (CrossGuard): one policy per rule of the registry, judged by the same judge as the
CLI through :mod:`karpenter_gitops.app.analyze`. :mod:`.pack` holds the policies, importable without starting
anything; ``__main__`` serves them to the engine."""
