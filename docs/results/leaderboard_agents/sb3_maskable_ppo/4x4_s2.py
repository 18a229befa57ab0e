"""examples/sb3_self_play.py --rules scarne:ranks=4 --seed 2: its greedy policy; its layers in 4x4_s2.npz."""
from agents.exported import load

agent = load(__file__, "4x4_s2.npz", sha256="06bac427c06bf8e1f15b8ab497beb34d00c235b4b7d66e59a9dfc34b090a039a")
