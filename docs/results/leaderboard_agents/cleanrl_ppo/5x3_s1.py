"""examples/cleanrl_ppo.py --rules scarne:ranks=5 --seed 1: its greedy policy; its layers in 5x3_s1.npz."""
from agents.exported import load

agent = load(__file__, "5x3_s1.npz", sha256="2f340c18508d34de5e5fa9105e62ecc67ef465018b1e53a5839969ee481dc6f7")
