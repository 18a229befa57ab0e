"""Command-line jobs (``python -m train.<job>``), in four rooms:

- :mod:`train.learn`: training (``train_ppo``, distillation, resume points, model conversion);
- :mod:`train.measure`: measuring strength (``evaluate``, ``ladder``, ``matrix``, ``mixed``, ``behaviour``,
  ``oracle``);
- :mod:`train.speed`: measuring speed (``bench_aec``, ``bench_batch``);
- :mod:`train.playing`: playing (``play`` in the terminal, ``serve`` in the browser).

What they share sits here: the flags (``cli``), paired deals (``paired``), the folders a job owns
(``run_folder``, ``manifest``, ``results_folder``). ``train.main`` is the main job: train, then benchmark.
Each ``train/<job>.py`` is a thin entry that runs the job's module.
"""
