"""examples/torchrl_ppo.py --rules scarne:ranks=4 --seed 0: its greedy policy; its layers in 4x4_s0.npz."""
from agents.exported import load

agent = load(__file__, "4x4_s0.npz", sha256="7e3827041ff979f20685f1edf2c9625ebc665253e73221a6ec6ffc708e1a09df")
