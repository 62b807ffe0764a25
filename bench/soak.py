#!/usr/bin/env python3
"""A soak: many executions of one sample in one weft process, with its memory.

Runs `weft explore MODULE --strategy random --jobs 1 --iterations N` on a
correct sample and reads the process's resident set size (VmRSS, from
/proc) every `--every` seconds while it runs. Prints one line per reading
(seconds, RSS in MiB) and a summary: the RSS after the first tenth of the
run, the largest RSS of the last half, and their difference. Exits 1 when
that difference is more than `--max-growth-mib`: memory that grows with
the number of executions is a leak.

    python3 bench/soak.py [--weft target/release/weft]
                          [--module target/samples/mutex-counter-c.wasm]
                          [--executions 1000000] [--every 2]
                          [--max-growth-mib 16] [--races fail|off]
"""

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def rss_mib(pid):
    """The process's resident set size in MiB, or None once it has ended."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except (FileNotFoundError, ProcessLookupError):
        return None
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weft", default=str(ROOT / "target/release/weft"))
    parser.add_argument("--module", default=str(ROOT / "target/samples/mutex-counter-c.wasm"))
    parser.add_argument("--executions", type=int, default=1_000_000)
    parser.add_argument("--every", type=float, default=2.0)
    parser.add_argument("--max-growth-mib", type=float, default=16.0)
    parser.add_argument("--races", default="fail", choices=["fail", "schedule", "off"])
    args = parser.parse_args()

    command = [
        args.weft, "explore", args.module, "--strategy", "random", "--jobs", "1",
        "--iterations", str(args.executions), "--races", args.races,
        "--time-limit", "10h", "--json", "--no-save",
    ]
    print("$ " + " ".join(command), flush=True)
    start = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    readings = []
    while process.poll() is None:
        rss = rss_mib(process.pid)
        if rss is not None:
            elapsed = time.monotonic() - start
            readings.append((elapsed, rss))
            print(f"{elapsed:8.1f} s  {rss:8.1f} MiB", flush=True)
        time.sleep(args.every)
    out, _ = process.communicate()
    elapsed = time.monotonic() - start
    if process.returncode != 0:
        print(f"weft exited {process.returncode}: the soak needs a correct sample", file=sys.stderr)
        return 2
    result = json.loads(out)
    executions = result["executions"]
    if len(readings) < 4:
        print("the run ended before four readings: raise --executions", file=sys.stderr)
        return 2
    total = readings[-1][0]
    early = next(rss for t, rss in readings if t >= total / 10)
    late = max(rss for t, rss in readings if t >= total / 2)
    growth = late - early
    print(
        f"{executions} executions in {elapsed:.0f} s ({executions / elapsed:.0f}/s); "
        f"RSS {early:.1f} MiB after a tenth of the run, at most {late:.1f} MiB in its last half "
        f"(growth {growth:+.1f} MiB, limit {args.max_growth_mib} MiB)"
    )
    return 0 if growth <= args.max_growth_mib else 1


if __name__ == "__main__":
    sys.exit(main())
