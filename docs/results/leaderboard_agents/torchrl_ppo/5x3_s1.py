"""examples/torchrl_ppo.py --rules scarne:ranks=5 --seed 1: its greedy policy; its layers in 5x3_s1.npz."""
from agents.exported import load

agent = load(__file__, "5x3_s1.npz", sha256="ac90756d203a7a30fc6544cf1fd8bb809e6016b0adfe9864a36352f5442b22f8")
