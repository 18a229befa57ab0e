"""examples/cleanrl_ppo.py --rules scarne:ranks=4 --seed 2: its greedy policy; its layers in 4x3_s2.npz."""
from agents.exported import load

agent = load(__file__, "4x3_s2.npz", sha256="11d54df0867126bdd0f8f79d3b13ae9152d7ba23ae747ce6091da081299c6b02")
