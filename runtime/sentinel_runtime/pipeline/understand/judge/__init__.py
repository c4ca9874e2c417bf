"""The built-in judge: a small learned classifier over word and character n-grams."""
