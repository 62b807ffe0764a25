//! The scratch locals the rewrite appends to a function whose instructions
//! need to set operands aside.

use super::super::ops::Scalar;
use wasm_encoder::ValType;

/// Scratch locals appended to a function that has hooked accesses.
pub(super) struct Scratch {
    pub addr: u32,
    pub i32s: [u32; 2],
    pub i64s: [u32; 2],
    f32: u32,
    f64: u32,
    /// The remaining budget of the point buffer, which numbers the entry a
    /// point writes.
    pub entry: u32,
    v128: u32,
}

impl Scratch {
    /// The locals' declarations, in the order [`Scratch::at`] numbers them.
    pub const DECLS: [(u32, ValType); 7] = [
        (1, ValType::I32),
        (2, ValType::I32),
        (2, ValType::I64),
        (1, ValType::F32),
        (1, ValType::F64),
        (1, ValType::I32),
        (1, ValType::V128),
    ];

    /// How many locals [`Scratch::DECLS`] declares.
    pub const COUNT: u32 = {
        let mut count = 0;
        let mut n = 0;
        while n < Self::DECLS.len() {
            count += Self::DECLS[n].0;
            n += 1;
        }
        count
    };

    /// The scratch locals of a function whose first scratch local is `base`.
    pub fn at(base: u32) -> Self {
        Scratch {
            addr: base,
            i32s: [base + 1, base + 2],
            i64s: [base + 3, base + 4],
            f32: base + 5,
            f64: base + 6,
            entry: base + 7,
            v128: base + 8,
        }
    }

    /// The local that holds an access's `which`-th value of type `ty`.
    pub fn value(&self, ty: Scalar, which: usize) -> u32 {
        match ty {
            Scalar::I32 => self.i32s[which],
            Scalar::I64 => self.i64s[which],
            Scalar::F32 => self.f32,
            Scalar::F64 => self.f64,
            Scalar::V128 => self.v128,
        }
    }

    /// The locals that hold a bulk instruction's operands: destination,
    /// source or value, length.
    pub fn bulk_operands(&self) -> [u32; 3] {
        [self.addr, self.i32s[0], self.i32s[1]]
    }
}
