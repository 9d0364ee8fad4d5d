"""Layout and plan sweeps: many (model, target, pipeline options) configurations, each compiled and
emulated in its own worker, collected into one resumable table."""
