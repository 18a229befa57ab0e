"""examples/torchrl_ppo.py --rules scarne:ranks=4 --seed 1: its greedy policy; its layers in 4x4_s1.npz."""
from agents.exported import load

agent = load(__file__, "4x4_s1.npz", sha256="d8258a7f6f91abb1355fa94228f66056f7c8cce06f1716a9cfb89912a9655d1a")
