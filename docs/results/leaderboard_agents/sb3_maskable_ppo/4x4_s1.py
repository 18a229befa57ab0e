"""examples/sb3_self_play.py --rules scarne:ranks=4 --seed 1: its greedy policy; its layers in 4x4_s1.npz."""
from agents.exported import load

agent = load(__file__, "4x4_s1.npz", sha256="88a05672cf19a5676855babe17841498577f0419c4bac39e7e99e9ed0299e9b3")
