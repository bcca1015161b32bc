"""`python -m e2store`: the command line."""

import sys

try:
    from e2store.cli import main
except KeyboardInterrupt:  # Ctrl-C while Python imports it: one line, exit 130 (no traceback)
    sys.stderr.write("e2store: interrupted (Ctrl-C)\n")
    sys.exit(130)

main()
