//! Which of a frame's wasm locals the function can still read from where
//! the frame stands: a backward liveness analysis of each function's body,
//! made the first time a frame of it is read (see [`super::frames`]).
//!
//! Compilers reuse locals and leave values in them that nothing reads
//! again: the count of a spin loop that ended, a pointer of a call that
//! returned. Two frames that differ only in such *dead* locals go on alike,
//! so a thread's state leaves them out, and the states of a search that
//! compares them meet where the program's do. A local is live at an
//! instruction when some path from there reads it before writing it;
//! everything the analysis does not understand (a body it cannot parse,
//! control flow it does not know, a position that is no instruction) keeps
//! every local.

use super::thread_stacks::StackPointer;
use std::ops::Range;
use std::sync::{Arc, OnceLock};
use wasmparser::{Operator, Parser, Payload};

/// The liveness of every defined function of one module, worked out on
/// demand.
#[derive(Debug)]
pub(crate) struct LiveLocals {
    /// The module's bytes.
    wasm: Arc<[u8]>,
    /// By defined function index: where its body is in `wasm`, and how
    /// many parameters it has (its first locals).
    bodies: Vec<(Range<usize>, u32)>,
    /// By defined function index: its analysis, once made (`None`: it could
    /// not be made, every local counts).
    functions: Vec<OnceLock<Option<FunctionLiveness>>>,
    /// Where the module keeps a thread's stack pointer, which tells the
    /// dead part of its stack (see [`super::thread_stacks`]).
    stack_pointer: StackPointer,
}

impl LiveLocals {
    /// The analysis of `wasm`'s functions (none is analysed yet). A module
    /// whose sections cannot be read gives an analysis that keeps every
    /// local.
    pub(crate) fn new(wasm: Arc<[u8]>) -> Self {
        let bodies = function_bodies(&wasm).unwrap_or_default();
        let functions = bodies.iter().map(|_| OnceLock::new()).collect();
        let stack_pointer = StackPointer::of(&wasm);
        LiveLocals {
            wasm,
            bodies,
            functions,
            stack_pointer,
        }
    }

    /// Where the module keeps a thread's stack pointer.
    pub(crate) fn stack_pointer(&self) -> &StackPointer {
        &self.stack_pointer
    }

    /// The locals a frame of defined function `function` standing at code
    /// offset `pc` may still read; `None` when the analysis cannot tell
    /// (every local counts).
    pub(crate) fn at(&self, function: u32, pc: u32) -> Option<LiveSet<'_>> {
        self.analysis(function)?.at(pc as usize)
    }

    /// The analysis of defined function `function`, made on first use.
    fn analysis(&self, function: u32) -> Option<&FunctionLiveness> {
        let slot = self.functions.get(function as usize)?;
        slot.get_or_init(|| {
            let (range, params) = self.bodies[function as usize].clone();
            FunctionLiveness::of(&self.wasm[range.clone()], range.start, params)
        })
        .as_ref()
    }
}

/// The live locals at one position of a function.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LiveSet<'a> {
    words: &'a [u64],
}

impl LiveSet<'_> {
    /// Whether local `local` may still be read (a local past those the
    /// function declares counts).
    pub(crate) fn contains(self, local: u32) -> bool {
        self.words
            .get(local as usize / 64)
            .is_none_or(|word| word & (1 << (local % 64)) != 0)
    }
}

/// Where each defined function's body is, with its parameter count.
fn function_bodies(wasm: &[u8]) -> Result<Vec<(Range<usize>, u32)>, wasmparser::BinaryReaderError> {
    let mut params_of_type = Vec::new();
    let mut defined_types = Vec::new();
    let mut bodies = Vec::new();
    for payload in Parser::new(0).parse_all(wasm) {
        match payload? {
            Payload::TypeSection(reader) => {
                for ty in reader.into_iter_err_on_gc_types() {
                    params_of_type.push(ty?.params().len() as u32);
                }
            }
            Payload::FunctionSection(reader) => {
                for ty in reader {
                    defined_types.push(ty?);
                }
            }
            Payload::CodeSectionEntry(body) => {
                let ty = defined_types.get(bodies.len()).copied();
                let params = ty
                    .and_then(|ty| params_of_type.get(ty as usize).copied())
                    .unwrap_or(u32::MAX);
                bodies.push((body.range(), params));
            }
            _ => {}
        }
    }
    Ok(bodies)
}

/// The live locals of one function at each of its instructions.
#[derive(Debug)]
struct FunctionLiveness {
    /// The code offset of each instruction, ascending.
    offsets: Vec<usize>,
    /// 64-bit words per instruction in `live`.
    words: usize,
    /// By instruction: the locals live before it or after it (a bit set).
    live: Vec<u64>,
}

/// What an instruction does to locals and to where control goes.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Step {
    Read(u32),
    Write(u32),
    /// `block` or `if` (with whether it is an `if`), `loop`: a label.
    Block {
        is_if: bool,
    },
    Loop,
    Else,
    End,
    Branch(u32),
    BranchIf(u32),
    BranchTable(Vec<u32>),
    /// Control leaves the function (`return`, `unreachable`, a tail call,
    /// a throw).
    Leave,
    /// Anything else: neither locals nor control.
    Other,
}

impl Step {
    /// What `op` does, or `None` for control flow the analysis does not
    /// follow (exceptions, branches on references).
    fn of(op: &Operator<'_>) -> Option<Step> {
        Some(match op {
            Operator::LocalGet { local_index } => Step::Read(*local_index),
            Operator::LocalSet { local_index } | Operator::LocalTee { local_index } => {
                Step::Write(*local_index)
            }
            Operator::Block { .. } => Step::Block { is_if: false },
            Operator::If { .. } => Step::Block { is_if: true },
            Operator::Loop { .. } => Step::Loop,
            Operator::Else => Step::Else,
            Operator::End => Step::End,
            Operator::Br { relative_depth } => Step::Branch(*relative_depth),
            Operator::BrIf { relative_depth } => Step::BranchIf(*relative_depth),
            Operator::BrTable { targets } => {
                let mut depths = targets.targets().collect::<Result<Vec<u32>, _>>().ok()?;
                depths.push(targets.default());
                Step::BranchTable(depths)
            }
            Operator::Return
            | Operator::Unreachable
            | Operator::ReturnCall { .. }
            | Operator::ReturnCallIndirect { .. }
            | Operator::ReturnCallRef { .. }
            | Operator::Throw { .. }
            | Operator::ThrowRef => Step::Leave,
            Operator::Try { .. }
            | Operator::Catch { .. }
            | Operator::CatchAll
            | Operator::Delegate { .. }
            | Operator::Rethrow { .. }
            | Operator::TryTable { .. }
            | Operator::BrOnNull { .. }
            | Operator::BrOnNonNull { .. }
            | Operator::BrOnCast { .. }
            | Operator::BrOnCastFail { .. } => return None,
            _ => Step::Other,
        })
    }
}

impl FunctionLiveness {
    /// The analysis of the body `body`, which starts at code offset
    /// `start` and whose function has `params` parameters; `None` when it
    /// cannot be made.
    fn of(body: &[u8], start: usize, params: u32) -> Option<FunctionLiveness> {
        if params == u32::MAX {
            return None;
        }
        let reader = wasmparser::FunctionBody::new(wasmparser::BinaryReader::new(body, start));
        let mut locals = params as usize;
        for declared in reader.get_locals_reader().ok()? {
            locals = locals.checked_add(declared.ok()?.0 as usize)?;
        }
        let mut offsets = Vec::new();
        let mut steps = Vec::new();
        let mut operators = reader.get_operators_reader().ok()?;
        while !operators.eof() {
            let (op, offset) = operators.read_with_offset().ok()?;
            offsets.push(offset);
            steps.push(Step::of(&op)?);
        }
        let successors = successors(&steps)?;
        let words = locals.div_ceil(64).max(1);
        let count = steps.len();
        let mut live_in = vec![0u64; count * words];
        let mut live_out = vec![0u64; count * words];
        let mut out = vec![0u64; words];
        let mut inn = vec![0u64; words];
        let mut changed = true;
        while changed {
            changed = false;
            for i in (0..count).rev() {
                out.fill(0);
                for &next in &successors[i] {
                    for (word, theirs) in out.iter_mut().zip(&live_in[next * words..][..words]) {
                        *word |= theirs;
                    }
                }
                inn.copy_from_slice(&out);
                match steps[i] {
                    Step::Read(local) if (local as usize) < locals => {
                        inn[local as usize / 64] |= 1 << (local % 64);
                    }
                    Step::Write(local) if (local as usize) < locals => {
                        inn[local as usize / 64] &= !(1 << (local % 64));
                    }
                    _ => {}
                }
                live_out[i * words..][..words].copy_from_slice(&out);
                if live_in[i * words..][..words] != inn[..] {
                    live_in[i * words..][..words].copy_from_slice(&inn);
                    changed = true;
                }
            }
        }
        let live = live_in.iter().zip(&live_out).map(|(a, b)| a | b).collect();
        Some(FunctionLiveness {
            offsets,
            words,
            live,
        })
    }

    /// The locals live before or after the instruction at `pc`; `None` at
    /// an offset that is no instruction's.
    fn at(&self, pc: usize) -> Option<LiveSet<'_>> {
        let index = self.offsets.binary_search(&pc).ok()?;
        Some(LiveSet {
            words: &self.live[index * self.words..][..self.words],
        })
    }
}

/// Where control may go after each instruction (indices; the function's
/// exit is none). `None` when the blocks do not nest.
fn successors(steps: &[Step]) -> Option<Vec<Vec<usize>>> {
    // The matching `end` of each block, loop and if, and the `else` of
    // each if.
    let mut end_of = vec![usize::MAX; steps.len()];
    let mut else_of = vec![usize::MAX; steps.len()];
    let mut open = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        match step {
            Step::Block { .. } | Step::Loop => open.push(i),
            Step::Else => else_of[*open.last()?] = i,
            Step::End => {
                if let Some(start) = open.pop() {
                    end_of[start] = i;
                }
            }
            _ => {}
        }
    }
    if !open.is_empty() {
        return None;
    }
    // Walk again with the labels in scope: where a branch to each goes.
    let mut labels: Vec<(usize, Option<usize>)> = Vec::new();
    let mut successors = Vec::with_capacity(steps.len());
    let target = |labels: &[(usize, Option<usize>)], depth: u32| -> Option<usize> {
        let at = labels.len().checked_sub(1 + depth as usize)?;
        labels[at].1
    };
    for (i, step) in steps.iter().enumerate() {
        let next = (i + 1 < steps.len()).then_some(i + 1);
        let mut to = Vec::new();
        match step {
            Step::Block { is_if } => {
                let end = end_of[i];
                labels.push((i, (end + 1 < steps.len()).then_some(end + 1)));
                to.extend(next);
                if *is_if {
                    let other = if else_of[i] == usize::MAX {
                        end
                    } else {
                        else_of[i] + 1
                    };
                    to.push(other);
                }
            }
            Step::Loop => {
                labels.push((i, Some(i)));
                to.extend(next);
            }
            Step::Else => {
                // The end of the then-arm goes past the if.
                let (start, _) = *labels.last()?;
                to.push(end_of[start]);
            }
            Step::End => {
                labels.pop();
                to.extend(next);
            }
            Step::Branch(depth) => to.extend(target(&labels, *depth)),
            Step::BranchIf(depth) => {
                to.extend(target(&labels, *depth));
                to.extend(next);
            }
            Step::BranchTable(depths) => {
                for depth in depths {
                    to.extend(target(&labels, *depth));
                }
            }
            Step::Leave => {}
            Step::Read(_) | Step::Write(_) | Step::Other => to.extend(next),
        }
        successors.push(to);
    }
    Some(successors)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The liveness of the module `wat`, and the code offsets of the
    /// instructions of its first function.
    fn analyse(wat: &str) -> (Analysed, Vec<usize>) {
        let live = LiveLocals::new(Arc::from(wat::parse_str(wat).unwrap()));
        let offsets = live.analysis(0).unwrap().offsets.clone();
        (Analysed(live), offsets)
    }

    /// A module's liveness, asked as the frame digest asks it.
    struct Analysed(LiveLocals);

    impl Analysed {
        fn is_live(&self, function: u32, pc: u32, local: u32) -> bool {
            self.0
                .at(function, pc)
                .is_none_or(|set| set.contains(local))
        }
    }

    #[test]
    fn a_local_written_before_it_is_read_again_is_dead_between() {
        // 0: local.get 1, 1: local.set 0, 2: call, 3: i32.const, 4: local.set 0,
        // 5: local.get 0, 6: drop, 7: local.get 1, 8: drop, 9: end
        let (live, at) = analyse(
            r#"(module (func $f (param i32) (local i32)
                 local.get 1 local.set 0 call $g i32.const 5 local.set 0
                 local.get 0 drop local.get 1 drop)
               (func $g))"#,
        );
        // At the call, local 0 is overwritten before it is read; local 1 is
        // read later.
        assert!(!live.is_live(0, at[2] as u32, 0));
        assert!(live.is_live(0, at[2] as u32, 1));
        // After the last read of local 1 nothing is live.
        assert!(!live.is_live(0, at[8] as u32, 1));
        assert!(live.is_live(0, at[6] as u32, 1));
    }

    #[test]
    fn a_local_a_loop_reads_on_its_next_turn_is_live_through_the_loop() {
        // The counter is read at the loop's top after the call.
        let (live, at) = analyse(
            r#"(module (func $f (local i32)
                 i32.const 10 local.set 0
                 loop
                   call $g
                   local.get 0 i32.const 1 i32.sub local.tee 0
                   br_if 0
                 end
                 call $g)
               (func $g))"#,
        );
        // 0 const, 1 set, 2 loop, 3 call, 4 get, 5 const, 6 sub, 7 tee,
        // 8 br_if, 9 end, 10 call, 11 end
        assert!(live.is_live(0, at[3] as u32, 0));
        assert!(live.is_live(0, at[8] as u32, 0));
        // Once the loop is left the counter is dead.
        assert!(!live.is_live(0, at[10] as u32, 0));
    }

    #[test]
    fn a_local_read_on_one_arm_of_an_if_only_is_live_before_it() {
        let (live, at) = analyse(
            r#"(module (func $f (param i32) (local i32)
                 call $g
                 local.get 0
                 if
                   local.get 1 drop
                 else
                   i32.const 1 local.set 1
                 end
                 call $g
                 local.get 1 drop)
               (func $g))"#,
        );
        // 0 call, 1 get 0, 2 if, 3 get 1, 4 drop, 5 else, 6 const, 7 set 1,
        // 8 end, 9 call, 10 get 1, 11 drop, 12 end
        assert!(live.is_live(0, at[0] as u32, 1));
        assert!(live.is_live(0, at[0] as u32, 0));
        assert!(!live.is_live(0, at[9] as u32, 0));
        assert!(live.is_live(0, at[9] as u32, 1));
    }

    #[test]
    fn a_branch_out_of_a_block_skips_the_reads_after_it_in_the_block() {
        let (live, at) = analyse(
            r#"(module (func $f (local i32 i32)
                 block
                   call $g
                   br 0
                   local.get 0 drop
                 end
                 call $g
                 local.get 1 drop)
               (func $g))"#,
        );
        // 0 block, 1 call, 2 br, 3 get 0, 4 drop, 5 end, 6 call, 7 get 1, ...
        assert!(!live.is_live(0, at[1] as u32, 0));
        assert!(live.is_live(0, at[1] as u32, 1));
    }

    #[test]
    fn an_offset_that_is_no_instruction_keeps_every_local() {
        let (live, _) = analyse(r#"(module (func $f (local i32) call $g) (func $g))"#);
        assert!(live.is_live(0, 1, 0));
        assert!(live.is_live(7, 1, 0));
    }
}
