//! Units of work named from outside the guest (`--unit-of-work`): the call
//! sites whose callee's name matches a pattern.

use crate::debuginfo::symbols::Symbols;
use crate::runtime::Program;

/// The call sites whose callee matches one of `patterns`, each with the
/// callee's name as the unit's name.
pub fn unit_calls(
    program: &Program,
    symbols: &Symbols,
    patterns: &[String],
) -> anyhow::Result<Vec<(u32, String)>> {
    let mut calls = Vec::new();
    for pattern in patterns {
        let before = calls.len();
        for id in 0..program.sites().len() as u32 {
            let Some(site) = program.sites().get(id) else {
                continue;
            };
            let (crate::instrument::AccessKind::Call, Some(callee)) = (site.kind, site.callee)
            else {
                continue;
            };
            if let Some(name) = symbols.function_name(callee)
                && name_matches(name, pattern)
            {
                calls.push((id, name.to_string()));
            }
        }
        if calls.len() == before {
            anyhow::bail!(
                "--unit-of-work `{pattern}` matches no called function (a function the compiler inlined has no call to watch)"
            );
        }
    }
    Ok(calls)
}

/// Whether `pattern` (with `*` for any text) matches the whole of `name`
/// or a part of it that starts after a `::`.
fn name_matches(name: &str, pattern: &str) -> bool {
    let mut starts = vec![0];
    starts.extend(name.match_indices("::").map(|(i, _)| i + 2));
    starts.into_iter().any(|s| glob(&name[s..], pattern))
}

fn glob(text: &str, pattern: &str) -> bool {
    match pattern.split_once('*') {
        None => text == pattern,
        Some((head, rest)) => {
            let Some(tail) = text.strip_prefix(head) else {
                return false;
            };
            (0..=tail.len())
                .filter(|&i| tail.is_char_boundary(i))
                .any(|i| glob(&tail[i..], rest))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::name_matches;

    #[test]
    fn patterns_match_whole_names_or_their_path_tails() {
        assert!(name_matches("account::Account::copy_of", "Account::*"));
        assert!(name_matches("account::Account::copy_of", "*copy*"));
        assert!(name_matches("copy_account", "copy_account"));
        assert!(!name_matches("copy_account_slowly", "copy_account"));
        assert!(!name_matches("account::Accountant::pay", "Account::*"));
    }
}
