#!/usr/bin/env python3
"""CovCon against random test generation on every thread-safe class sample.

For each buggy class of the samples: tests generated until the first
failure, per seed, for `--strategy covcon` and `--strategy random`, and how
many seeds CovCon needed fewer tests (and at least 4x fewer). A seed that
finds nothing within the time limit counts as its number of tests, marked.

Usage: bench/compare_classes.py [--weft PATH] [--seeds N] [--time-limit 30s]
[--switch-chance P] (`just compare-classes` builds weft and the samples
first). With `--switch-chance`, both strategies run their tests under
sticky schedules that switch threads with that chance at each point.
"""
import argparse
import json
import pathlib
import statistics
import subprocess

ROOT = pathlib.Path(__file__).resolve().parent.parent
# (sample, class) of every buggy class.
CLASSES = [
    ("classes", "vec"), ("classes", "map"), ("classes", "log"), ("classes", "range"),
    ("range-c", "range"), ("stringbuffer", "sb"),
    ("stream-classes-c", "bstream"), ("stream-classes-c", "series"), ("map-views-c", "vmap"),
    ("logger-handlers-c", "hlogger"), ("sync-vector-c", "svec"),
]


def tests_to_failure(weft, sample, cls, strategy, seed, time_limit, switch_chance):
    command = [weft, "gen", str(ROOT / "target/samples" / f"{sample}.wasm"), "--class", cls,
               "--strategy", strategy, "--seed", str(seed), "--time-limit", time_limit,
               "--json", "--no-save"]
    if switch_chance:
        command += ["--switch-chance", switch_chance]
    out = subprocess.run(command, capture_output=True, text=True, check=False)
    if out.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)} failed:\n{out.stderr}")
    result = json.loads(out.stdout)
    return result["tests"], result["status"] == "failure"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weft", default=str(ROOT / "target/release/weft"))
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--time-limit", default="30s")
    parser.add_argument("--switch-chance", default=None)
    args = parser.parse_args()
    print(f"Tests until the first failure (median of {args.seeds} seeds; in parentheses the seeds "
          f"that found nothing within {args.time_limit}), and in how many seeds CovCon needed "
          "fewer tests than random (and at least 4x fewer)"
          + (f"; schedules switch threads with chance {args.switch_chance} at each point"
             if args.switch_chance else "") + "\n")
    print("| class | CovCon | random | CovCon fewer | 4x fewer |")
    print("|---|---:|---:|---:|---:|")
    totals = [0, 0, 0]
    for sample, cls in CLASSES:
        runs = {s: [tests_to_failure(args.weft, sample, cls, s, seed, args.time_limit,
                                     args.switch_chance)
                    for seed in range(1, args.seeds + 1)] for s in ["covcon", "random"]}
        cell = lambda rs: f"{statistics.median(t for t, _ in rs):.0f}" + (
            f" ({sum(1 for _, found in rs if not found)})" if not all(f for _, f in rs) else "")
        fewer = sum(1 for (c, cf), (r, _) in zip(runs["covcon"], runs["random"]) if cf and c < r)
        much = sum(1 for (c, cf), (r, _) in zip(runs["covcon"], runs["random"]) if cf and 4 * c <= r)
        totals = [totals[0] + fewer, totals[1] + much, totals[2] + args.seeds]
        print(f"| {sample} `{cls}` | {cell(runs['covcon'])} | {cell(runs['random'])} | "
              f"{fewer} of {args.seeds} | {much} of {args.seeds} |", flush=True)
    print(f"\nCovCon needed fewer tests in {totals[0]} of {totals[2]} seed-class comparisons, "
          f"at least 4x fewer in {totals[1]}.")


if __name__ == "__main__":
    main()
