"""examples/sb3_self_play.py --rules scarne:ranks=5 --seed 1: its greedy policy; its layers in 5x3_s1.npz."""
from agents.exported import load

agent = load(__file__, "5x3_s1.npz", sha256="f935c36accd45c2fdf2e938535cae978194569e39a437ea733d63dae74d61105")
