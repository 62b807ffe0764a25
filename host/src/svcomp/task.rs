//! SV-COMP task definitions (`TASK.yml`, format version 2.0): the input
//! files, and for each property its `.prp` file and expected verdict.

use super::Property;
use anyhow::{Context, Result, bail};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// A task definition as the file spells it.
#[derive(Debug, Deserialize)]
struct TaskFile {
    input_files: InputFiles,
    #[serde(default)]
    properties: Vec<PropertyEntry>,
}

/// One input file or several.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum InputFiles {
    One(String),
    Many(Vec<String>),
}

#[derive(Debug, Deserialize)]
struct PropertyEntry {
    property_file: String,
    #[serde(default)]
    expected_verdict: Option<bool>,
}

/// A task: what to build and what to check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Task {
    /// The program's source files, relative paths resolved against the
    /// task's folder.
    pub inputs: Vec<PathBuf>,
    /// The properties to check, each with its expected verdict if the task
    /// gives one.
    pub checks: Vec<Check>,
    /// The properties the task states that weft does not check (memory
    /// safety, termination, ...), by their `.prp` file's stem, each with
    /// its expected verdict.
    pub unchecked: Vec<(String, Option<bool>)>,
}

/// One property of a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Check {
    /// The property.
    pub property: Property,
    /// Whether the property is expected to hold.
    pub expected: Option<bool>,
}

impl Task {
    /// Reads the task definition at `path`. Properties weft does not
    /// check (memory safety, termination, ...) are listed apart.
    ///
    /// # Errors
    ///
    /// When the file cannot be read or parsed, or names no input file.
    pub fn read(path: &Path) -> Result<Task> {
        let text = crate::input::read_text(path, crate::input::TEXT_LIMIT)
            .with_context(|| format!("cannot read `{}`", path.display()))?;
        let file: TaskFile = serde_norway::from_str(&text)
            .with_context(|| format!("`{}` is not a task definition", path.display()))?;
        let folder = path.parent().unwrap_or(Path::new("."));
        let inputs: Vec<PathBuf> = match file.input_files {
            InputFiles::One(file) => vec![folder.join(file)],
            InputFiles::Many(files) => files.iter().map(|f| folder.join(f)).collect(),
        };
        if inputs.is_empty() {
            bail!("`{}` names no input file", path.display());
        }
        let mut checks = Vec::new();
        let mut unchecked = Vec::new();
        for entry in file.properties {
            let prp = folder.join(&entry.property_file);
            let property = match crate::input::read_text(&prp, crate::input::TEXT_LIMIT) {
                Ok(text) => Property::from_prp(&text),
                // The property files usually sit in a folder of their own
                // that is not always shipped with the task: their names
                // say what they state.
                Err(_) => property_by_file_name(&entry.property_file),
            };
            match property {
                Some(property) => checks.push(Check {
                    property,
                    expected: entry.expected_verdict,
                }),
                None => unchecked.push((
                    Path::new(&entry.property_file).file_stem().map_or_else(
                        || entry.property_file.clone(),
                        |s| s.to_string_lossy().into_owned(),
                    ),
                    entry.expected_verdict,
                )),
            }
        }
        Ok(Task {
            inputs,
            checks,
            unchecked,
        })
    }
}

/// The property a `.prp` file's name says (`unreach-call.prp`).
fn property_by_file_name(name: &str) -> Option<Property> {
    let stem = Path::new(name).file_stem()?.to_str()?;
    [Property::UnreachCall, Property::NoDataRace]
        .into_iter()
        .find(|p| p.name() == stem)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_names_its_file_and_properties() {
        let dir = tempfile::tempdir().unwrap();
        let prp = dir.path().join("unreach-call.prp");
        std::fs::write(
            &prp,
            "CHECK( init(main()), LTL(G ! call(reach_error())) )\n",
        )
        .unwrap();
        let yml = dir.path().join("stack-1.yml");
        std::fs::write(
            &yml,
            "format_version: '2.0'\n\
             input_files: 'stack-1.i'\n\
             properties:\n\
             \x20 - property_file: ./unreach-call.prp\n\
             \x20   expected_verdict: false\n\
             \x20 - property_file: ../properties/no-data-race.prp\n\
             \x20   expected_verdict: true\n\
             \x20 - property_file: ../properties/valid-memsafety.prp\n\
             \x20   expected_verdict: true\n\
             options:\n\
             \x20 language: C\n\
             \x20 data_model: ILP32\n",
        )
        .unwrap();
        let task = Task::read(&yml).unwrap();
        assert_eq!(task.inputs, [dir.path().join("stack-1.i")]);
        assert_eq!(
            task.checks,
            [
                Check {
                    property: Property::UnreachCall,
                    expected: Some(false)
                },
                Check {
                    property: Property::NoDataRace,
                    expected: Some(true)
                },
            ]
        );
        assert_eq!(
            task.unchecked,
            [("valid-memsafety".to_string(), Some(true))]
        );
    }

    #[test]
    fn a_task_may_name_several_input_files_but_not_none() {
        let dir = tempfile::tempdir().unwrap();
        let yml = dir.path().join("t.yml");
        std::fs::write(&yml, "input_files: [a.c, b.c]\n").unwrap();
        let task = Task::read(&yml).unwrap();
        assert_eq!(
            task.inputs,
            [dir.path().join("a.c"), dir.path().join("b.c")]
        );
        std::fs::write(&yml, "input_files: []\n").unwrap();
        let e = Task::read(&yml).unwrap_err();
        assert!(e.to_string().contains("names no input file"), "{e}");
    }
}
