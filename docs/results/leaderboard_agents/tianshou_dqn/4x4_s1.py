"""examples/tianshou_dqn.py --rules scarne:ranks=4 --seed 1: its greedy policy; its layers in 4x4_s1.npz."""
from agents.exported import load

agent = load(__file__, "4x4_s1.npz", sha256="324a242a952de953f4172333ba7a7f2f2b6fae209c42865583a80e8818aa8c38")
