"""Tilemap -> exchange: phase scheduling (`schedule-exchange` and its schedulers), storage
placement (`place-storage`), and the refined cycle estimate of scheduled functions."""
