"""Python side of tangle: capturing graphs from PyTorch programs (no verification logic here)."""
