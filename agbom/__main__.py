import sys

from agbom.cli import main

sys.exit(main())
