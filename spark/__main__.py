"""``python -m spark VERB``: the Spark side's verbs (spark.commands)."""

import sys

from spark.commands import main

sys.exit(main())
