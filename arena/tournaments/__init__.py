"""Many matches: schedules, plans, round robins, gauntlets, the ladder."""
