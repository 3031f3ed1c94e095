from components.cli import main

raise SystemExit(main())
