"""A headless StarCraft II API server that plays the pysc2 mini-games.

Parts: ``server`` (websocket transport, the game binary's flags), ``session`` (the API
state machine), ``world`` (simulation), ``maps`` (one module per mini-game),
``commands`` (actions), ``render``/``observe`` (observations) and ``install`` (a
StarCraft II-like folder so pysc2 launches the emulator unchanged). It never imports
sc2dask's training code.
"""
