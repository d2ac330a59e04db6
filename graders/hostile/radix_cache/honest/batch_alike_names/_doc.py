"""Honest baseline of batch_alike_names: the same entries under names that cannot collide
(sorted, they pair with the attack's entries one to one)."""
