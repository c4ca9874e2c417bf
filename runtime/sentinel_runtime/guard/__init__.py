"""Guard models as judges: a dedicated safety classifier served beside the main model.

``families`` know each model family's request format and reply grammar (pure functions over
``types``); ``client`` makes the HTTP call; ``breaker`` stops calling a dead endpoint;
``judge`` puts them together under a timeout, with metrics; ``config`` is the policy's
``guard:`` section and the ``GUARD_*`` environment under it. The pipeline's cascade
(``pipeline.understand.guarded``) and the application layer's answer check
(``answer.answer_guard``) call a ``judge.GuardJudge``; this package knows neither.
"""
