"""Agents: the building blocks any agent may use, and the built-in FullyConv A2C.

``spaces`` (``ObservationEncoder``, ``ActionSet``: what an agent sees and does) imports no
TensorFlow. ``fullyconv_a2c`` is the default agent class, ``a2c`` its policy and learner,
``fullyconv`` its network and ``config`` its hyperparameters; ``relational_a2c`` is the
relational agent (``relational``: its network, on FullyConv's parts). Other code names an
agent by its class path (``sc2dask.agents.loading``), never by import.
"""

from .spaces import ActionSet, ObservationEncoder

__all__ = ["ActionSet", "ObservationEncoder"]
