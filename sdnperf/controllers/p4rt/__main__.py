import sys

from sdnperf.controllers.p4rt.controller import main

sys.exit(main())
