"""examples/cleanrl_ppo.py --rules scarne:ranks=4 --seed 1: its greedy policy; its layers in 4x3_s1.npz."""
from agents.exported import load

agent = load(__file__, "4x3_s1.npz", sha256="c033d4ac45dd11747647bc851f7fadf5b79d059905170774bb8904e0015e2fb6")
