//! Counting operations: an atomic add or subtract of a constant whose
//! result the program only compares with a constant and branches on, as
//! a reference count's increment and decrement are (`Arc::clone` and
//! `Arc::drop` in Rust, `shared_ptr`'s count in C++).
//!
//! What such an operation returns decides nothing but the branch. Two of
//! them on one word leave the same value in either order, and each takes
//! its branch the same way in either order unless one of them moves the
//! other's old value across its comparison. So the exhaustive search can
//! tell from the values they found whether two of them commute (see
//! `sched::StepRecord::count`); only those that decide something
//! (the decrement that reaches zero) are reordered.

use serde::{Deserialize, Serialize};
use wasmparser::Operator;

/// How a counting operation's result is compared, with its constant on
/// the right (`old < K`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Comparison {
    /// `==` (also `eqz`, against 0).
    Eq,
    /// `!=`.
    Ne,
    /// `<`, signed.
    LtS,
    /// `<`, unsigned.
    LtU,
    /// `>`, signed.
    GtS,
    /// `>`, unsigned.
    GtU,
    /// `<=`, signed.
    LeS,
    /// `<=`, unsigned.
    LeU,
    /// `>=`, signed.
    GeS,
    /// `>=`, unsigned.
    GeU,
}

/// A counting operation: what it adds and the test its result decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CountTest {
    /// What it adds, as a two's complement value of its width (a
    /// subtraction adds the negated constant).
    pub delta: u64,
    /// Its width in bytes: 4 or 8.
    pub width: u8,
    /// How its old value is compared with `against`.
    pub comparison: Comparison,
    /// The constant it is compared with (of its width).
    pub against: u64,
}

impl CountTest {
    /// The counting operation that `operators[index]` starts, if it is
    /// one: a 32- or 64-bit atomic add or subtract of a constant pushed
    /// right before it, whose result is compared with a constant pushed
    /// right after it (or tested for zero) and the comparison consumed by
    /// a branch (`br_if` or `if`, through at most one `i32.eqz`).
    pub fn at<T>(operators: &[(T, Operator<'_>)], index: usize) -> Option<CountTest> {
        let op = |i: usize| operators.get(i).map(|(_, op)| op);
        let (width, subtracts) = match op(index)? {
            Operator::I32AtomicRmwAdd { .. } => (4, false),
            Operator::I32AtomicRmwSub { .. } => (4, true),
            Operator::I64AtomicRmwAdd { .. } => (8, false),
            Operator::I64AtomicRmwSub { .. } => (8, true),
            _ => return None,
        };
        let constant = match (width, op(index.checked_sub(1)?)?) {
            (4, Operator::I32Const { value }) => *value as u32 as u64,
            (8, Operator::I64Const { value }) => *value as u64,
            _ => return None,
        };
        let delta = mask(
            if subtracts {
                constant.wrapping_neg()
            } else {
                constant
            },
            width,
        );
        let (comparison, against, mut next) = match (op(index + 1)?, op(index + 2)) {
            (Operator::I32Eqz, _) if width == 4 => (Comparison::Eq, 0, index + 2),
            (Operator::I64Eqz, _) if width == 8 => (Comparison::Eq, 0, index + 2),
            (Operator::I32Const { value }, Some(compare)) if width == 4 => {
                (comparison_32(compare)?, *value as u32 as u64, index + 3)
            }
            (Operator::I64Const { value }, Some(compare)) if width == 8 => {
                (comparison_64(compare)?, *value as u64, index + 3)
            }
            _ => return None,
        };
        if matches!(op(next)?, Operator::I32Eqz) {
            next += 1;
        }
        match op(next)? {
            Operator::BrIf { .. } | Operator::If { .. } => Some(CountTest {
                delta,
                width,
                comparison,
                against,
            }),
            _ => None,
        }
    }

    /// Whether the test holds of `old`, a value of its width.
    pub fn holds(&self, old: u64) -> bool {
        let (a, b) = (mask(old, self.width), self.against);
        let bits = u32::from(self.width) * 8;
        let signed = |v: u64| ((v << (64 - bits)) as i64) >> (64 - bits);
        let (sa, sb) = (signed(a), signed(b));
        match self.comparison {
            Comparison::Eq => a == b,
            Comparison::Ne => a != b,
            Comparison::LtS => sa < sb,
            Comparison::LtU => a < b,
            Comparison::GtS => sa > sb,
            Comparison::GtU => a > b,
            Comparison::LeS => sa <= sb,
            Comparison::LeU => a <= b,
            Comparison::GeS => sa >= sb,
            Comparison::GeU => a >= b,
        }
    }

    /// `value` plus `delta` times `sign` (1 or -1), in its width.
    pub fn moved(&self, value: u64, delta: u64, sign: i8) -> u64 {
        let delta = if sign < 0 {
            delta.wrapping_neg()
        } else {
            delta
        };
        mask(value.wrapping_add(delta), self.width)
    }
}

/// `value` cut to `width` bytes.
fn mask(value: u64, width: u8) -> u64 {
    if width >= 8 {
        value
    } else {
        value & ((1u64 << (u32::from(width) * 8)) - 1)
    }
}

fn comparison_32(op: &Operator<'_>) -> Option<Comparison> {
    Some(match op {
        Operator::I32Eq => Comparison::Eq,
        Operator::I32Ne => Comparison::Ne,
        Operator::I32LtS => Comparison::LtS,
        Operator::I32LtU => Comparison::LtU,
        Operator::I32GtS => Comparison::GtS,
        Operator::I32GtU => Comparison::GtU,
        Operator::I32LeS => Comparison::LeS,
        Operator::I32LeU => Comparison::LeU,
        Operator::I32GeS => Comparison::GeS,
        Operator::I32GeU => Comparison::GeU,
        _ => return None,
    })
}

fn comparison_64(op: &Operator<'_>) -> Option<Comparison> {
    Some(match op {
        Operator::I64Eq => Comparison::Eq,
        Operator::I64Ne => Comparison::Ne,
        Operator::I64LtS => Comparison::LtS,
        Operator::I64LtU => Comparison::LtU,
        Operator::I64GtS => Comparison::GtS,
        Operator::I64GtU => Comparison::GtU,
        Operator::I64LeS => Comparison::LeS,
        Operator::I64LeU => Comparison::LeU,
        Operator::I64GeS => Comparison::GeS,
        Operator::I64GeU => Comparison::GeU,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmparser::MemArg;

    fn memarg() -> MemArg {
        MemArg {
            align: 2,
            max_align: 2,
            offset: 0,
            memory: 0,
        }
    }

    fn at(ops: Vec<Operator<'static>>, index: usize) -> Option<CountTest> {
        let ops: Vec<((), Operator)> = ops.into_iter().map(|op| ((), op)).collect();
        CountTest::at(&ops, index)
    }

    #[test]
    fn a_reference_counts_decrement_compared_with_one_is_a_counting_operation() {
        let drop = vec![
            Operator::I32Const { value: 1 },
            Operator::I32AtomicRmwSub { memarg: memarg() },
            Operator::I32Const { value: 1 },
            Operator::I32Ne,
            Operator::BrIf { relative_depth: 0 },
        ];
        let test = at(drop, 1).unwrap();
        assert_eq!(test.delta, u32::MAX as u64);
        assert_eq!((test.comparison, test.against), (Comparison::Ne, 1));
        assert!(test.holds(3) && !test.holds(1));
        assert_eq!(test.moved(3, test.delta, 1), 2);
        assert_eq!(test.moved(0, test.delta, 1), u32::MAX as u64);
    }

    #[test]
    fn a_result_kept_or_compared_with_no_constant_is_no_counting_operation() {
        let kept = vec![
            Operator::I32Const { value: 1 },
            Operator::I32AtomicRmwAdd { memarg: memarg() },
            Operator::LocalSet { local_index: 0 },
        ];
        assert_eq!(at(kept, 1), None);
        let variable = vec![
            Operator::LocalGet { local_index: 1 },
            Operator::I32AtomicRmwAdd { memarg: memarg() },
            Operator::I32Const { value: 0 },
            Operator::I32LtS,
            Operator::BrIf { relative_depth: 0 },
        ];
        assert_eq!(at(variable, 1), None);
        let not_branched = vec![
            Operator::I32Const { value: 1 },
            Operator::I32AtomicRmwAdd { memarg: memarg() },
            Operator::I32Const { value: 0 },
            Operator::I32LtS,
            Operator::LocalSet { local_index: 0 },
        ];
        assert_eq!(at(not_branched, 1), None);
    }

    #[test]
    fn signed_and_unsigned_tests_read_the_old_value_in_its_width() {
        let clone = vec![
            Operator::I64Const { value: 1 },
            Operator::I64AtomicRmwAdd { memarg: memarg() },
            Operator::I64Const { value: 0 },
            Operator::I64LtS,
            Operator::I32Eqz,
            Operator::If {
                blockty: wasmparser::BlockType::Empty,
            },
        ];
        let test = at(clone, 1).unwrap();
        assert_eq!((test.width, test.delta), (8, 1));
        assert!(test.holds(u64::MAX) && !test.holds(5));
        let zero = vec![
            Operator::I32Const { value: -1 },
            Operator::I32AtomicRmwAdd { memarg: memarg() },
            Operator::I32Eqz,
            Operator::BrIf { relative_depth: 1 },
        ];
        let test = at(zero, 1).unwrap();
        assert_eq!((test.comparison, test.against), (Comparison::Eq, 0));
        assert!(test.holds(0) && !test.holds(1));
    }
}
