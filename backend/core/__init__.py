"""The pure domain: no IO, no clock, no randomness — those arrive through `ports`."""
