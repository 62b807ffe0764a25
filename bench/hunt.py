#!/usr/bin/env python3
"""Executions to the first failure, per strategy, on weft's buggy samples.

For every sample whose manifest expects a failure, and every sampling
strategy, runs `weft explore` once per seed with a budget of executions and
prints the median and the largest number of executions to the first failure
(`-` when a seed found none: then the count of seeds that missed). The
systematic strategies (`dfs`, `dpor`) do not depend on a seed and run once,
with the same budget. Correct samples are run too, under every strategy
with fewer seeds and executions (`--correct-seeds`, `--correct-budget`:
under PCT, a spinning sample runs every execution to its step limit; `dfs`
and `dpor` keep the full budget, to show where they exhaust), and must
report nothing.

    python3 bench/hunt.py [--weft target/release/weft] [--seeds 20]
                          [--correct-seeds 3] [--budget 10000]
                          [--correct-budget 1000] [--time-limit 120]
                          [--only NAME ...] [--strategies NAME ...]
                          [--point-model MODEL] [--json OUT]

Each `weft explore` runs on one worker (`--jobs 1`); the script runs as
many of them at once as the machine has cores. Execution i of an
exploration gets the same schedule whatever the number of workers, so the
figures do not depend on the machine.
"""

import argparse
import concurrent.futures
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

SAMPLING = ["portfolio", "random", "pct", "pos", "surw"]
SYSTEMATIC = ["dfs", "dpor"]
ROOT = Path(__file__).resolve().parent.parent


def manifests(only):
    for path in sorted((ROOT / "samples").glob("*/sample.json")):
        name = path.parent.name
        if only and name not in only:
            continue
        yield name, json.loads(path.read_text())


def explore(weft, module, strategy, seed, budget, time_limit, point_model):
    """One exploration: (executions to the failure or None, executions run, kind)."""
    command = [
        weft, "explore", str(module), "--strategy", strategy, "--jobs", "1",
        "--iterations", str(budget), "--time-limit", f"{time_limit}s", "--json", "--no-save",
    ]
    if point_model:
        command += ["--point-model", point_model]
    if strategy not in SYSTEMATIC:
        command += ["--seed", str(seed)]
    out = subprocess.run(command, capture_output=True, text=True)
    if out.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(command)} exited {out.returncode}: {out.stderr.strip()}")
    result = json.loads(out.stdout)
    failure = result.get("failure")
    if failure is None:
        return None, result["executions"], search_end(result)
    return result["failing_execution_index"] + 1, result["executions"], failure["kind"]


def search_end(result):
    """How a systematic search that found nothing ended, as a table cell."""
    executions = result["executions"]
    if result.get("exhaustive"):
        return f"all {executions}"
    if result.get("bound_exhausted"):
        return f"all {executions} within the bound"
    if result.get("search_ended_without_claim"):
        return f"ended after {executions}, no claim"
    return None


def summary(runs, expect_kind, budget):
    """Median/max of the executions to the failure, and what went wrong."""
    found = [n for n, _, kind in runs if n is not None and kind == expect_kind]
    wrong = [kind for n, _, kind in runs if n is not None and kind != expect_kind]
    missed = sum(1 for n, _, _ in runs if n is None)
    timed_out = [ran for n, ran, end in runs if n is None and end is None and ran < budget]
    ended = sorted({end for n, _, end in runs if n is None and end is not None})
    if not found:
        text = "-"
    elif len(runs) == 1:
        text = str(found[0])
    else:
        text = f"{statistics.median(found):g}/{max(found)}"
    if missed:
        text += f" ({missed} missed)" if len(runs) > 1 else " (missed)"
    if timed_out:
        text += f" (time limit at {min(timed_out)}+)"
    if ended:
        text += f" ({'; '.join(ended)})"
    if wrong:
        text += f" [other failure: {', '.join(sorted(set(wrong)))}]"
    return text


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--weft", default=str(ROOT / "target/release/weft"))
    parser.add_argument("--samples", default=str(ROOT / "target/samples"))
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--correct-seeds", type=int, default=3)
    parser.add_argument("--budget", type=int, default=10000)
    parser.add_argument("--correct-budget", type=int, default=1000)
    parser.add_argument("--time-limit", type=int, default=120,
                        help="seconds per exploration (a spinning sample under dfs or dpor "
                             "runs every execution to its step limit)")
    parser.add_argument("--only", nargs="*", default=[])
    parser.add_argument("--strategies", nargs="*", default=SAMPLING + SYSTEMATIC,
                        help="the strategies to run (all by default)")
    parser.add_argument("--point-model", choices=["library-calls", "sync-internals"],
                        help="the point model of every exploration (each strategy's "
                             "default when not given)")
    parser.add_argument("--json", help="also write every run's figures here")
    args = parser.parse_args()

    jobs = []
    # The buggy samples first.
    manifests_by_name = dict(sorted(manifests(set(args.only)),
                                    key=lambda m: m[1]["expect"] != "failure"))
    for name, manifest in manifests_by_name.items():
        module = Path(args.samples) / f"{name}.wasm"
        if not module.exists():
            sys.exit(f"{module} is missing: build the samples first (./x samples)")
        for strategy in args.strategies:
            if strategy in SYSTEMATIC:
                seeds = [0]
            elif manifest["expect"] == "failure":
                seeds = range(args.seeds)
            else:
                seeds = range(args.correct_seeds)
            for seed in seeds:
                budget = args.correct_budget
                if manifest["expect"] == "failure" or strategy in SYSTEMATIC:
                    budget = args.budget
                jobs.append((name, module, strategy, seed, budget))

    columns = args.strategies
    print(f"executions to the first failure: median/max of {args.seeds} seeds, "
          f"budget {args.budget} (dfs and dpor: one run; correct samples: "
          f"{args.correct_seeds} seeds of {args.correct_budget} executions, "
          f"`ok` when none reported a failure, "
          f"`all N` when dfs or dpor explored every schedule (dfs: within its "
          f"preemption bound of 2); each exploration stops "
          f"after {args.time_limit} s)", flush=True)
    header = ["sample", "expect"] + columns
    widths = [26, 16] + [14] * len(columns)
    print_row(header, widths)
    pending = {}
    for name, _, _, _, _ in jobs:
        pending[name] = pending.get(name, 0) + 1
    runs = {}
    false_reports = []
    workers = os.cpu_count() or 1
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        futures = {
            pool.submit(explore, args.weft, module, strategy, seed, budget, args.time_limit,
                        args.point_model):
                (name, strategy)
            for name, module, strategy, seed, budget in jobs
        }
        for future in concurrent.futures.as_completed(futures):
            name, strategy = futures[future]
            runs.setdefault((name, strategy), []).append(future.result())
            pending[name] -= 1
            if pending[name] == 0:
                row, bad = sample_row(name, manifests_by_name[name], runs, columns, args.budget)
                print_row(row, widths)
                false_reports += bad
    if args.json:
        Path(args.json).write_text(json.dumps(
            {f"{n} {s}": v for (n, s), v in runs.items()}, indent=1))
    if false_reports:
        print(f"failures reported on correct samples: {false_reports}", file=sys.stderr)
        sys.exit(1)


def sample_row(name, manifest, runs, columns, budget):
    """A sample's row of the table, and the false reports in it."""
    expect = manifest["expect"]
    kind = manifest.get("kind")
    row = [name, kind if expect == "failure" else "pass"]
    false_reports = []
    for strategy in columns:
        found = runs[(name, strategy)]
        if expect == "failure":
            row.append(summary(found, kind, budget))
            continue
        bad = [k for n, _, k in found if n is not None]
        if bad:
            false_reports.append((name, strategy, sorted(set(bad))))
            row.append("FALSE REPORT")
        elif strategy in SYSTEMATIC and found[0][2] is not None:
            row.append(found[0][2])
        elif strategy in SYSTEMATIC and found[0][1] < budget:
            row.append(f"ok ({found[0][1]}, time limit)")
        else:
            row.append("ok")
    return row, false_reports


def print_row(row, widths):
    print("  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip(), flush=True)


if __name__ == "__main__":
    main()
