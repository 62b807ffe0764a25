#!/usr/bin/env python3
"""The exhaustive search on weft's correct samples: schedules and time.

For every sample whose manifest expects it to pass, runs
`weft explore target/samples/NAME.wasm --strategy dpor --races fail` with a
time limit and prints how many schedules the search ran, whether it
explored them all (`all`), stopped at the limit (`limit`) or ran out of
schedules without a claim (`no claim`, with the reason in the JSON), and
how long it took. With `--before OTHER_WEFT`, runs another build of weft
on the same modules beside it, for a table of before and after measured in
one run.

    python3 bench/prove.py [--weft target/release/weft] [--before WEFT]
                           [--time-limit 10] [--only NAME ...] [--json OUT]

Each search runs on one worker (`--jobs 1`), one search at a time, so that
the times compare.
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def correct_samples(only):
    for path in sorted((ROOT / "samples").glob("*/sample.json")):
        name = path.parent.name
        if only and name not in only:
            continue
        if json.loads(path.read_text()).get("expect") == "pass":
            yield name


def search(weft, module, time_limit):
    """One exhaustive search: (schedules, how it ended, seconds)."""
    command = [
        weft, "explore", str(module), "--strategy", "dpor", "--races", "fail",
        "--jobs", "1", "--time-limit", f"{time_limit}s", "--json", "--no-save",
    ]
    out = subprocess.run(command, capture_output=True, text=True)
    if out.returncode not in (0, 1, 3):
        raise RuntimeError(f"{' '.join(command)} exited {out.returncode}: {out.stderr.strip()}")
    result = json.loads(out.stdout)
    if result.get("failure"):
        ended = "FAILED"
    elif result.get("exhaustive"):
        ended = "all"
    elif result.get("claim_withheld_because"):
        ended = "no claim"
    else:
        ended = "limit"
    return result["executions"], ended, result["elapsed_ms"] / 1000


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weft", default=str(ROOT / "target/release/weft"))
    parser.add_argument("--before", help="another weft build to run beside it")
    parser.add_argument("--time-limit", type=int, default=10)
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--json", help="write the rows here too")
    args = parser.parse_args()

    builds = [("now", args.weft)] + ([("before", args.before)] if args.before else [])
    header = "| sample |" + "".join(f" {label}: schedules | {label}: time |" for label, _ in builds)
    print(header)
    print("|---|" + "---:|---:|" * len(builds))
    rows = []
    failed = False
    for name in correct_samples(args.only):
        module = ROOT / "target/samples" / f"{name}.wasm"
        if not module.exists():
            print(f"prove: {module} is missing (run `./x samples` first)", file=sys.stderr)
            sys.exit(2)
        row = {"sample": name}
        cells = []
        for label, weft in builds:
            schedules, ended, seconds = search(weft, module, args.time_limit)
            failed |= ended == "FAILED"
            row[label] = {"schedules": schedules, "ended": ended, "seconds": seconds}
            count = f"{schedules:,}" if ended == "all" else f"{ended} ({schedules:,})"
            time = f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.1f} s"
            cells.append(f" {count} | {time} |")
        rows.append(row)
        print(f"| `{name}` |" + "".join(cells), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))
    if failed:
        print("prove: a correct sample failed", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
