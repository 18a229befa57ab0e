"""examples/torchrl_ppo.py --rules scarne:ranks=4 --seed 2: its greedy policy; its layers in 4x4_s2.npz."""
from agents.exported import load

agent = load(__file__, "4x4_s2.npz", sha256="172e42886db30335aa2bd1682334dd03c1d7e0cb39b4ddca21de8d1dbff42bec")
