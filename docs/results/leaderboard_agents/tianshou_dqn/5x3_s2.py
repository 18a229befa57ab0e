"""examples/tianshou_dqn.py --rules scarne:ranks=5 --seed 2: its greedy policy; its layers in 5x3_s2.npz."""
from agents.exported import load

agent = load(__file__, "5x3_s2.npz", sha256="ddfca326780e1961e94177d08fe91b7b9b01b93c12d053a36d809c74e4760842")
