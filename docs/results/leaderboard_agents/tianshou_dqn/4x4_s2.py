"""examples/tianshou_dqn.py --rules scarne:ranks=4 --seed 2: its greedy policy; its layers in 4x4_s2.npz."""
from agents.exported import load

agent = load(__file__, "4x4_s2.npz", sha256="88a52ac5972e1ec6dd53e702602abf559dd876594eeebbd504b0119d078f3278")
