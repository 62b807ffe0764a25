//! What weft prints goes through here, so text from a guest (thread names,
//! events, messages, its output) cannot drive the user's terminal: control
//! characters other than newline and tab are shown as escapes (`\u{1b}`,
//! `\r`, `\0`) instead of being sent raw.

use std::borrow::Cow;
use std::io::{self, Write};

/// Standard output with control characters made visible.
pub fn stdout() -> Terminal<io::StdoutLock<'static>> {
    Terminal(io::stdout().lock())
}

/// A writer that makes control characters visible before passing text on.
pub struct Terminal<W>(W);

impl<W: Write> Write for Terminal<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_all(buf)?;
        Ok(buf.len())
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.0.write_all(&escape(buf))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

/// `text` with control characters made visible, for standard error.
pub fn escape_str(text: &str) -> Cow<'_, str> {
    match escape(text.as_bytes()) {
        Cow::Borrowed(_) => Cow::Borrowed(text),
        Cow::Owned(bytes) => Cow::Owned(String::from_utf8_lossy(&bytes).into_owned()),
    }
}

/// `bytes` with C0 controls (but newline and tab), DEL and the C1 controls
/// (UTF-8 `C2 80`..`C2 9F`, which some terminals obey as escapes) written
/// as escapes.
fn escape(bytes: &[u8]) -> Cow<'_, [u8]> {
    let is_c1 =
        |i: usize| bytes[i] == 0xc2 && bytes.get(i + 1).is_some_and(|b| (0x80..=0x9f).contains(b));
    let unsafe_at = |i: usize| {
        let b = bytes[i];
        (b < 0x20 && b != b'\n' && b != b'\t') || b == 0x7f || is_c1(i)
    };
    if !(0..bytes.len()).any(unsafe_at) {
        return Cow::Borrowed(bytes);
    }
    let mut out = Vec::with_capacity(bytes.len() + 16);
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if is_c1(i) {
            out.extend_from_slice(format!("\\u{{{:x}}}", bytes[i + 1]).as_bytes());
            i += 2;
            continue;
        }
        match b {
            b'\r' => out.extend_from_slice(b"\\r"),
            0 => out.extend_from_slice(b"\\0"),
            b'\n' | b'\t' => out.push(b),
            0..0x20 | 0x7f => out.extend_from_slice(format!("\\u{{{b:x}}}").as_bytes()),
            _ => out.push(b),
        }
        i += 1;
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_become_visible_and_text_stays() {
        assert_eq!(escape_str("plain\ttext\né ✓"), "plain\ttext\né ✓");
        assert_eq!(
            escape_str("a\u{1b}[2Jb\rc\0d\u{7f}"),
            "a\\u{1b}[2Jb\\rc\\0d\\u{7f}"
        );
        assert_eq!(escape_str("x\u{9b}31m"), "x\\u{9b}31m");
        let mut out = Terminal(Vec::new());
        write!(out, "thread `\u{1b}]0;pwned\u{7}`").unwrap();
        assert_eq!(out.0, b"thread `\\u{1b}]0;pwned\\u{7}`");
    }
}
