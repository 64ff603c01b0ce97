"""`python -m ci_checks_checkpoint`, also the entry point of each rank under torchrun."""

import sys

from ci_checks_checkpoint import main

# The guard matters: DCP's process checkpointer and Megatron-Core's writer start helpers with
# multiprocessing's spawn method, which imports this module again under another name.
if __name__ == "__main__":
    sys.exit(main())
