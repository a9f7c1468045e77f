from issue_assistant.cli import main

raise SystemExit(main())
