"""Answer generators: the OpenAI-compatible upstream client and the built-in generator."""
