#!/usr/bin/env python3
"""Bita against its baselines on every actor sample, as tables for docs/evaluation.md.

For each sample that uses actors (the `weft.actor_*` imports) and has a
`correct` variant:

- coverage: covered pairs after 50 executions of the correct variant (so no
  run stops at a bug), mean over 10 seeds, per criterion, for Bita
  generating for that criterion, uniform random deliveries and random delays;
- growth: the same runs' PR coverage after 1, 2, 4, ... executions;
- bugs: executions until the buggy variant fails (at most 1000), mean over
  the same seeds.

Usage: bench/compare_actors.py [--weft PATH] [--seeds N] [--executions N]
(`just compare-actors` builds weft and the samples first).
"""
import argparse
import json
import pathlib
import statistics
import subprocess

ROOT = pathlib.Path(__file__).resolve().parent.parent
CRITERIA = ["pr", "pcr", "pbr"]
BASELINES = ["random", "random-delays"]


def actor_samples():
    """Samples whose source uses actors and that take the argument `correct`."""
    found = []
    for manifest in sorted(ROOT.glob("samples/*/sample.json")):
        folder = manifest.parent
        sources = list(folder.glob("src/*.rs")) + list(folder.glob("*.c"))
        text = "".join(p.read_text() for p in sources)
        description = json.loads(manifest.read_text()).get("description", "")
        if ("actors::" in text or "actor_send" in text) and "`correct`" in description:
            found.append(folder.name)
    return found


def run(weft, sample, strategy, criterion, seed, executions, correct):
    command = [
        weft, "actors", str(ROOT / "target/samples" / f"{sample}.wasm"),
        "--strategy", strategy, "--criterion", criterion,
        "--iterations", str(executions), "--seed", str(seed),
        "--json", "--no-save",
    ]
    if correct:
        command += ["--", "correct"]
    out = subprocess.run(command, capture_output=True, text=True, check=False)
    if out.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)} failed:\n{out.stderr}")
    return json.loads(out.stdout)


def covered_after(result, executions):
    """PR pairs covered after `executions` executions of a run's growth."""
    covered = 0
    for point in result["coverage_growth"]:
        if point["executions"] <= executions:
            covered = point["pr"][0]
    return covered


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weft", default=str(ROOT / "target/release/weft"))
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--executions", type=int, default=50)
    parser.add_argument("--bug-budget", type=int, default=1000)
    args = parser.parse_args()
    seeds = range(1, args.seeds + 1)
    samples = actor_samples()
    mean = lambda xs: statistics.mean(xs) if xs else 0.0

    print(f"Covered pairs after {args.executions} executions of the correct variant "
          f"(mean of {args.seeds} seeds; Bita generates for the criterion of its column)\n")
    print("| sample | " + " | ".join(
        f"{c.upper()} Bita | {c.upper()} random | {c.upper()} delays" for c in CRITERIA) + " |")
    print("|---|" + "---:|" * (3 * len(CRITERIA)))
    curves = []
    for sample in samples:
        cells = []
        baseline = {b: [run(args.weft, sample, b, "all", s, args.executions, True) for s in seeds]
                    for b in BASELINES}
        for c in CRITERIA:
            bita = [run(args.weft, sample, "bita", c, s, args.executions, True) for s in seeds]
            cells.append(mean([r["coverage"][c]["covered"] for r in bita]))
            for b in BASELINES:
                cells.append(mean([r["coverage"][c]["covered"] for r in baseline[b]]))
            if c == "pr":
                curves.append((sample, {"Bita": bita, **baseline}))
        print(f"| {sample} | " + " | ".join(f"{x:.1f}" for x in cells) + " |", flush=True)

    points = sorted({g["executions"] for _, runs in curves for rs in runs.values()
                     for r in rs for g in r["coverage_growth"]})
    print(f"\nPR coverage as it grows (mean of {args.seeds} seeds)\n")
    print("| sample | strategy | " + " | ".join(str(p) for p in points) + " |")
    print("|---|---|" + "---:|" * len(points))
    for sample, runs in curves:
        for strategy, rs in runs.items():
            row = [mean([covered_after(r, p) for r in rs]) for p in points]
            print(f"| {sample} | {strategy} | " + " | ".join(f"{x:.1f}" for x in row) + " |")

    print(f"\nExecutions until the buggy variant fails (mean of {args.seeds} seeds; "
          f"a seed that finds nothing in {args.bug_budget} counts {args.bug_budget}, "
          "and the number of such seeds is in parentheses)\n")
    print("| sample | Bita (PR) | random | delays |")
    print("|---|---:|---:|---:|")
    for sample in samples:
        cells = []
        for strategy, criterion in [("bita", "pr"), ("random", "pr"), ("random-delays", "pr")]:
            runs = [run(args.weft, sample, strategy, criterion, s, args.bug_budget, False) for s in seeds]
            missed = sum(1 for r in runs if r["status"] != "failure")
            cell = f"{mean([r['executions'] for r in runs]):.1f}"
            cells.append(cell + (f" ({missed})" if missed else ""))
        print(f"| {sample} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
