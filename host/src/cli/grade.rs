//! `weft grade EXERCISE SUBMISSION`: grades a student's program against an
//! exercise ([`crate::classroom::driver`]) and prints the feedback, or one
//! JSON object for autograders.

use crate::classroom::Exercise;
use crate::classroom::driver::{GradeOptions, Graded, grade};
use anyhow::Result;
use clap::Args;
use serde_json::json;
use std::path::PathBuf;
use std::time::Duration;

/// Grade a submission to a classroom exercise: pass or fail, with the
/// failing interleaving told in plain words.
#[derive(Args, Debug)]
pub struct GradeArgs {
    /// The exercise: a folder holding `exercise.toml` (e.g.
    /// `exercises/lost-update`).
    exercise: PathBuf,
    /// The submission: a module (`.wasm`), a source file (`.c`, `.rs`,
    /// `.cpp`, `.zig`, `.wat`) or a folder `weft build` builds.
    submission: PathBuf,
    /// Where the built module, the replay file and the HTML timeline of a
    /// failure go.
    #[arg(long, default_value = "grade-out")]
    out: PathBuf,
    /// Most time for the whole grading (default: the exercise's).
    #[arg(long, value_parser = super::args::parse_positive_duration)]
    time_limit: Option<Duration>,
    /// Exploration seed.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Print one JSON object for autograders: `score`, `max_score`,
    /// `output` (the feedback text) and `tests`, with the explanation.
    #[arg(long)]
    json: bool,
}

pub fn run(args: GradeArgs) -> Result<u8> {
    let exercise = Exercise::load(&args.exercise)?;
    let options = GradeOptions {
        out: args.out.clone(),
        time_limit: args.time_limit,
        seed: args.seed,
    };
    let graded = grade(&exercise, &args.submission, &options)?;
    print(&exercise, &args, &graded);
    Ok(if graded.passed {
        super::EXIT_PASS
    } else {
        super::EXIT_FAILURE
    })
}

fn print(exercise: &Exercise, args: &GradeArgs, graded: &Graded) {
    let text = graded.feedback(exercise);
    if args.json {
        let value = json!({
            "score": if graded.passed { 1 } else { 0 },
            "max_score": 1,
            "status": if graded.passed { "passed" } else { "failed" },
            "exercise": exercise.name,
            "submission": args.submission.display().to_string(),
            "output": text,
            "tests": graded.checks.iter().map(|check| json!({
                "name": check.name,
                "score": if check.passed { 1 } else { 0 },
                "max_score": 1,
                "status": if check.passed { "passed" } else { "failed" },
                "output": check.detail,
            })).collect::<Vec<_>>(),
            "explanation": graded.story,
            "replay_file": graded.replay_file.as_ref().map(|p| p.display().to_string()),
            "html": graded.html.as_ref().map(|p| p.display().to_string()),
        });
        println!("{}", serde_json::to_string_pretty(&value).expect("json"));
    } else {
        let mut stdout = super::terminal::stdout();
        let _ = std::io::Write::write_all(&mut stdout, text.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::super::explore::tests::request_of;
    use crate::classroom::driver::{Phase, phase_request};
    use crate::race::RaceMode;
    use crate::sched::Strategy;
    use std::path::Path;
    use std::time::Duration;

    /// Each phase of grading explores as `weft explore` does with the
    /// options it stands for, calls logged.
    #[test]
    fn grading_explores_as_weft_explore_does() {
        let dir = std::env::temp_dir().join(format!("weft-grade-request-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("exercise.toml"),
            "title = \"t\"\nschedule = \"a->b\"\nmax_steps = 5000\n",
        )
        .unwrap();
        let exercise = crate::classroom::Exercise::load(&dir).unwrap();
        let module = Path::new("out/sub.wasm");
        for (phase, line) in [
            (
                Phase {
                    strategy: Strategy::Portfolio,
                    races: RaceMode::Schedule,
                    iterations: Some(300),
                    time_limit: Duration::from_millis(1200),
                },
                "weft out/sub.wasm --races schedule --iterations 300 --time-limit 1200ms --seed 4 --schedule a->b --max-steps 5000",
            ),
            (
                Phase {
                    strategy: Strategy::Dpor,
                    races: RaceMode::Off,
                    iterations: None,
                    time_limit: Duration::from_millis(7000),
                },
                "weft out/sub.wasm --strategy dpor --races off --time-limit 7000ms --seed 4 --schedule a->b --max-steps 5000",
            ),
        ] {
            let mut explore = request_of(line);
            // (What grading adds: calls logged, for the stories.)
            explore.instrument.log_calls = true;
            let grading = phase_request(&exercise, module, phase, 4);
            assert_eq!(
                format!("{:?}", explore.options),
                format!("{:?}", grading.options),
                "{line}"
            );
            assert_eq!(explore.instrument, grading.instrument, "{line}");
            assert_eq!(explore.minimize, grading.minimize, "{line}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
