"""examples/torchrl_ppo.py --rules scarne:ranks=4 --seed 1: its greedy policy; its layers in 4x3_s1.npz."""
from agents.exported import load

agent = load(__file__, "4x3_s1.npz", sha256="4a9149ad025561d6e281de93a6da6dd2131704280f54a891076222926df20078")
