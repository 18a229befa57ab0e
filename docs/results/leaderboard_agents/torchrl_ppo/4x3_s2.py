"""examples/torchrl_ppo.py --rules scarne:ranks=4 --seed 2: its greedy policy; its layers in 4x3_s2.npz."""
from agents.exported import load

agent = load(__file__, "4x3_s2.npz", sha256="12939b89700be5bc02ed105fa7acd2f21fd0676aa89207164369470a453d2dba")
