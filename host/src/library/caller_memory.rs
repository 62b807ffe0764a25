//! Which memory a C library call reads or writes on its caller's behalf:
//! the buffers of `memcpy`, `strcpy`, `fwrite` or `read`, the strings
//! `printf` prints with `%s`. The race check takes those accesses as the
//! caller's, at the call (as ThreadSanitizer's interceptors do), and leaves
//! the function's own instructions out: a `memcpy` into a buffer another
//! thread reads unlocked is reported at the program's line that called
//! `memcpy`, not inside it; the buffer `fwrite` reads is checked although
//! stdio's own state is not.
//!
//! The ranges are told after the call returns, from its arguments, its
//! result and memory as the call left it (the bytes `read` filled are its
//! result, the string `strcat` appended is in the destination). They lie
//! where the function's contract says it touches, read from C's standard
//! and POSIX, not from how wasi-libc happens to do it.

use super::printf;

/// How a function touches its caller's memory. Arguments are numbered from
/// 0, as the wasm function takes them (every one an `i32` on wasm32; a
/// variadic function's last is the pointer to its arguments).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Touch {
    /// `memcpy(dst, src, n)`, `memmove`: reads `n` bytes at `src`, writes
    /// `n` at `dst`.
    Copy,
    /// `memset(dst, c, n)`: writes `n` bytes at `dst`.
    Set,
    /// `bzero(dst, n)`: writes `n` bytes at `dst`.
    Zero,
    /// `memcmp(a, b, n)`: reads `n` bytes at each.
    CompareBytes,
    /// `memchr(s, c, n)`: reads up to the byte it found, or `n` bytes.
    FindByte,
    /// `strlen(s)`, `strchr(s, c)`, `strdup(s)`, `puts(s)`, `fputs(s, f)`,
    /// `perror(s)`: reads the string at argument 0 with its terminator.
    ReadString,
    /// `strnlen(s, n)`, `strndup(s, n)`: reads the string at argument 0,
    /// at most `n` bytes.
    ReadStringUpTo,
    /// `strstr(s, t)`, `strspn`, `strcspn`, `strpbrk`: reads both strings.
    ReadStrings,
    /// `strcmp(a, b)`, `strcasecmp`: reads each string up to the first
    /// difference.
    CompareStrings,
    /// `strncmp(a, b, n)`: the same, at most `n` bytes.
    CompareStringsUpTo,
    /// `strcpy(dst, src)`, `stpcpy`: reads the string at `src`, writes it
    /// at `dst`.
    CopyString,
    /// `strncpy(dst, src, n)`: reads the string at `src` (at most `n`
    /// bytes), writes `n` bytes at `dst`.
    CopyStringUpTo,
    /// `strcat(dst, src)`: reads `dst`'s string and `src`'s, writes `src`'s
    /// at the end of `dst`'s.
    Concatenate,
    /// `strncat(dst, src, n)`: the same with at most `n` bytes of `src`.
    ConcatenateUpTo,
    /// `fwrite(p, size, n, f)`: reads the items it wrote (its result).
    WriteItems,
    /// `fread(p, size, n, f)`: writes the items it read (its result).
    ReadItems,
    /// `write(fd, buf, n)`: reads the bytes it wrote (its result).
    WriteBytes,
    /// `read(fd, buf, n)`: writes the bytes it read (its result).
    ReadBytes,
    /// `fgets(s, n, f)`: writes the line it read, when it read one.
    ReadLine,
    /// `printf(fmt, args)`, `vprintf`: reads the format and the strings its
    /// `%s` print, writes what its `%n` store.
    Print,
    /// `fprintf(f, fmt, args)`, `dprintf(fd, ...)`, `vfprintf`: the same
    /// with the format in argument 1.
    PrintTo,
    /// `sprintf(buf, fmt, args)`, `vsprintf`: as [`Touch::PrintTo`], and
    /// writes the string it made at `buf`.
    PrintString,
    /// `snprintf(buf, n, fmt, args)`, `vsnprintf`: as [`Touch::PrintString`],
    /// at most `n` bytes of it.
    PrintStringUpTo,
}

/// How the function named `name` touches its caller's memory, if the model
/// knows it.
pub fn of_function(name: &str) -> Option<Touch> {
    super::functions::c_function(name).and_then(|f| f.touch)
}

impl Touch {
    /// Whether a function of this kind may take `params` `i32` arguments
    /// and return `results` `i32`s.
    pub fn accepts(self, params: usize, results: usize) -> bool {
        let arity = match self {
            // `strlen(s)`, `puts(s)`, `perror(s)`; `strchr(s, c)`,
            // `fputs(s, f)`.
            Touch::ReadString => 1..=2,
            Touch::Zero
            | Touch::ReadStringUpTo
            | Touch::ReadStrings
            | Touch::CompareStrings
            | Touch::CopyString
            | Touch::Concatenate
            | Touch::Print => 2..=2,
            Touch::Copy
            | Touch::Set
            | Touch::CompareBytes
            | Touch::FindByte
            | Touch::CompareStringsUpTo
            | Touch::CopyStringUpTo
            | Touch::ConcatenateUpTo
            | Touch::WriteBytes
            | Touch::ReadBytes
            | Touch::ReadLine
            | Touch::PrintTo
            | Touch::PrintString => 3..=3,
            Touch::WriteItems | Touch::ReadItems | Touch::PrintStringUpTo => 4..=4,
        };
        // Every one returns a value but `bzero` and `perror`.
        arity.contains(&params) && results <= 1
    }
}

/// Bytes of the guest's memory, as a call left them.
pub trait GuestBytes {
    /// The byte at `addr`, if the memory has it.
    fn byte(&self, addr: u32) -> Option<u8>;

    /// The little-endian `u32` at `addr` (0 past the memory's end).
    fn word(&self, addr: u32) -> u32 {
        (0..4).rev().fold(0, |value, i| {
            (value << 8) | u32::from(self.byte(addr.wrapping_add(i)).unwrap_or(0))
        })
    }

    /// The length of the string at `addr` without its terminator, looking
    /// at `limit` bytes at most (`limit` when none of them ends it).
    fn string_length(&self, addr: u32, limit: u32) -> u32 {
        (0..limit)
            .find(|&i| self.byte(addr.wrapping_add(i)).is_none_or(|b| b == 0))
            .unwrap_or(limit)
    }
}

impl GuestBytes for [u8] {
    fn byte(&self, addr: u32) -> Option<u8> {
        self.get(addr as usize).copied()
    }
}

/// Bytes a call read or wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Range {
    /// The first byte.
    pub addr: u32,
    /// How many.
    pub len: u32,
    /// Whether it wrote them (else it read them).
    pub write: bool,
}

impl Range {
    /// `len` bytes read at `addr`.
    pub const fn read(addr: u32, len: u32) -> Self {
        Range {
            addr,
            len,
            write: false,
        }
    }

    /// `len` bytes written at `addr`.
    pub const fn written(addr: u32, len: u32) -> Self {
        Range {
            addr,
            len,
            write: true,
        }
    }
}

/// The longest string the model follows: a string that does not end within
/// it is taken as this long (a program's strings are shorter; the memory's
/// end stops the search first anyway).
pub const STRING_LIMIT: u32 = 1 << 20;

/// The bytes a call of a `touch` function read and wrote, from its
/// arguments `args` (as many as it takes, the rest 0), its result (0 for a
/// function without one) and `memory` as it left it.
pub fn ranges(
    touch: Touch,
    args: [u32; 4],
    result: u32,
    memory: &(impl GuestBytes + ?Sized),
) -> Vec<Range> {
    let (read, written) = (Range::read, Range::written);
    let string = |addr| memory.string_length(addr, STRING_LIMIT) + 1;
    let string_up_to = |addr, n: u32| memory.string_length(addr, n).saturating_add(1).min(n);
    let [a, b, c, d] = args;
    let succeeded = (result as i32) > 0;
    let mut out = match touch {
        Touch::Copy => vec![read(b, c), written(a, c)],
        Touch::Set => vec![written(a, c)],
        Touch::Zero => vec![written(a, b)],
        Touch::CompareBytes => vec![read(a, c), read(b, c)],
        Touch::FindByte if result != 0 => vec![read(a, result.wrapping_sub(a).saturating_add(1))],
        Touch::FindByte => vec![read(a, c)],
        Touch::ReadString if a == 0 => Vec::new(),
        Touch::ReadString => vec![read(a, string(a))],
        Touch::ReadStringUpTo => vec![read(a, string_up_to(a, b))],
        Touch::ReadStrings => vec![read(a, string(a)), read(b, string(b))],
        Touch::CompareStrings | Touch::CompareStringsUpTo => {
            let limit = if touch == Touch::CompareStrings {
                STRING_LIMIT
            } else {
                c
            };
            let compared = compared_prefix(memory, a, b, limit);
            vec![read(a, compared), read(b, compared)]
        }
        Touch::CopyString => {
            let len = string(b);
            vec![read(b, len), written(a, len)]
        }
        Touch::CopyStringUpTo => vec![read(b, string_up_to(b, c)), written(a, c)],
        Touch::Concatenate | Touch::ConcatenateUpTo => {
            let appended = if touch == Touch::Concatenate {
                string(b) - 1
            } else {
                memory.string_length(b, c)
            };
            let before = memory
                .string_length(a, STRING_LIMIT)
                .saturating_sub(appended);
            vec![
                read(a, before),
                read(b, appended + u32::from(touch == Touch::Concatenate)),
                written(a.wrapping_add(before), appended + 1),
            ]
        }
        Touch::WriteItems => vec![read(a, b.saturating_mul(result))],
        Touch::ReadItems => vec![written(a, b.saturating_mul(result))],
        Touch::WriteBytes if succeeded => vec![read(b, result)],
        Touch::ReadBytes if succeeded => vec![written(b, result)],
        Touch::WriteBytes | Touch::ReadBytes => Vec::new(),
        Touch::ReadLine if result != 0 => vec![written(a, string(a))],
        Touch::ReadLine => Vec::new(),
        Touch::Print => printf::ranges(a, b, memory),
        Touch::PrintTo => printf::ranges(b, c, memory),
        Touch::PrintString => {
            let mut out = printf::ranges(b, c, memory);
            if (result as i32) >= 0 {
                out.push(written(a, result.saturating_add(1)));
            }
            out
        }
        Touch::PrintStringUpTo => {
            let mut out = printf::ranges(c, d, memory);
            if (result as i32) >= 0 && b > 0 {
                out.push(written(a, result.saturating_add(1).min(b)));
            }
            out
        }
    };
    out.retain(|range| range.len > 0);
    out
}

/// How many bytes `strcmp` compares of the strings at `a` and `b`: up to
/// and with the first that differs or ends both, at most `limit`.
fn compared_prefix(memory: &(impl GuestBytes + ?Sized), a: u32, b: u32, limit: u32) -> u32 {
    (0..limit)
        .find(|&i| {
            let (x, y) = (
                memory.byte(a.wrapping_add(i)),
                memory.byte(b.wrapping_add(i)),
            );
            x != y || x.is_none_or(|x| x == 0)
        })
        .map_or(limit, |i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 64 bytes of memory with `text` at each `(addr, text)`.
    fn memory(strings: &[(u32, &str)]) -> Vec<u8> {
        let mut bytes = vec![0u8; 64];
        for &(addr, text) in strings {
            bytes[addr as usize..addr as usize + text.len()].copy_from_slice(text.as_bytes());
        }
        bytes
    }

    #[test]
    fn a_function_is_known_by_name_and_takes_its_arguments() {
        assert_eq!(of_function("memcpy"), Some(Touch::Copy));
        assert_eq!(of_function("pthread_mutex_lock"), None);
        assert!(Touch::ReadString.accepts(2, 1), "fputs(s, f)");
        assert!(Touch::ReadString.accepts(1, 0), "perror(s)");
        assert!(!Touch::Copy.accepts(2, 1));
    }

    #[test]
    fn a_copy_reads_its_source_and_writes_its_destination() {
        let m = memory(&[]);
        assert_eq!(
            ranges(Touch::Copy, [8, 24, 5, 0], 8, &m[..]),
            [Range::read(24, 5), Range::written(8, 5)]
        );
        assert_eq!(ranges(Touch::Set, [8, 0, 0, 0], 8, &m[..]), []);
    }

    #[test]
    fn strings_are_read_with_their_terminator() {
        // After strcpy(8, 24): both hold "abc".
        let m = memory(&[(8, "abc"), (24, "abc")]);
        assert_eq!(
            ranges(Touch::CopyString, [8, 24, 0, 0], 8, &m[..]),
            [Range::read(24, 4), Range::written(8, 4)]
        );
        assert_eq!(
            ranges(Touch::ReadString, [24, 0, 0, 0], 3, &m[..]),
            [Range::read(24, 4)]
        );
        assert_eq!(
            ranges(Touch::ReadStringUpTo, [24, 2, 0, 0], 2, &m[..]),
            [Range::read(24, 2)]
        );
        // perror(NULL) reads nothing of the caller's.
        assert_eq!(ranges(Touch::ReadString, [0, 0, 0, 0], 0, &m[..]), []);
    }

    #[test]
    fn a_comparison_reads_up_to_the_first_difference() {
        let m = memory(&[(8, "abcd"), (24, "abxd")]);
        assert_eq!(
            ranges(Touch::CompareStrings, [8, 24, 0, 0], 1, &m[..]),
            [Range::read(8, 3), Range::read(24, 3)]
        );
        assert_eq!(
            ranges(Touch::CompareStringsUpTo, [8, 24, 2, 0], 0, &m[..]),
            [Range::read(8, 2), Range::read(24, 2)]
        );
    }

    #[test]
    fn a_concatenation_writes_at_the_old_end() {
        // After strcat(8, 24) of "ab" and "cd".
        let m = memory(&[(8, "abcd"), (24, "cd")]);
        assert_eq!(
            ranges(Touch::Concatenate, [8, 24, 0, 0], 8, &m[..]),
            [Range::read(8, 2), Range::read(24, 3), Range::written(10, 3)]
        );
        // strncat(8, 24, 1) of "ab" and "cd": "abc".
        let m = memory(&[(8, "abc"), (24, "cd")]);
        assert_eq!(
            ranges(Touch::ConcatenateUpTo, [8, 24, 1, 0], 8, &m[..]),
            [Range::read(8, 2), Range::read(24, 1), Range::written(10, 2)]
        );
    }

    #[test]
    fn input_and_output_touch_what_they_moved() {
        let m = memory(&[(8, "line\n")]);
        assert_eq!(
            ranges(Touch::WriteItems, [8, 4, 3, 40], 2, &m[..]),
            [Range::read(8, 8)]
        );
        assert_eq!(
            ranges(Touch::ReadItems, [8, 4, 3, 40], 0, &m[..]),
            [],
            "nothing read, nothing written"
        );
        assert_eq!(
            ranges(Touch::ReadBytes, [0, 8, 32, 0], 5, &m[..]),
            [Range::written(8, 5)]
        );
        assert_eq!(
            ranges(Touch::ReadBytes, [0, 8, 32, 0], -1i32 as u32, &m[..]),
            []
        );
        assert_eq!(
            ranges(Touch::ReadLine, [8, 32, 40, 0], 8, &m[..]),
            [Range::written(8, 6)]
        );
        assert_eq!(ranges(Touch::ReadLine, [8, 32, 40, 0], 0, &m[..]), []);
    }

    #[test]
    fn memchr_reads_up_to_what_it_found() {
        let m = memory(&[(8, "hello")]);
        assert_eq!(
            ranges(Touch::FindByte, [8, u32::from(b'l'), 5, 0], 10, &m[..]),
            [Range::read(8, 3)]
        );
        assert_eq!(
            ranges(Touch::FindByte, [8, u32::from(b'z'), 5, 0], 0, &m[..]),
            [Range::read(8, 5)]
        );
    }
}
