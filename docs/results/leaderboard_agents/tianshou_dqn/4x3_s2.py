"""examples/tianshou_dqn.py --rules scarne:ranks=4 --seed 2: its greedy policy; its layers in 4x3_s2.npz."""
from agents.exported import load

agent = load(__file__, "4x3_s2.npz", sha256="550411839053e46da864b699c8446a320c1e700a6542d17708641923dfa0fa87")
