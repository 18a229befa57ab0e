"""examples/tianshou_dqn.py --rules scarne:ranks=5 --seed 1: its greedy policy; its layers in 5x3_s1.npz."""
from agents.exported import load

agent = load(__file__, "5x3_s1.npz", sha256="92203322a051b788f11126ccea5d998e001813260120ebe80acc1b450fe530db")
