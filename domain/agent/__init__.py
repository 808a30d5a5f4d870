"""Runs and the agent: a run and its events, one browser episode, what the agent sees and may do, the guards, the judge
and its verdicts, the agent's releases, the line-up of models, and the ports they need."""
