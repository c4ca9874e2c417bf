"""The bundled demo corpus that ``sentinel serve`` indexes on embedded defaults."""
