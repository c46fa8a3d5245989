"""Agents: the FullyConv A2C policy and learner (``a2c``), its network (``fullyconv``) and
the observation and action spaces they share (``spaces``) and its hyperparameters
(``config``), both importable without TensorFlow.
"""
