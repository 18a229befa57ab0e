"""Jobs that measure speed: the AEC loop against PettingZoo's connect_four (``bench_aec``) and the compiled
engine, the VecEnv and PPO's timesteps per second (``bench_batch``)."""
