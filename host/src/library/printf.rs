//! The caller's memory a call of the `printf` family touches: its format,
//! the strings its `%s` (and `%ls`) conversions print, and the integers its
//! `%n` conversions store, found by walking the format as C's standard
//! describes it and taking each conversion's argument from the variadic
//! arguments as wasm32's C compilers lay them out (one after another, each
//! at its own alignment: 4 bytes for `int`, `long` and pointers, 8 for
//! `long long` and `double`, 16 for `long double`).
//!
//! A format that numbers its arguments (`%1$s`) is read, but its
//! arguments are not followed.

use super::caller_memory::{GuestBytes, Range, STRING_LIMIT};

/// What one conversion's argument is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Argument {
    /// No argument (`%%`, `%m`).
    None,
    /// A value of this many bytes, not a pointer the call follows.
    Value(u32),
    /// A string it reads, of characters this wide, at most this many
    /// characters (the precision) when there is one.
    String(u32, Option<u32>),
    /// A pointer to an integer of this many bytes that it writes (`%n`).
    Count(u32),
}

/// The ranges a `printf` whose format is at `format` and whose variadic
/// arguments start at `args` read and wrote, memory being as the call left
/// it. A null format touches nothing.
pub fn ranges(format: u32, args: u32, memory: &(impl GuestBytes + ?Sized)) -> Vec<Range> {
    if format == 0 {
        return Vec::new();
    }
    let format_len = memory.string_length(format, STRING_LIMIT);
    let mut out = vec![Range::read(format, format_len + 1)];
    let mut next_arg = args;
    let mut take = |size: u32| {
        let align = size.clamp(4, 16);
        let at = next_arg.next_multiple_of(align);
        next_arg = at.wrapping_add(size);
        at
    };
    let bytes: Vec<u8> = (0..format_len)
        .map(|i| memory.byte(format.wrapping_add(i)).unwrap_or(0))
        .collect();
    let mut at = 0;
    while let Some(offset) = bytes[at..].iter().position(|&b| b == b'%') {
        let Some((conversion, end)) = parse(&bytes[at + offset + 1..]) else {
            break;
        };
        at += offset + 1 + end;
        if conversion.numbered {
            break;
        }
        if conversion.star_width {
            take(4);
        }
        let mut argument = conversion.argument;
        if conversion.star_precision {
            // A negative precision is taken as none.
            let precision = memory.word(take(4)) as i32;
            if let Argument::String(width, _) = argument {
                argument = Argument::String(width, u32::try_from(precision).ok());
            }
        }
        match argument {
            Argument::None => {}
            Argument::Value(size) => {
                take(size);
            }
            Argument::String(width, precision) => {
                let pointer = memory.word(take(4));
                if pointer != 0 {
                    let len = wide_string_bytes(memory, pointer, width, precision);
                    out.push(Range::read(pointer, len));
                }
            }
            Argument::Count(size) => {
                let pointer = memory.word(take(4));
                if pointer != 0 {
                    out.push(Range::written(pointer, size));
                }
            }
        }
    }
    out
}

/// One conversion specification, after its `%`.
struct Conversion {
    argument: Argument,
    /// Whether its width is an `int` argument (`*`), before its own.
    star_width: bool,
    /// Whether its precision is an `int` argument (`.*`), before its own
    /// and after the width's.
    star_precision: bool,
    /// Whether it numbers its argument (`%2$d`).
    numbered: bool,
}

/// The conversion `spec` starts with (what follows a `%`), and its length;
/// `None` when the format ends inside it.
fn parse(spec: &[u8]) -> Option<(Conversion, usize)> {
    let mut i = 0;
    let mut numbered = false;
    let digits = |i: &mut usize| {
        let start = *i;
        while spec.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        std::str::from_utf8(&spec[start..*i])
            .ok()
            .and_then(|s| s.parse::<u32>().ok())
    };
    let mark = i;
    if digits(&mut i).is_some() && spec.get(i) == Some(&b'$') {
        numbered = true;
        i += 1;
    } else {
        i = mark;
    }
    while spec.get(i).is_some_and(|b| b"-+ #0'".contains(b)) {
        i += 1;
    }
    let star_width = spec.get(i) == Some(&b'*');
    if star_width {
        i += 1;
    } else {
        digits(&mut i);
    }
    let mut precision = None;
    let mut star_precision = false;
    if spec.get(i) == Some(&b'.') {
        i += 1;
        if spec.get(i) == Some(&b'*') {
            star_precision = true;
            i += 1;
        } else {
            precision = Some(digits(&mut i).unwrap_or(0));
        }
    }
    let length_start = i;
    while spec.get(i).is_some_and(|b| b"hljztLq".contains(b)) {
        i += 1;
    }
    let length = &spec[length_start..i];
    let conversion = *spec.get(i)?;
    let integer_size = match length {
        b"ll" | b"j" | b"q" | b"L" => 8,
        _ => 4,
    };
    let argument = match conversion {
        b'%' | b'm' => Argument::None,
        b'd' | b'i' | b'o' | b'u' | b'x' | b'X' => Argument::Value(integer_size),
        b'c' | b'C' | b'p' => Argument::Value(4),
        b'a' | b'A' | b'e' | b'E' | b'f' | b'F' | b'g' | b'G' => {
            Argument::Value(if length == b"L" { 16 } else { 8 })
        }
        b's' => Argument::String(if length == b"l" { 4 } else { 1 }, precision),
        b'S' => Argument::String(4, precision),
        b'n' => Argument::Count(match length {
            b"hh" => 1,
            b"h" => 2,
            b"ll" | b"j" | b"q" => 8,
            _ => 4,
        }),
        // A conversion C does not define: printf stops there.
        _ => return None,
    };
    let conversion = Conversion {
        argument,
        star_width,
        star_precision,
        numbered,
    };
    Some((conversion, i + 1))
}

/// The bytes of the string of `width`-byte characters at `addr` that a
/// conversion with `precision` reads: up to and with its terminator, or
/// `precision` characters when those end first.
fn wide_string_bytes(
    memory: &(impl GuestBytes + ?Sized),
    addr: u32,
    width: u32,
    precision: Option<u32>,
) -> u32 {
    let limit = precision.unwrap_or(STRING_LIMIT);
    let mut chars = 0;
    while chars < limit {
        let at = addr.wrapping_add(chars * width);
        let ended = (0..width).all(|i| memory.byte(at.wrapping_add(i)).is_none_or(|b| b == 0));
        if ended {
            return (chars + 1) * width;
        }
        chars += 1;
    }
    chars * width
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Memory with `format` at 0x100, the argument words at 0x200 and the
    /// strings at their addresses.
    fn memory(format: &str, args: &[u32], strings: &[(u32, &str)]) -> Vec<u8> {
        let mut bytes = vec![0u8; 0x400];
        bytes[0x100..0x100 + format.len()].copy_from_slice(format.as_bytes());
        for (i, word) in args.iter().enumerate() {
            let at = 0x200 + 4 * i;
            bytes[at..at + 4].copy_from_slice(&word.to_le_bytes());
        }
        for &(addr, text) in strings {
            bytes[addr as usize..addr as usize + text.len()].copy_from_slice(text.as_bytes());
        }
        bytes
    }

    #[test]
    fn a_format_without_conversions_reads_only_itself() {
        let m = memory("hello\n", &[], &[]);
        assert_eq!(ranges(0x100, 0x200, &m[..]), [Range::read(0x100, 7)]);
        assert_eq!(ranges(0, 0x200, &m[..]), []);
    }

    #[test]
    fn strings_are_found_past_the_other_arguments() {
        // "%d %s %5.2f %s": an int, a string, a double (aligned to 8: the
        // words at 0x208 and 0x20c), a string.
        let m = memory(
            "%d %s %5.2f %-3s!",
            &[7, 0x300, 0, 0, 0x320],
            &[(0x300, "one"), (0x320, "three")],
        );
        assert_eq!(
            ranges(0x100, 0x200, &m[..]),
            [
                Range::read(0x100, 18),
                Range::read(0x300, 4),
                Range::read(0x320, 6)
            ]
        );
    }

    #[test]
    fn a_precision_bounds_the_string_and_stars_take_arguments() {
        let m = memory(
            "%.2s|%*.*s|%%",
            &[0x300, 5, 1, 0x320],
            &[(0x300, "abcdef"), (0x320, "xyz")],
        );
        assert_eq!(
            ranges(0x100, 0x200, &m[..]),
            [
                Range::read(0x100, 14),
                Range::read(0x300, 2),
                Range::read(0x320, 1)
            ]
        );
    }

    #[test]
    fn a_count_is_written_and_a_null_string_is_not_read() {
        let m = memory("%s%n%hhn", &[0, 0x380, 0x390], &[]);
        assert_eq!(
            ranges(0x100, 0x200, &m[..]),
            [
                Range::read(0x100, 9),
                Range::written(0x380, 4),
                Range::written(0x390, 1)
            ]
        );
    }

    #[test]
    fn numbered_arguments_and_unknown_conversions_stop_the_walk() {
        let m = memory("%1$s %s", &[0x300], &[(0x300, "a")]);
        assert_eq!(ranges(0x100, 0x200, &m[..]), [Range::read(0x100, 8)]);
        let m = memory("%y %s", &[0x300], &[(0x300, "a")]);
        assert_eq!(ranges(0x100, 0x200, &m[..]), [Range::read(0x100, 6)]);
    }
}
