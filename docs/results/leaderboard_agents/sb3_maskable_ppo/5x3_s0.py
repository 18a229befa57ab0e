"""examples/sb3_self_play.py --rules scarne:ranks=5 --seed 0: its greedy policy; its layers in 5x3_s0.npz."""
from agents.exported import load

agent = load(__file__, "5x3_s0.npz", sha256="446db2b5f6217d17a111fa19f784a34a17e1f82993b2a72a145e2f779223f08b")
