"""examples/tianshou_dqn.py --rules scarne:ranks=4 --seed 0: its greedy policy; its layers in 4x3_s0.npz."""
from agents.exported import load

agent = load(__file__, "4x3_s0.npz", sha256="2cd64249cb79c6c7aa92a6de9b234aa7476e03919b6ef762e097f0029431edef")
