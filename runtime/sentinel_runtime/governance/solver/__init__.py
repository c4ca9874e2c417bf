"""Prove a symbolic goal against a rulebase, a session's facts and data tools (the contract:
docs/contracts.md, "Governed tool calls"; docs/governed-tool-calls.md tells how a proof
runs).

Stateless per call. A call runs *passes*: each pass is a synchronous SLD resolution with
backtracking over the facts known at its start (rules, stored facts, valid tool answers). A
goal whose data must come from a tool (a bound base predicate whose inputs are ground and
whose last answer is missing or expired) fails in that pass and is noted as a pending call;
the pass goes on, so every independent branch notes its own calls: other rule alternatives by
backtracking, and the later goals of a conjunction that share no unbound variable with the
blocked one by looking ahead. Between passes all noted calls run concurrently (asyncio), their
results become facts, and the next pass starts. Data that depends on earlier data is fetched
in later passes; independent data in the same one. Re-running a pass is cheap: no tool I/O.

Recursion is tabled (linear tabling: a goal that is a variant of one being solved reads that
goal's answers so far, and the leader re-runs until no new answer appears), so left, right
and mutual recursion terminate, cycles included. Negation is negation as failure on
stratified rules (the rulebase rejects others); it only concludes once the data it reads is
fetched. An askable predicate not yet answered by the user is *assumed* so the rest of the
proof (and its tool calls) goes on: a proof that needs assumptions is not a proof but tells
which questions would unblock it, and since passes fetch data first, tools come before
questions. Bounds: depth, tool calls, wall time and resolution steps, each a clear result.

Modules: ``driver`` (:func:`solve`: the passes and the tool calls between them), ``search``
(one pass), ``terms`` (run-time variables, the compiled rulebase), ``proofs`` (proof nodes to
trace steps and stored derived facts), ``results`` (what a proof returns, the shared budget).
"""

from sentinel_runtime.governance.solver.driver import resolve_goal, solve
from sentinel_runtime.governance.solver.results import (
    Answer,
    Blocker,
    Budget,
    Invoker,
    Result,
    Status,
    Step,
)

__all__ = [
    "Answer",
    "Blocker",
    "Budget",
    "Invoker",
    "Result",
    "Status",
    "Step",
    "resolve_goal",
    "solve",
]
