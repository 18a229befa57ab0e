"""examples/cleanrl_ppo.py --rules scarne:ranks=5 --seed 2: its greedy policy; its layers in 5x3_s2.npz."""
from agents.exported import load

agent = load(__file__, "5x3_s2.npz", sha256="5ce5e8a1abe6f5db420da66f3819a4f2bbce4efb90ac061c1984810e8c909914")
