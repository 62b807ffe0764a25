//! A thread-safe class among a module's exports.

use wasmparser::{Parser, Payload, TypeRef, ValType};

/// An exported method.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Method {
    /// The export's name.
    pub export: String,
    /// Its name without the class prefix.
    pub name: String,
    /// Parameters after the handle (at most three).
    pub extra_params: usize,
    /// Its function index in the module.
    pub func: u32,
}

/// A class: its constructor and methods.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Class {
    /// The prefix (`sb` for `sb_new`, `sb_append`, ...).
    pub prefix: String,
    /// The constructor's export (`<prefix>_new`, no parameters).
    pub constructor: String,
    /// The methods (exports `<prefix>_*` whose first parameter is an
    /// `i32` handle).
    pub methods: Vec<Method>,
}

/// Errors finding a class.
#[derive(Debug, thiserror::Error)]
pub enum ClassError {
    /// The module did not parse.
    #[error("invalid wasm module: {0}")]
    Invalid(String),
    /// No constructor.
    #[error(
        "the module exports no constructor `{0}_new` taking no parameters and returning a handle (exports: {1})"
    )]
    NoConstructor(String, String),
    /// No methods.
    #[error("the module exports no method `{0}_*` whose first parameter is an i32 handle")]
    NoMethods(String),
}

/// The class with exports prefixed `prefix_` in `wasm`.
///
/// # Errors
///
/// [`ClassError`] when the module does not parse or lacks a constructor or
/// methods.
pub fn find(wasm: &[u8], prefix: &str) -> Result<Class, ClassError> {
    let mut types: Vec<(Vec<ValType>, Vec<ValType>)> = Vec::new();
    let mut funcs: Vec<u32> = Vec::new();
    let mut exports: Vec<(String, u32)> = Vec::new();
    for payload in Parser::new(0).parse_all(wasm) {
        match payload.map_err(|e| ClassError::Invalid(crate::instrument::why_invalid(&e)))? {
            Payload::TypeSection(reader) => {
                for ty in reader.into_iter_err_on_gc_types() {
                    let ty =
                        ty.map_err(|e| ClassError::Invalid(crate::instrument::why_invalid(&e)))?;
                    types.push((ty.params().to_vec(), ty.results().to_vec()));
                }
            }
            Payload::ImportSection(reader) => {
                for import in reader.into_imports() {
                    let import = import
                        .map_err(|e| ClassError::Invalid(crate::instrument::why_invalid(&e)))?;
                    if let TypeRef::Func(t) = import.ty {
                        funcs.push(t);
                    }
                }
            }
            Payload::FunctionSection(reader) => {
                for t in reader {
                    funcs.push(
                        t.map_err(|e| ClassError::Invalid(crate::instrument::why_invalid(&e)))?,
                    );
                }
            }
            Payload::ExportSection(reader) => {
                for export in reader {
                    let export = export
                        .map_err(|e| ClassError::Invalid(crate::instrument::why_invalid(&e)))?;
                    if export.kind == wasmparser::ExternalKind::Func {
                        exports.push((export.name.to_string(), export.index));
                    }
                }
            }
            _ => {}
        }
    }
    let signature = |index: u32| {
        funcs
            .get(index as usize)
            .and_then(|&t| types.get(t as usize))
            .cloned()
    };
    let scalar = |t: &ValType| matches!(t, ValType::I32 | ValType::I64);
    let start = format!("{prefix}_");
    let constructor = format!("{prefix}_new");
    let has_constructor = exports.iter().any(|(name, index)| {
        name == &constructor
            && signature(*index).is_some_and(|(p, r)| p.is_empty() && r == [ValType::I32])
    });
    if !has_constructor {
        let names: Vec<&str> = exports.iter().map(|(n, _)| n.as_str()).collect();
        return Err(ClassError::NoConstructor(
            prefix.to_string(),
            names.join(", "),
        ));
    }
    let methods: Vec<Method> = exports
        .iter()
        .filter(|(name, _)| name.starts_with(&start) && *name != constructor)
        .filter_map(|(name, index)| {
            let (params, results) = signature(*index)?;
            let ok = params.first() == Some(&ValType::I32)
                && params.len() <= 4
                && params.iter().all(scalar)
                && results.len() <= 1
                && results.iter().all(scalar);
            ok.then(|| Method {
                export: name.clone(),
                name: name[start.len()..].to_string(),
                extra_params: params.len() - 1,
                func: *index,
            })
        })
        .collect();
    if methods.is_empty() {
        return Err(ClassError::NoMethods(prefix.to_string()));
    }
    Ok(Class {
        prefix: prefix.to_string(),
        constructor,
        methods,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_constructor_and_the_methods_that_take_a_handle() {
        let wasm = wat::parse_str(
            r#"(module
              (func (export "q_new") (result i32) (i32.const 0))
              (func (export "q_push") (param i32 i64) (result i32) (i32.const 0))
              (func (export "q_len") (param i32) (result i32) (i32.const 0))
              (func (export "q_bad") (param f32))
              (func (export "other") (param i32)))"#,
        )
        .unwrap();
        let class = find(&wasm, "q").unwrap();
        assert_eq!(class.constructor, "q_new");
        let names: Vec<&str> = class.methods.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["push", "len"]);
        assert_eq!(class.methods[0].extra_params, 1);
        assert!(matches!(
            find(&wasm, "zz"),
            Err(ClassError::NoConstructor(..))
        ));
    }
}
