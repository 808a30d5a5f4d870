"""Run execution: the arq actor, the embedded pool and the schedules."""
