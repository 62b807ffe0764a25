#!/usr/bin/env python3
"""Published crates' own test suites, unmodified, run through `weft test` as
cargo's test runner, beside the same suites run natively.

For every crate of CRATES, cargo fetches the published version from the
registry (nothing of it is kept in the repository), the source is copied
under target/real-suites/crates/, and its whole `cargo test` (unit tests,
integration tests, doc tests) runs three times:

- natively on this machine (`cargo test --release`), for the time and the
  verdicts it gives;
- for wasm32-wasip1-threads in release (no debuginfo: cargo's default) with
  `runner = weft test --json`;
- the same in debug.

Each weft run reports per crate the tests passed, failed, inconclusive and
ignored, the executions per test (median and smallest) and the wall time.
A suite that passes natively must have no failure under weft; a failure is
printed with its message and replay file. The historical bugs of HISTORICAL
(a published version with a concurrency bug and the version that fixed it,
each run on the same test) are run the same way, in release.

    python3 bench/real_suites.py [--weft target/release/weft] [--only NAME ...]
                                 [--skip-native] [--skip-debug]
                                 [--json target/real-suites/results.json]
                                 [-- WEFT TEST OPTIONS ...]

Without the registry (offline), it says so and exits 0.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "target" / "real-suites"
TARGET = "wasm32-wasip1-threads"


@dataclass
class Crate:
    """A published crate whose own test suite is run."""

    name: str
    version: str
    kind: str
    # Arguments after `cargo test` (features, which targets).
    cargo_args: list = field(default_factory=list)


# Left out: crossbeam-channel (its dev-dependency signal-hook-registry does
# not build for WASI), async-channel and
# concurrent-queue (on wasm their tests are wasm-bindgen tests), parking_lot
# (without its `nightly` feature parking_lot_core's wasm parker panics by
# design, with or without weft), crossbeam-skiplist 0.1.3 (no longer
# compiles), spin, rtrb, flurry, papaya and scc
# (criterion refuses WASI).
CRATES = [
    Crate("crossbeam-queue", "0.3.14", "queues"),
    Crate("bus", "2.4.1", "channels (broadcast)"),
    Crate("spinning_top", "0.3.1", "locks"),
    Crate("once_cell", "1.21.4", "lazy initialisation"),
    Crate("threadpool", "1.8.1", "thread pools"),
    Crate("evmap", "10.0.2", "concurrent maps"),
]


@dataclass
class Historical:
    """A concurrency bug of a published version, and the version that fixed
    it, each run on the test crate bench/historical/FOLDER/."""

    name: str
    folder: str
    crate: str
    buggy: str
    fixed: str
    what: str


HISTORICAL = [
    Historical(
        "crossbeam-channel-971",
        "crossbeam-channel-first-block",
        "crossbeam-channel",
        "0.5.7",
        "0.5.8",
        "dropping the receiver while the first block is being installed reads the head block as null (crossbeam-rs/crossbeam#971)",
    ),
    Historical(
        "crossbeam-channel-1187",
        "crossbeam-channel-first-block",
        "crossbeam-channel",
        "0.5.14",
        "0.5.15",
        "the same race frees the first block twice once the old bug is fixed (crossbeam-rs/crossbeam#1187, RUSTSEC-2025-0024)",
    ),
]


def run(cmd, cwd, env=None, timeout=None):
    """Runs `cmd`, returning (exit code, stdout, stderr, seconds)."""
    started = time.monotonic()
    merged = dict(os.environ)
    merged.update(env or {})
    try:
        done = subprocess.run(
            cmd,
            cwd=cwd,
            env=merged,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
        )
        code, out, err = done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired as expired:
        code = None
        out = (expired.stdout or b"").decode("utf-8", "replace") if isinstance(expired.stdout, bytes) else (expired.stdout or "")
        err = f"timed out after {timeout} s"
    return code, out, err, time.monotonic() - started


def fetch(packages):
    """Has cargo fetch `packages` [(name, version)]: their source folders by
    (name, version), or None when the registry cannot be reached."""
    manifest_dir = WORK / "fetch"
    (manifest_dir / "src").mkdir(parents=True, exist_ok=True)
    (manifest_dir / "src" / "lib.rs").write_text("")
    wanted = sorted(set(packages))
    sources = {}
    # Several versions of one crate cannot be dependencies of one package:
    # one fetch per version.
    for name, version in wanted:
        key = f"{name}-{version}"
        lines = [
            "[package]",
            f'name = "fetch-{key.replace(".", "-")}"',
            'version = "0.0.0"',
            'edition = "2021"',
            "[workspace]",
            "[dependencies]",
            f'{name} = "*"',
        ]
        (manifest_dir / "Cargo.toml").write_text("\n".join(lines) + "\n")
        code, err = pin(manifest_dir, name, version)
        if code != 0:
            if any(word in err for word in ("network", "download", "index", "resolve host", "connect")):
                return None
            sys.exit(f"real-suites: cargo cannot resolve {name} {version}:\n{err}")
        code, _, err, _ = run(["cargo", "fetch", "--quiet"], manifest_dir)
        if code != 0:
            return None
        code, out, err, _ = run(
            ["cargo", "metadata", "--format-version", "1", "--quiet"], manifest_dir
        )
        if code != 0:
            sys.exit(f"real-suites: cargo metadata failed:\n{err}")
        for package in json.loads(out)["packages"]:
            if package["name"] == name and package["version"] == version:
                sources[(name, version)] = Path(package["manifest_path"]).parent
    return sources


def pin(manifest_dir, name, version):
    """Locks the package at `manifest_dir`, which depends on `name = "*"`,
    to exactly `version` of it (yanked versions too, as `cargo update
    --precise` allows): (exit code, stderr)."""
    lock = manifest_dir / "Cargo.lock"
    if lock.exists():
        lock.unlink()
    code, _, err, _ = run(["cargo", "generate-lockfile", "--quiet"], manifest_dir)
    if code != 0:
        return code, err
    code, _, err, _ = run(["cargo", "update", "--quiet", "-p", name, "--precise", version], manifest_dir)
    return code, err


def prepare(source, name, weft, weft_args):
    """A copy of the crate at `source` under target/real-suites/crates/ with
    weft as its runner for wasm (the crate's files are not changed)."""
    copy = WORK / "crates" / name
    if not copy.exists():
        shutil.copytree(source, copy)
    use_weft_as_runner(copy, weft, weft_args)
    return copy


def use_weft_as_runner(crate_dir, weft, weft_args):
    """Makes `weft test --json WEFT_ARGS` the wasm runner of the crate at
    `crate_dir` (its `.cargo/config.toml`)."""
    config = crate_dir / ".cargo" / "config.toml"
    config.parent.mkdir(exist_ok=True)
    runner = [str(weft), "test", "--json", *weft_args]
    config.write_text(f"[target.{TARGET}]\nrunner = {json.dumps(runner)}\n")


def native(crate_dir, cargo_args):
    """`cargo test --release` on this machine: (passed, failed, ignored,
    seconds)."""
    code, out, err, seconds = run(
        ["cargo", "test", "--release", "--no-fail-fast", *cargo_args],
        crate_dir,
        env={"CARGO_TARGET_DIR": str(WORK / "target-native")},
    )
    counts = [0, 0, 0]
    for line in out.splitlines():
        m = re.match(r"test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored", line)
        if m:
            for i in range(3):
                counts[i] += int(m.group(i + 1))
    if code not in (0, 101):
        print(f"  native build failed:\n{err[-2000:]}")
    return (*counts, seconds)


def json_documents(text):
    """The JSON objects that start a line of `text` (what each `weft test
    --json` printed), and the rest of its lines."""
    decoder = json.JSONDecoder()
    docs, rest = [], []
    lines = text.splitlines(keepends=True)
    offsets, pos = [], 0
    for line in lines:
        offsets.append(pos)
        pos += len(line)
    i = 0
    while i < len(lines):
        if lines[i].startswith("{"):
            try:
                doc, end = decoder.raw_decode(text, offsets[i])
                docs.append(doc)
                while i < len(lines) and offsets[i] < end:
                    i += 1
                continue
            except json.JSONDecodeError:
                pass
        rest.append(lines[i])
        i += 1
    return docs, "".join(rest)


def under_weft(crate_dir, cargo_args, release, timeout):
    """`cargo test --target wasm32-wasip1-threads` through weft: a summary
    dict."""
    profile = ["--release"] if release else []
    code, out, err, seconds = run(
        ["cargo", "test", "--target", TARGET, "--no-fail-fast", *profile, *cargo_args],
        crate_dir,
        env={
            "CARGO_TARGET_DIR": str(WORK / "target-wasm"),
            # As cargo builds a release by default: no debuginfo.
            "CARGO_PROFILE_RELEASE_DEBUG": "false",
        },
        timeout=timeout,
    )
    docs, rest = json_documents(out)
    summary = {
        "passed": 0,
        "failed": 0,
        "inconclusive": 0,
        "ignored": 0,
        "executions": [],
        "seconds": seconds,
        "failures": [],
        "inconclusives": [],
        "cargo_exit": code,
    }
    for doc in docs:
        tests = doc.get("tests", [])
        # A doc test is one program rustdoc runs through the runner (weft
        # names it after the binary, `rust_out`); rustdoc counts it below.
        if [t.get("test") for t in tests] == ["rust_out"]:
            summary["executions"] += [t["executions"] for t in tests if "executions" in t]
            continue
        for key in ("passed", "failed", "inconclusive", "ignored"):
            summary[key] += doc.get(key, 0)
        for test in doc.get("tests", []):
            if "executions" in test:
                summary["executions"].append(test["executions"])
            if test.get("status") == "failure":
                summary["failures"].append(
                    (test["test"], test["failure"]["kind"], test["failure"]["message"][:300], test.get("replay_file"))
                )
            elif test.get("status") == "inconclusive":
                summary["inconclusives"].append((test["test"], test.get("inconclusive_because")))
    # Doc tests: rustdoc reports them itself.
    for line in rest.splitlines():
        m = re.match(r"test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored", line)
        if m:
            summary["passed"] += int(m.group(1))
            summary["failed"] += int(m.group(2))
            summary["ignored"] += int(m.group(3))
        m = re.match(r"test (.*) \.\.\. FAILED$", line)
        if m:
            summary["failures"].append((m.group(1), "doctest", "", None))
    if code is None:
        summary["failures"].append(("(whole suite)", "timeout", err, None))
    elif not docs and code != 0:
        summary["failures"].append(("(build)", "build", err[-2000:], None))
    return summary


def executions_text(executions):
    if not executions:
        return "-"
    return f"{int(statistics.median(executions))} (min {min(executions)})"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--weft", default=str(ROOT / "target" / "release" / "weft"))
    parser.add_argument("--only", nargs="*", default=[])
    parser.add_argument("--skip-native", action="store_true")
    parser.add_argument("--skip-debug", action="store_true")
    parser.add_argument("--skip-historical", action="store_true")
    parser.add_argument("--suite-timeout", type=int, default=3600)
    parser.add_argument("--json", default=str(WORK / "results.json"))
    parser.add_argument("weft_args", nargs="*")
    args = parser.parse_args()
    weft = Path(args.weft).resolve()
    if not weft.exists():
        sys.exit(f"real-suites: no weft at {weft}: build it (cargo build --release -p weft)")
    crates = [c for c in CRATES if not args.only or c.name in args.only]
    historical = [] if args.skip_historical else [h for h in HISTORICAL if not args.only or h.crate in args.only]
    packages = [(c.name, c.version) for c in crates]
    for h in historical:
        packages += [(h.crate, h.buggy), (h.crate, h.fixed)]
    WORK.mkdir(parents=True, exist_ok=True)
    sources = fetch(packages)
    if sources is None:
        print("real-suites: the crate registry cannot be reached: skipped")
        return 0
    results = []
    print(f"weft: {weft}; weft test options: {' '.join(args.weft_args) or '(defaults)'}\n")
    for crate in crates:
        label = f"{crate.name} {crate.version}"
        print(f"== {label} ({crate.kind})", flush=True)
        crate_dir = prepare(sources[(crate.name, crate.version)], f"{crate.name}-{crate.version}", weft, args.weft_args)
        row = {"crate": crate.name, "version": crate.version, "kind": crate.kind}
        if not args.skip_native:
            passed, failed, ignored, seconds = native(crate_dir, crate.cargo_args)
            row["native"] = {"passed": passed, "failed": failed, "ignored": ignored, "seconds": seconds}
            print(f"  native:  {passed} passed, {failed} failed, {ignored} ignored in {seconds:.0f} s", flush=True)
        builds = [("release", True)] + ([] if args.skip_debug else [("debug", False)])
        for build, release in builds:
            summary = under_weft(crate_dir, crate.cargo_args, release, args.suite_timeout)
            row[build] = summary
            print(
                f"  weft {build}: {summary['passed']} passed, {summary['failed']} failed, "
                f"{summary['inconclusive']} inconclusive, {summary['ignored']} ignored; "
                f"executions per test {executions_text(summary['executions'])}; {summary['seconds']:.0f} s",
                flush=True,
            )
            for name, kind, message, replay in summary["failures"]:
                print(f"    FAILED {name}: {kind}: {message} {replay or ''}")
            for name, why in summary["inconclusives"]:
                print(f"    INCONCLUSIVE {name}: {why}")
        results.append(row)
    for h in historical:
        print(f"== historical: {h.name}: {h.what}", flush=True)
        row = {"historical": h.name, "crate": h.crate}
        for role, version in (("buggy", h.buggy), ("fixed", h.fixed)):
            test_crate = prepare_historical(h, version, weft, args.weft_args)
            summary = under_weft(test_crate, [], True, args.suite_timeout)
            row[role] = {"version": version, **summary}
            verdict = "FAILED" if summary["failed"] else ("INCONCLUSIVE" if summary["inconclusive"] else "ok")
            print(f"  {h.crate} {version} ({role}): {verdict}; executions {executions_text(summary['executions'])}", flush=True)
            for name, kind, message, replay in summary["failures"]:
                print(f"    FAILED {name}: {kind}: {message} {replay or ''}")
        results.append(row)
    Path(args.json).write_text(json.dumps(results, indent=2))
    print(f"\nresults: {args.json}")
    print(markdown_table(results))
    return 0


def prepare_historical(h, version, weft, weft_args):
    """The test crate bench/historical/FOLDER, locked to exactly
    `version` of the crate, with weft as its runner."""
    copy = WORK / "historical" / f"{h.name}-{version}"
    if copy.exists():
        shutil.rmtree(copy)
    shutil.copytree(ROOT / "bench" / "historical" / h.folder, copy)
    code, err = pin(copy, h.crate, version)
    if code != 0:
        sys.exit(f"real-suites: cannot lock {h.crate} {version}:\n{err}")
    use_weft_as_runner(copy, weft, weft_args)
    return copy


def markdown_table(results):
    lines = [
        "| crate | kind | native: passed / failed (time) | weft release: passed / failed / inconclusive / ignored | executions per test | time | weft debug: passed / failed / inconclusive / ignored | time |",
        "|---|---|---|---|---|---:|---|---:|",
    ]
    for row in results:
        if "historical" in row:
            continue
        native_cell = "-"
        if "native" in row:
            n = row["native"]
            native_cell = f"{n['passed']} / {n['failed']} ({n['seconds']:.0f} s)"
        rel = row.get("release", {})
        dbg = row.get("debug")
        counts = lambda s: f"{s['passed']} / {s['failed']} / {s['inconclusive']} / {s['ignored']}"
        lines.append(
            f"| {row['crate']} {row['version']} | {row['kind']} | {native_cell} | {counts(rel)} | "
            f"{executions_text(rel['executions'])} | {rel['seconds']:.0f} s | "
            f"{counts(dbg) if dbg else '-'} | {(str(round(dbg['seconds'])) + ' s') if dbg else '-'} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
