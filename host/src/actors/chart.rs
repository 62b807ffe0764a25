//! A text message sequence chart of an execution's deliveries: one lane
//! per actor, one row per receive, an arrow from the sender's lane to the
//! receiver's.

use crate::actors::mailboxes::{ActorLog, DRIVER};

/// The chart of `log`'s receives (at most `limit` rows, the last ones).
pub fn render(log: &ActorLog, limit: usize) -> String {
    let mut lanes: Vec<u32> = vec![DRIVER];
    lanes.extend(0..log.actors.len() as u32);
    let names: Vec<String> = lanes.iter().map(|&id| log.name(id)).collect();
    let width = names.iter().map(|n| n.len()).max().unwrap_or(6).max(6) + 2;
    let lane = |id: u32| lanes.iter().position(|&l| l == id).unwrap_or(0);
    let mut out = String::from("      ");
    for name in &names {
        out.push_str(&format!("{name:^width$}"));
    }
    out.push('\n');
    let skip = log.receives.len().saturating_sub(limit);
    if skip > 0 {
        out.push_str(&format!("      ... {skip} earlier receives\n"));
    }
    for (n, r) in log.receives.iter().enumerate().skip(skip) {
        let (from, to) = (lane(r.sender), lane(r.receiver));
        let mut row: Vec<char> = vec![' '; width * lanes.len()];
        for l in 0..lanes.len() {
            row[l * width + width / 2] = '|';
        }
        let (a, b) = (
            from.min(to) * width + width / 2,
            from.max(to) * width + width / 2,
        );
        for cell in row.iter_mut().take(b).skip(a + 1) {
            *cell = '-';
        }
        if from == to {
            row[a] = 'o';
        } else if to > from {
            row[b - 1] = '>';
        } else {
            row[a + 1] = '<';
        }
        // The message kind, on the arrow.
        let label: Vec<char> = format!(" {} ", r.kind).chars().collect();
        let start = a + 2;
        if b > start + label.len() {
            for (i, c) in label.iter().enumerate() {
                row[start + i] = *c;
            }
        }
        let line: String = row.into_iter().collect();
        let became = r.became.as_ref().map_or(String::new(), |b| {
            format!("   ({} becomes {b})", log.name(r.receiver))
        });
        let short = if b <= start + label.len() {
            format!("   {}", r.kind)
        } else {
            String::new()
        };
        out.push_str(&format!(
            "{:>4}  {}{short}{became}\n",
            n + 1,
            line.trim_end()
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::actors::mailboxes::{ActorInfo, Receive};

    #[test]
    fn arrows_go_from_sender_to_receiver() {
        let log = ActorLog {
            actors: vec![ActorInfo {
                kind: "Writer".into(),
                hash: 0,
                created_in: None,
            }],
            receives: vec![
                Receive {
                    hash: 0,
                    receiver: 0,
                    sender: DRIVER,
                    kind: "Write".into(),
                    sent_in: None,
                    after_quiet: 0,
                    became: None,
                },
                Receive {
                    hash: 0,
                    receiver: DRIVER,
                    sender: 0,
                    kind: "Done".into(),
                    sent_in: Some(0),
                    after_quiet: 0,
                    became: Some("closed".into()),
                },
            ],
            undelivered: 0,
        };
        let chart = render(&log, 10);
        assert!(
            chart.contains("driver") && chart.contains("Writer #0"),
            "{chart}"
        );
        let rows: Vec<&str> = chart.lines().collect();
        assert!(
            rows[1].contains("Write") && rows[1].contains('>'),
            "{chart}"
        );
        assert!(rows[2].contains("Done") && rows[2].contains('<'), "{chart}");
        assert!(rows[2].contains("becomes closed"), "{chart}");
    }
}
