"""Text signals that more than one stage reads: harm (``harm`` over ``harm_lexicon``,
``harm_regex`` and ``harm_scan``) and instructions aimed at the model (``injection`` over
``injection_lexicon``). The request judge asks them about the user's prompt, the evidence
filter about each chunk, the generator about its own sentences. Pure functions over text;
they import no stage.
"""
