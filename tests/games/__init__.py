"""Games that live outside the arena's source, as an organiser's would."""
