"""Graph -> plan: the planner (choices, candidates and their costs, the search, the walk that
emits plan ops) and its passes (`plan-ops`, `plan-decide`, `plan-materialize`)."""
