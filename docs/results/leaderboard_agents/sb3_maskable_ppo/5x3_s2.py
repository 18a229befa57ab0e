"""examples/sb3_self_play.py --rules scarne:ranks=5 --seed 2: its greedy policy; its layers in 5x3_s2.npz."""
from agents.exported import load

agent = load(__file__, "5x3_s2.npz", sha256="4b80b6371604d1e23411e756965249dfe30129c0f4af8f03b03582c23608bdaa")
