"""examples/sb3_self_play.py --rules scarne:ranks=4 --seed 2: its greedy policy; its layers in 4x3_s2.npz."""
from agents.exported import load

agent = load(__file__, "4x3_s2.npz", sha256="9aee9179562d039619035b394db494e0ec56dfc9af6eb50c228d984c4045e498")
