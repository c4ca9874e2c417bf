"""The policy file's ``tools`` section as a :class:`Rulebase`: parsed, checked, cached.

``model`` holds what a rulebase is (frozen data classes and the errors), ``build`` parses the
section into one (and keeps one per policy hash: :func:`for_policy`), ``checks`` holds the
static checks of rules, guards and goals, and ``locate`` gives each problem its line and column
in the policy file. Importers use the names re-exported here.

The section (keys camelCase or snake_case)::

    tools:
      strict: false              # true: every tool argument must be a value established by facts
      baseUrl: http://127.0.0.1:8765   # joined with relative function urls
      defaultTtl: 300            # seconds a tool-derived fact stays valid (null: the session)
      ttl: {flight_status: 60}   # per predicate; a binding's own `ttl` wins
      limits: {maxDepth: 64, maxToolCalls: 32, timeout: 10}
      contexts:                  # rebindable names usable in queries and guards
        booking_of_interest: The booking the conversation is about.
      facts: [current_user(User)]          # predicates seeded or asserted by the application
      askable:                   # established by asking the user; {Var} is filled in
        user_confirms_refund(User, Booking): Do you want a refund for booking {Booking}?
      functions:                 # the tools, as OpenAI function schemas plus a transport
        get_flight:
          description: Status of a flight.
          parameters: {type: object, properties: {flight_id: {type: string}}}
          url: /tools/get_flight           # POST JSON arguments, JSON result
      bindings:                  # which data tool establishes which base predicate
        - fact: flight_status(Flight, Status)
          tool: get_flight
          args: {flight_id: Flight}        # inputs: bound before the call
          extract: {Status: $.status}      # outputs: JSON paths into the result
          each: $.legs[*]                  # optional: one fact per item
          when: $.active                   # optional: only items where this is truthy
          ttl: 60
        - fact: refunded(Booking)
          tool: refund_booking             # an action: its result is recorded when it runs,
          args: {booking_id: Booking}
          when: $.refunded
          fetch: false                     # but the solver never calls it to find out
      guards:                    # preconditions per tool; call arguments bind variables
        refund_booking:
          args: {booking_id: Booking}
          requires:
            - eligible_for_refund(current_user, Booking)
            - user_confirms_refund(current_user, Booking)
      rules: |
        eligible_for_refund(User, Booking) :-
            booking_owner(Booking, User), booking_flight(Booking, Flight),
            flight_status(Flight, cancelled), not refunded(Booking).

A bad section raises :class:`RulebaseError` listing every problem found, each with a line and
column: of the policy file when the file's text is given (``source``), else within the
offending string (the rules block, a pattern) with the section path.
"""

from __future__ import annotations

from sentinel_runtime.governance.rulebase.build import for_policy, parse_rulebase
from sentinel_runtime.governance.rulebase.checks import compile_goal, order_literals
from sentinel_runtime.governance.rulebase.model import (
    Askable,
    Binding,
    Function,
    GoalError,
    Guard,
    Issue,
    Limits,
    Rulebase,
    RulebaseError,
)

__all__ = [
    "Askable",
    "Binding",
    "Function",
    "GoalError",
    "Guard",
    "Issue",
    "Limits",
    "Rulebase",
    "RulebaseError",
    "compile_goal",
    "for_policy",
    "order_literals",
    "parse_rulebase",
]
