from karpenter_gitops.cli import main

raise SystemExit(main())
