import sys

try:
    from arena.cli import main
except KeyboardInterrupt:  # Ctrl-C as the interpreter loads the CLI: no traceback either
    print("arena: interrupted", file=sys.stderr)
    sys.exit(130)

sys.exit(main())
