"""examples/cleanrl_ppo.py --rules scarne:ranks=4 --seed 2: its greedy policy; its layers in 4x4_s2.npz."""
from agents.exported import load

agent = load(__file__, "4x4_s2.npz", sha256="3ff0c543d34c97b2e1b7f793bbfbca25f479cf42f0d1abd7a39ddf8f2d2fc372")
