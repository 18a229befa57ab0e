"""examples/cleanrl_ppo.py --rules scarne:ranks=5 --seed 0: its greedy policy; its layers in 5x3_s0.npz."""
from agents.exported import load

agent = load(__file__, "5x3_s0.npz", sha256="284a908975f7236de28790fd25917a6a3b7005c3c61bc5bf3d81395505e9c368")
