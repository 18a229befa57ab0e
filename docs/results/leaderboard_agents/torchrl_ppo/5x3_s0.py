"""examples/torchrl_ppo.py --rules scarne:ranks=5 --seed 0: its greedy policy; its layers in 5x3_s0.npz."""
from agents.exported import load

agent = load(__file__, "5x3_s0.npz", sha256="e013c5f9a609fdc3928b16e7a2b4ed44f8be366b012d97061ad750c3e8c92916")
