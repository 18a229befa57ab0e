"""examples/cleanrl_ppo.py --rules scarne:ranks=4 --seed 0: its greedy policy; its layers in 4x4_s0.npz."""
from agents.exported import load

agent = load(__file__, "4x4_s0.npz", sha256="faf4566680a767ec91996e76dc7f8cdd5c8d9517227d44f293a570d0aa42b90b")
