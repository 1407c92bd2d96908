"""Playing one match: its description, the bot sessions, the referee, the replay."""
