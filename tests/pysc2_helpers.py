"""Small helpers for tests that drive real pysc2 environments against the emulator."""

from sc2dask.game.pysc2lib import features, sc2_env


def make_env(map_name, screen=64, minimap=64, raw=False, feature_units=False, **kwargs):
    """An unmodified pysc2 SC2Env; ``players`` defaults to one Terran agent."""
    aif = sc2_env.AgentInterfaceFormat(
        feature_dimensions=features.Dimensions(screen=screen, minimap=minimap),
        use_feature_units=feature_units,
        use_raw_units=raw,
        use_raw_actions=raw,
    )
    kwargs.setdefault("step_mul", 8)
    kwargs.setdefault("players", [sc2_env.Agent(sc2_env.Race.terran)])
    return sc2_env.SC2Env(
        map_name=map_name,
        agent_interface_format=aif,
        **kwargs,
    )


def play(env, agent, episodes):
    """Run ``episodes`` whole episodes; returns [(score, agent_steps, last_timestep)]."""
    agent.setup(env.observation_spec()[0], env.action_spec()[0])
    results = []
    for _ in range(episodes):
        timestep = env.reset()[0]
        agent.reset()
        score, steps = 0.0, 0
        while not timestep.last():
            timestep = env.step([agent.step(timestep)])[0]
            score += timestep.reward
            steps += 1
        results.append((score, steps, timestep))
    return results
