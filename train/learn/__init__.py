"""Jobs that train: PPO and distillation (train_ppo, distill), resume points, the live policy, model conversion."""
