"""examples/cleanrl_ppo.py --rules scarne:ranks=4 --seed 1: its greedy policy; its layers in 4x4_s1.npz."""
from agents.exported import load

agent = load(__file__, "4x4_s1.npz", sha256="89af5ebcbf5a87638556fdf2edc8060dbd9d35f52f8e134a20bb4aa7d3a809a4")
