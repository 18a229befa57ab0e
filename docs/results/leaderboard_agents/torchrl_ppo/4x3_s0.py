"""examples/torchrl_ppo.py --rules scarne:ranks=4 --seed 0: its greedy policy; its layers in 4x3_s0.npz."""
from agents.exported import load

agent = load(__file__, "4x3_s0.npz", sha256="a450f9c98894fe444ef18d17a82b7bf27d74d019d83857bbdff97331612c60db")
