"""`python -m chomp_tables`: see `chomp_tables.cli`."""

import sys

from .cli import main

sys.exit(main())
