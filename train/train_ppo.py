"""``python -m train.train_ppo``: the job lives in :mod:`train.learn.train_ppo` (see its ``--help``)."""

import sys

from .learn import train_ppo as _job

if __name__ == "__main__":
    _job.main()
else:  # importing train.train_ppo gives the job's module itself, so patches and attributes reach the code
    sys.modules[__name__] = _job
