from mm.cli import main

raise SystemExit(main())
