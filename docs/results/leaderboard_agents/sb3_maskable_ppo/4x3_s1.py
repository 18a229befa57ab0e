"""examples/sb3_self_play.py --rules scarne:ranks=4 --seed 1: its greedy policy; its layers in 4x3_s1.npz."""
from agents.exported import load

agent = load(__file__, "4x3_s1.npz", sha256="33fed4bbcd78974fa18207545010e97bfa93d4cb038a2ce333e60a9d5b716d80")
