"""examples/sb3_self_play.py --rules scarne:ranks=4 --seed 0: its greedy policy; its layers in 4x3_s0.npz."""
from agents.exported import load

agent = load(__file__, "4x3_s0.npz", sha256="e1c558e030e7bc9f5fab074d4e009d831c9aa8f66a3b647471b69720e42b72dc")
