"""examples/tianshou_dqn.py --rules scarne:ranks=4 --seed 1: its greedy policy; its layers in 4x3_s1.npz."""
from agents.exported import load

agent = load(__file__, "4x3_s1.npz", sha256="d28f89e7ed8909f01e2a2de24dbb3bce91eac9aea427941e80c5b93b470e70ed")
