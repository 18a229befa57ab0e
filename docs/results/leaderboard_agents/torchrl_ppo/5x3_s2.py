"""examples/torchrl_ppo.py --rules scarne:ranks=5 --seed 2: its greedy policy; its layers in 5x3_s2.npz."""
from agents.exported import load

agent = load(__file__, "5x3_s2.npz", sha256="27b7a086887253fcae70825a2cf01d9177490bb7872d835f0de94d7d4badcd90")
