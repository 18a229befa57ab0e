"""examples/tianshou_dqn.py --rules scarne:ranks=4 --seed 0: its greedy policy; its layers in 4x4_s0.npz."""
from agents.exported import load

agent = load(__file__, "4x4_s0.npz", sha256="f1195d7fa7e38f16abbacc4769f1c54a65790f14c1f5cafab2f9208a6a47c1c0")
