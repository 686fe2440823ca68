"""Pure metric functions: arrays in, a float out; no file reading, no submission checks."""
