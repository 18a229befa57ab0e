"""examples/tianshou_dqn.py --rules scarne:ranks=5 --seed 0: its greedy policy; its layers in 5x3_s0.npz."""
from agents.exported import load

agent = load(__file__, "5x3_s0.npz", sha256="b7f4c4d7ba463b55ba78867d26f026d7fa465358bb6cd20835b9e334602673f4")
