"""A headless StarCraft II API server that plays the pysc2 mini-games.

Parts: ``server`` (websocket transport, the game binary's flags), ``session`` (the API
state machine), ``world`` (simulation) with ``units`` (the live unit records), ``maps``
(one module per mini-game), ``commands`` (actions), ``render``/``observe``
(observations), ``static_data`` (``RequestData``), ``gamedata`` (the game's numbers: build,
clock, ability ids, unit stats) and ``install`` (a StarCraft II-like folder so pysc2
launches the emulator unchanged). It imports nothing else of sc2dask.
"""
