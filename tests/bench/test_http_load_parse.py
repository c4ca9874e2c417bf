"""bench/http_load.py's reading of wrk's output, on output captured from wrk 4.1.0 (Debian's
package) running the bench's own Lua script; no timing is asserted."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import http_load

# wrk -t2 -c32 -d4s --timeout 10s --latency -s chat.lua: the default-policy server.
DEFAULT_POLICY_32 = """\
Running 4s test @ http://127.0.0.1:44131/v1/chat/completions
  2 threads and 32 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   150.72ms  115.09ms 725.83ms   87.33%
    Req/Sec   120.90     59.60   220.00     61.11%
  Latency Distribution
     50%  115.23ms
     75%  194.55ms
     90%  298.04ms
     99%  581.99ms
  919 requests in 4.06s, 1.33MB read
Requests/sec:    226.45
Transfer/sec:    336.11KB
bench: requests 919 duration_us 4058297 bytes 1396787
bench: errors connect 0 read 0 write 0 status 0 timeout 0
bench: latency_us min 31533 mean 150720.0 max 725833 stdev 115089.1
bench: percentile_us 50 115232
bench: percentile_us 75 194551
bench: percentile_us 90 298039
bench: percentile_us 99 581987
bench: percentile_us 99.9 695558
bench: percentile_us 99.99 725833
"""

# wrk -t1 -c1 -d1s ... against a route Sentinel does not have: every answer a 404.
NOT_FOUND_1 = """\
Running 1s test @ http://127.0.0.1:39139/v1/no-such-route
  1 threads and 1 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   538.61us    2.10ms  24.91ms   97.76%
    Req/Sec     3.92k   306.32     4.16k    90.91%
  Latency Distribution
     50%  240.00us
     75%  247.00us
     90%  278.00us
     99%   13.65ms
  4287 requests in 1.10s, 0.97MB read
  Non-2xx or 3xx responses: 4287
Requests/sec:   3898.42
Transfer/sec:      0.88MB
bench: requests 4287 duration_us 1099677 bytes 1016152
bench: errors connect 0 read 0 write 0 status 4287 timeout 0
bench: latency_us min 222 mean 538.6 max 24909 stdev 2100.7
bench: percentile_us 50 240
bench: percentile_us 75 247
bench: percentile_us 90 278
bench: percentile_us 99 13645
bench: percentile_us 99.9 23885
bench: percentile_us 99.99 24909
"""

# wrk -t1 -c1 -d6s ... with the --tail script (raw=True): guardrails off, one gen2 collection.
RAW_OFF_1 = """\
Running 6s test @ http://127.0.0.1:51407/v1/chat/completions
  1 threads and 1 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     2.36ms    6.99ms  82.56ms   97.68%
    Req/Sec   702.40    108.45   808.00     93.33%
  Latency Distribution
     50%    1.33ms
     75%    1.41ms
     90%    1.54ms
     99%   47.24ms
  4200 requests in 6.01s, 5.50MB read
Requests/sec:    699.18
Transfer/sec:      0.92MB
bench: requests 4200 duration_us 6007033 bytes 5770453
bench: errors connect 0 read 0 write 0 status 0 timeout 0
bench: latency_us min 1151 mean 2363.6 max 82564 stdev 6994.3
bench: raw_requests 4200 max_us 82591
bench: raw_percentile_us 50 1335
bench: raw_percentile_us 75 1402
bench: raw_percentile_us 90 1498
bench: raw_percentile_us 99 2768
bench: raw_percentile_us 99.9 5329
bench: raw_percentile_us 99.99 82591
bench: percentile_us 50 1333
bench: percentile_us 75 1406
bench: percentile_us 90 1541
bench: percentile_us 99 47243
bench: percentile_us 99.9 76844
bench: percentile_us 99.99 82564
"""


def test_reads_requests_duration_and_percentiles_in_microseconds() -> None:
    result = http_load.parse_wrk(DEFAULT_POLICY_32)
    assert result.requests == 919
    assert result.seconds == pytest.approx(4.058297)
    assert result.rps == pytest.approx(919 / 4.058297)
    assert result.reported_rps == pytest.approx(226.45)
    assert result.percentiles_us == {
        50.0: 115232,
        75.0: 194551,
        90.0: 298039,
        99.0: 581987,
        99.9: 695558,
        99.99: 725833,
    }
    assert result.ms(99.0) == pytest.approx(581.987)
    assert result.mean_us == pytest.approx(150720.0)
    assert result.max_us == 725833
    assert result.errors == {"connect": 0, "read": 0, "write": 0, "status": 0, "timeout": 0}
    assert result.failures() == {}
    assert http_load.describe_failures([result]) == "0"


def test_the_done_lines_agree_with_wrk_s_own_summary() -> None:
    result = http_load.parse_wrk(DEFAULT_POLICY_32)
    # wrk prints the same percentiles rounded ("95.57ms") in its Latency Distribution.
    for percentile, shown in re.findall(r"^\s+(\d+)%\s+([\d.]+)ms$", DEFAULT_POLICY_32, re.M):
        assert result.ms(float(percentile)) == pytest.approx(float(shown), abs=0.01)
    assert result.rps == pytest.approx(result.reported_rps, rel=0.001)


def test_non_2xx_answers_count_as_failures_once() -> None:
    result = http_load.parse_wrk(NOT_FOUND_1)
    assert result.non_2xx == 4287
    assert result.errors["status"] == 4287  # wrk's status errors are the same answers
    assert result.failures() == {"non-2xx": 4287}
    assert http_load.describe_failures([result, result]) == "8574 (non-2xx 8574)"


def test_output_without_the_scripts_lines_is_refused() -> None:
    plain = NOT_FOUND_1.split("bench:", maxsplit=1)[0]
    with pytest.raises(ValueError, match="Lua script"):
        http_load.parse_wrk(plain)


def test_the_lua_script_posts_the_bench_request(tmp_path: Path) -> None:
    script = http_load.write_wrk_script(tmp_path / "chat.lua").read_text()
    body = re.search(r"wrk.body = \[\[(.*)\]\]", script)
    assert body is not None
    assert json.loads(body.group(1)) == http_load.REQUEST_BODY
    assert "index_name" not in http_load.REQUEST_BODY
    assert 'wrk.headers["Content-Type"] = "application/json"' in script
    assert 'wrk.method = "POST"' in script


def test_py_spy_raw_stacks_give_own_time_per_function() -> None:
    raw = (
        "<module> (x.py:1);run (a.py:10);handle (h11/_conn.py:5) 30\n"
        "<module> (x.py:1);run (a.py:10);handle (h11/_conn.py:7) 10\n"
        "<module> (x.py:1);run (a.py:10) 20\n"
    )
    top, total = http_load.top_own_time(raw)
    assert total == 60
    assert top == [("handle (h11/_conn.py)", 40), ("run (a.py)", 20)]


def test_py_spy_thread_frames_count_per_thread_not_as_functions() -> None:
    # py-spy record --threads --format raw: the first frame names the thread.
    raw = (
        "thread (24403): MainThread;run (asyncio/base_events.py:607);"
        "write (asyncio/selector_events.py:1071) 83\n"
        "thread (24627): AnyIO worker thread;run (anyio/_backends/_asyncio.py:1113);"
        "wait (threading.py:327) 17\n"
    )
    found = http_load.read_profile(raw)
    assert found.total == 100
    assert found.threads == {"MainThread": 83, "AnyIO worker thread": 17}
    assert found.own == {
        "write (asyncio/selector_events.py)": 83,
        "wait (threading.py)": 17,
    }
    assert found.packages == {"asyncio": 83, "threading": 17}


def test_py_spy_frames_of_the_runtime_count_per_subpackage() -> None:
    raw = (
        "app (sentinel_runtime/api/app.py:3);"
        "vectorise (sentinel_runtime/pipeline/judge/features.py:74) 5\n"
        "send (/w/.venv/lib/python3.11/site-packages/anyio/_backends/_asyncio.py:1) 2\n"
    )
    found = http_load.read_profile(raw)
    assert found.packages == {"sentinel_runtime.pipeline": 5, "anyio": 2}
    assert found.callers["vectorise (sentinel_runtime/pipeline/judge/features.py)"] == {
        "app (sentinel_runtime/api/app.py)": 5
    }
    assert (
        http_load._short("send (/w/.venv/lib/python3.11/site-packages/anyio/_backends/_asyncio.py)")
        == "send (anyio/_backends/_asyncio.py)"
    )


def test_py_spy_callers_of_a_function_are_the_two_frames_above_it() -> None:
    raw = (
        "main (m.py:1);get_async_backend (anyio/_core/_eventloop.py:197);"
        "current_async_library (sniffio/_impl.py:82);current_task (asyncio/tasks.py:38) 3\n"
        "main (m.py:1);current_task (asyncio/tasks.py:38) 1\n"
        "current_task (asyncio/tasks.py:38) 1\n"
    )
    found = http_load.read_profile(raw)
    chain = (
        "current_async_library (sniffio/_impl.py) <- get_async_backend (anyio/_core/_eventloop.py)"
    )
    assert found.callers["current_task (asyncio/tasks.py)"] == {
        chain: 3,
        "main (m.py)": 1,
        "(top)": 1,
    }


def test_the_tail_script_s_own_timings_are_read_beside_wrk_s_corrected_ones() -> None:
    result = http_load.parse_wrk(RAW_OFF_1)
    assert result.requests == result.raw_requests == 4200
    assert result.raw_percentiles_us[50.0] == 1335
    assert result.raw_percentiles_us[99.0] == 2768
    assert result.raw_max_us == 82591
    # wrk's coordinated-omission correction turns one 82 ms stall into its p99.
    assert result.percentiles_us[99.0] == 47243
    assert result.mean_us * result.requests / 1e6 > result.seconds


def test_the_raw_script_times_requests_itself(tmp_path: Path) -> None:
    script = http_load.write_wrk_script(tmp_path / "raw.lua", raw=True).read_text()
    assert "function request()" in script
    assert "function response(" in script
    assert script.index("raw_done()\n  for _, p in ipairs(") > script.index("function done(")
    plain = http_load.write_wrk_script(tmp_path / "plain.lua").read_text()
    assert "function response(" not in plain
    assert "raw_done" not in plain


@pytest.mark.parametrize(("text", "levels"), [("1", (1,)), ("1,32", (1, 32)), ("32,1", (32, 1))])
def test_tail_connection_levels_are_read(text: str, levels: tuple[int, ...]) -> None:
    assert http_load._levels(text) == levels


@pytest.mark.parametrize("text", ["", "0", "1,-3", "one", "1,,2"])
def test_bad_tail_connection_levels_are_refused_by_name(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="connection counts"):
        http_load._levels(text)
