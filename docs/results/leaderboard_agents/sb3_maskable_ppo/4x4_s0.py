"""examples/sb3_self_play.py --rules scarne:ranks=4 --seed 0: its greedy policy; its layers in 4x4_s0.npz."""
from agents.exported import load

agent = load(__file__, "4x4_s0.npz", sha256="76351574a7f781265c07898c09f37cb8fdd1c04d03bec924904834c44293f663")
