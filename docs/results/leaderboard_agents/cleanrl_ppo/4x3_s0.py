"""examples/cleanrl_ppo.py --rules scarne:ranks=4 --seed 0: its greedy policy; its layers in 4x3_s0.npz."""
from agents.exported import load

agent = load(__file__, "4x3_s0.npz", sha256="6eaadcc62c8e1d707e7f0e65578cf88641bb1297a7100756892e04b5db032462")
