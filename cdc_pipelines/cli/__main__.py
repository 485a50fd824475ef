"""`python -m cdc_pipelines.cli`: the library's commands (without the Dagster ones of `cdc-pipelines`)."""

import sys

from cdc_pipelines.cli.commands import main

sys.exit(main())
