"""Command-line jobs: one file per job, run as ``python -m train.<job>``.

- training: ``train_ppo``, ``convert_model``, ``curves`` (its library, one concern per module, in
  :mod:`train.learn`: settings, critics, the opponent pool, callbacks, checkpoints, distillation, resume points);
- measuring strength: ``evaluate``, ``ladder``, ``matrix``, ``mixed``, ``behaviour``, ``oracle``, ``exploit``,
  ``league``;
- measuring speed: ``bench_aec``, ``bench_batch``;
- playing: ``play`` in the terminal, ``serve`` in the browser (its page in ``web/``).

What they share sits here: the flags (``cli``), paired deals (``paired``), the folders a job owns
(``run_folder``, ``manifest``, ``results_folder``). ``train.main`` is the main job: train, then benchmark.
"""
