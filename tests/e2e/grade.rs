//! `weft grade`: every exercise's reference solutions pass and its typical
//! wrong solutions fail, with the failure kind and the plain-words
//! explanation the exercise names; sources are built first.

use crate::support::{arg, root, weft_in};
use serde_json::Value;
use std::path::Path;

/// The exercises of `exercises/`.
fn exercises() -> Vec<std::path::PathBuf> {
    let mut found: Vec<_> = std::fs::read_dir(root().join("exercises"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("exercise.toml").is_file())
        .collect();
    found.sort();
    found
}

/// `weft grade --json` of `submission` within `time_limit`.
fn grade(dir: &Path, exercise: &Path, submission: &Path, time_limit: &str) -> (i32, Value) {
    let out = weft_in(
        dir,
        &[
            "grade",
            arg(exercise),
            arg(submission),
            "--json",
            "--time-limit",
            time_limit,
            "--out",
            arg(&dir.join("out")),
        ],
    );
    assert!(out.code == 0 || out.code == 1, "{}", out.stderr);
    (out.code, out.json())
}

#[test]
fn reference_solutions_pass() {
    for exercise in exercises() {
        for solution in std::fs::read_dir(exercise.join("solution")).unwrap() {
            let solution = solution.unwrap().path();
            let dir = tempfile::tempdir().unwrap();
            // A pass takes the whole time limit: a short one.
            let (code, json) = grade(dir.path(), &exercise, &solution, "5s");
            assert_eq!(code, 0, "{}: {}", solution.display(), json["output"]);
            assert_eq!(json["score"], 1);
            assert!(
                json["output"].as_str().unwrap().contains("PASS"),
                "{}",
                json["output"]
            );
        }
    }
}

/// C source `text` with a `printf` at the start of each thread routine
/// (`static void *name(void *arg) {`), as a student adds to watch the
/// threads run.
fn with_prints_in_threads(text: &str) -> String {
    let mut printed = String::new();
    let mut routines = 0;
    for line in text.lines() {
        printed.push_str(line);
        printed.push('\n');
        let routine = line.starts_with("static void *")
            && line.contains("(void *")
            && line.trim_end().ends_with('{');
        if routine {
            routines += 1;
            printed.push_str("    printf(\"thread %p running\\n\", arg);\n");
        }
    }
    assert!(routines > 0, "no thread routine in:\n{text}");
    if !printed.contains("#include <stdio.h>") {
        printed.insert_str(0, "#include <stdio.h>\n");
    }
    printed
}

#[test]
fn reference_solutions_whose_threads_print_pass() {
    for exercise in exercises() {
        let solution = exercise.join("solution/main.c");
        let Ok(text) = std::fs::read_to_string(&solution) else {
            continue;
        };
        let dir = tempfile::tempdir().unwrap();
        let printing = dir.path().join("main.c");
        std::fs::write(&printing, with_prints_in_threads(&text)).unwrap();
        let (code, json) = grade(dir.path(), &exercise, &printing, "5s");
        assert_eq!(code, 0, "{}: {}", exercise.display(), json["output"]);
        assert_eq!(json["score"], 1);
    }
}

#[test]
fn wrong_solutions_fail_with_their_explanation() {
    for exercise in exercises() {
        let text = std::fs::read_to_string(exercise.join("exercise.toml")).unwrap();
        let description: toml::Value = toml::from_str(&text).unwrap();
        let wrong = description["wrong"].as_array().unwrap();
        for language in ["c", "rs"] {
            let count = wrong
                .iter()
                .filter(|w| {
                    w["file"]
                        .as_str()
                        .unwrap()
                        .ends_with(&format!(".{language}"))
                })
                .count();
            assert!(
                count >= 2,
                "{}: two wrong solutions in .{language}, at least",
                exercise.display()
            );
        }
        for case in wrong {
            let file = exercise.join(case["file"].as_str().unwrap());
            let dir = tempfile::tempdir().unwrap();
            // A failure ends the grading when it is found; the limit leaves
            // the sampling phase 8 s to find it on a loaded machine (a
            // livelock's execution alone takes some 3.5 s in a debug build,
            // and 4 s were seen to run out while the suite ran).
            let (code, json) = grade(dir.path(), &exercise, &file, "20s");
            let output = json["output"].as_str().unwrap();
            assert_eq!(code, 1, "{}: {output}", file.display());
            assert_eq!(json["score"], 0);
            let kind = case["kind"].as_str().unwrap();
            assert!(
                output.contains(&format!("FAIL: {kind}")),
                "{}: expected a {kind} failure:\n{output}",
                file.display()
            );
            let phrase = case["explains"].as_str().unwrap();
            let conclusion = json["explanation"]["conclusion"].to_string();
            assert!(
                conclusion.contains(phrase),
                "{}: the explanation lacks {phrase:?}:\n{output}",
                file.display()
            );
            assert!(Path::new(json["replay_file"].as_str().unwrap()).is_file());
            assert!(Path::new(json["html"].as_str().unwrap()).is_file());
        }
    }
}

#[test]
fn a_submission_that_does_not_build_fails_with_the_compiler_message() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("broken.c");
    std::fs::write(&source, "int main(void) { return missing; }\n").unwrap();
    let exercise = root().join("exercises/lost-update");
    let (code, json) = grade(dir.path(), &exercise, &source, "10s");
    assert_eq!(code, 1);
    assert_eq!(json["score"], 0);
    let output = json["output"].as_str().unwrap();
    assert!(output.contains("does not build"), "{output}");
    assert!(output.contains("missing"), "{output}");
    assert!(output.contains("What the compiler said:"), "{output}");
    assert!(!output.contains("interleaving"), "{output}");
}

/// A submission that prints what the exercise expects without doing it (no
/// threads, or without the function the statement says to keep) fails, as
/// does one with no `main`; a submission named like an option is built as
/// the file it is.
#[test]
fn a_submission_that_does_not_do_the_exercise_fails() {
    let dir = tempfile::tempdir().unwrap();
    let exercise = root().join("exercises/lost-update");
    let cases = [
        (
            "no-threads.c",
            "#include <stdio.h>\nstatic void deposit(int a) { (void)a; }\n\
             int main(void) { deposit(10); printf(\"balance = 140\\n\"); return 0; }\n",
            "creates 0 threads besides `main`",
        ),
        (
            "-renamed.c",
            "#include <pthread.h>\n#include <stdio.h>\nstatic int balance = 100;\n\
             static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;\n\
             static void *teller(void *a) { pthread_mutex_lock(&m); balance += 20;\n\
             pthread_mutex_unlock(&m); return a; }\n\
             int main(void) { pthread_t t[2]; for (int i = 0; i < 2; i++) pthread_create(&t[i], 0, teller, 0);\n\
             for (int i = 0; i < 2; i++) pthread_join(t[i], 0); printf(\"balance = %d\\n\", balance); return 0; }\n",
            "no function `deposit`",
        ),
        ("empty.c", "", "has no `main` function"),
    ];
    for (name, source, expected) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, source).unwrap();
        let out = weft_in(
            dir.path(),
            &[
                "grade",
                arg(&exercise),
                "--json",
                "--time-limit",
                "10s",
                "--",
                name,
            ],
        );
        assert_eq!(out.code, 1, "{name}: {}{}", out.stdout, out.stderr);
        let json = out.json();
        let output = json["output"].as_str().unwrap();
        assert!(output.contains(expected), "{name}: {output}");
        assert!(!output.contains("PASS"), "{name}: {output}");
    }
}

/// `source` with `from` replaced by `to` (which must be in it).
fn edited(source: &str, from: &str, to: &str) -> String {
    assert!(source.contains(from), "{from}");
    source.replace(from, to)
}

/// Submissions that create the threads and keep the functions but whose
/// threads take turns at the work (each joined before the next is
/// created, or `main` doing all of it) fail: they do not do the exercise.
#[test]
fn a_submission_whose_threads_take_turns_at_the_work_fails() {
    let dir = tempfile::tempdir().unwrap();
    let exercise = root().join("exercises/lost-update");
    let read = |file: &str| std::fs::read_to_string(exercise.join(file)).unwrap();
    let c_loop = "    for (int i = 0; i < TELLERS; i++)\n        pthread_create(&tellers[i], NULL, teller, NULL);\n    for (int i = 0; i < TELLERS; i++)\n        pthread_join(tellers[i], NULL);";
    let c_turns = "    for (int i = 0; i < TELLERS; i++) {\n        pthread_create(&tellers[i], NULL, teller, NULL);\n        pthread_join(tellers[i], NULL);\n    }";
    let starter = read("starter/main.c");
    let main_does_it = edited(
        &edited(
            &starter,
            "    for (int i = 0; i < DEPOSITS; i++)\n        deposit(AMOUNT);\n",
            "",
        ),
        "    printf(\"balance",
        "    for (int i = 0; i < TELLERS * DEPOSITS; i++)\n        deposit(AMOUNT);\n    printf(\"balance",
    );
    let cases = [
        ("turns.c", edited(&read("solution/main.c"), c_loop, c_turns)),
        ("main_does_it.c", main_does_it),
        (
            "turns.rs",
            edited(
                &read("solution/main.rs"),
                "let tellers: Vec<_> = (0..TELLERS).map(|_| thread::spawn(teller)).collect();\n    for t in tellers {\n        t.join().unwrap();\n    }",
                "for _ in 0..TELLERS {\n        thread::spawn(teller).join().unwrap();\n    }",
            ),
        ),
    ];
    for (name, source) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, source).unwrap();
        let (code, json) = grade(dir.path(), &exercise, &path, "20s");
        let output = json["output"].as_str().unwrap();
        assert_eq!(code, 1, "{name}: {output}");
        assert!(
            output.contains("does not do the exercise"),
            "{name}: {output}"
        );
        assert!(
            output.contains("never more than one thread was amid `deposit` at a time"),
            "{name}: {output}"
        );
    }
}

#[test]
fn an_exercise_folder_without_its_description_is_an_input_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = weft_in(dir.path(), &["grade", arg(dir.path()), "x.c"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("no `exercise.toml`"), "{}", out.stderr);
}

#[test]
fn a_submission_that_never_finishes_fails_as_too_slow() {
    let dir = tempfile::tempdir().unwrap();
    // One thread that computes for minutes between scheduling points.
    let source = dir.path().join("forever.wat");
    std::fs::write(
        &source,
        r#"(module (memory (export "memory") 1)
  (func (export "_start") (local i64)
    (loop $l
      (local.set 0 (i64.add (local.get 0) (i64.const 1)))
      (br_if $l (i64.lt_u (local.get 0) (i64.const 100000000000))))))"#,
    )
    .unwrap();
    let exercise = root().join("exercises/lost-update");
    let (code, json) = grade(dir.path(), &exercise, &source, "2s");
    assert_eq!(code, 1);
    assert_eq!(json["score"], 0);
    let output = json["output"].as_str().unwrap();
    assert!(output.contains("FAIL: too slow"), "{output}");
    assert!(output.contains("not one execution finished"), "{output}");
}
