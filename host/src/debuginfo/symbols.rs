//! Names for code sites: function names from the module's name section and
//! source `file:line` from its DWARF, read from the original module.

use super::rust_symbols;
use crate::instrument::{Site, SiteTable};

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Where a code site is, for humans.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SiteName {
    /// Demangled function name, if the name section has one.
    pub function: Option<String>,
    /// Source file, if DWARF has one.
    pub file: Option<String>,
    /// Source line.
    pub line: Option<u32>,
    /// The code is the guest's own (not its standard library or runtime).
    pub user_code: bool,
}

impl SiteName {
    /// `function (file:line)`, or whatever part of it is known.
    pub fn describe(&self) -> String {
        let place = match (&self.file, self.line) {
            (Some(file), Some(line)) => Some(format!("{file}:{line}")),
            (Some(file), None) => Some(file.clone()),
            _ => None,
        };
        match (&self.function, place) {
            (Some(f), Some(p)) => format!("{f} ({p})"),
            (Some(f), None) => f.clone(),
            (None, Some(p)) => p,
            (None, None) => "?".into(),
        }
    }
}

/// The symbols of a module, read from its bytes the first time they are
/// needed (reading DWARF takes time that most executions never need).
/// Shared by the threads of a parallel exploration, one at a time.
pub struct LazySymbols {
    wasm: Arc<[u8]>,
    symbols: Mutex<Option<Symbols>>,
}

impl LazySymbols {
    /// The symbols of the original module `wasm`, unread.
    pub fn new(wasm: &[u8]) -> Self {
        LazySymbols {
            wasm: wasm.into(),
            symbols: Mutex::new(None),
        }
    }

    /// Runs `f` on the symbols, read now if they were not.
    pub fn with<R>(&self, f: impl FnOnce(&Symbols) -> R) -> R {
        let mut symbols = self.symbols.lock().unwrap_or_else(|e| e.into_inner());
        f(symbols.get_or_insert_with(|| Symbols::new(&self.wasm)))
    }

    /// `function (file:line)` of `site`, as much as is known.
    pub fn describe(&self, site: &Site) -> String {
        self.with(|symbols| symbols.site(site).describe())
    }

    /// The variable that holds `addr`, if DWARF says.
    pub fn variable_at(&self, addr: u32) -> Option<String> {
        self.with(|symbols| symbols.variable_at(addr))
    }
}

impl std::fmt::Debug for LazySymbols {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LazySymbols({} bytes)", self.wasm.len())
    }
}

/// One source frame of a code address (see [`Symbols::frames`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceFrame {
    /// Demangled function name (DWARF's, often without its path).
    pub function: Option<String>,
    /// Source file.
    pub file: Option<String>,
    /// Source line.
    pub line: Option<u32>,
    /// The file is the guest's own (not a standard library, libc or the
    /// weft SDK).
    pub user_code: bool,
}

/// How DWARF sections are held.
pub type Reader = gimli::EndianArcSlice<gimli::RunTimeEndian>;

/// Symbol information of one module.
pub struct Symbols {
    functions: HashMap<u32, String>,
    /// The functions whose symbols say they are Rust `std`'s own code (see
    /// [`super::rust_symbols`]), by index.
    rust_std_functions: std::collections::HashSet<u32>,
    /// Where each function body starts (as a code offset, see
    /// [`Site::code_offset`]) and its index, by start.
    bodies: Vec<(u32, u32)>,
    dwarf: Option<addr2line::Context<Reader>>,
    sections: Option<std::sync::Arc<gimli::Dwarf<Reader>>>,
    variables: std::sync::OnceLock<super::variables::VariableIndex>,
    cwd: String,
}

impl Symbols {
    /// Reads the name section and DWARF of the original module `wasm`;
    /// missing or malformed sections just mean fewer names.
    pub fn new(wasm: &[u8]) -> Self {
        let mut functions = HashMap::new();
        let mut mangled = Vec::new();
        let mut sections: HashMap<String, Vec<u8>> = HashMap::new();
        let mut bodies = Vec::new();
        let mut imported_functions = 0;
        let mut code_start = 0;
        for payload in wasmparser::Parser::new(0).parse_all(wasm).flatten() {
            let reader = match payload {
                wasmparser::Payload::ImportSection(imports) => {
                    imported_functions += imports
                        .into_imports()
                        .flatten()
                        .filter(|import| {
                            // As the instrumentation counts them.
                            matches!(
                                import.ty,
                                wasmparser::TypeRef::Func(_) | wasmparser::TypeRef::FuncExact(_)
                            )
                        })
                        .count() as u32;
                    continue;
                }
                wasmparser::Payload::CodeSectionStart { range, .. } => {
                    code_start = range.start;
                    continue;
                }
                wasmparser::Payload::CodeSectionEntry(body) => {
                    let start = body.range().start.saturating_sub(code_start) as u32;
                    bodies.push((start, imported_functions + bodies.len() as u32));
                    continue;
                }
                wasmparser::Payload::CustomSection(reader) => reader,
                _ => continue,
            };
            if reader.name() == "name" {
                for (index, name) in crate::instrument::function_names(&reader) {
                    functions.insert(index, demangle(&name));
                    mangled.push((index, name));
                }
            } else if reader.name().starts_with(".debug_") {
                sections.insert(reader.name().to_string(), reader.data().to_vec());
            }
        }
        let parsed = if sections.contains_key(".debug_info") {
            let load = |id: gimli::SectionId| -> Result<_, gimli::Error> {
                let data = sections.get(id.name()).cloned().unwrap_or_default();
                Ok(gimli::EndianArcSlice::new(
                    std::sync::Arc::from(data.into_boxed_slice()),
                    gimli::RunTimeEndian::Little,
                ))
            };
            gimli::Dwarf::load(load).ok().map(std::sync::Arc::new)
        } else {
            None
        };
        let dwarf = parsed
            .clone()
            .and_then(|d| addr2line::Context::from_arc_dwarf(d).ok());
        let cwd = std::env::current_dir()
            .map(|d| d.display().to_string())
            .unwrap_or_default();
        Symbols {
            functions,
            rust_std_functions: rust_std_functions(&mangled),
            bodies,
            dwarf,
            sections: parsed,
            variables: std::sync::OnceLock::new(),
            cwd,
        }
    }

    /// Whether the module carries DWARF line information.
    pub fn has_lines(&self) -> bool {
        self.dwarf.is_some()
    }

    /// Names the site. Where code was inlined, the innermost frame that is
    /// the guest's own code names it (a user's `counter.load()` is reported
    /// at the user's line, not inside the standard library).
    pub fn site(&self, site: &Site) -> SiteName {
        let mut name = SiteName {
            function: self.functions.get(&site.func).cloned(),
            file: None,
            line: None,
            user_code: !self.has_lines(),
        };
        let Some(ctx) = &self.dwarf else {
            return name;
        };
        let Ok(mut frames) = ctx.find_frames(site.code_offset as u64).skip_all_loads() else {
            return name;
        };
        let mut innermost: Option<(Option<String>, Option<String>, Option<u32>)> = None;
        while let Ok(Some(frame)) = frames.next() {
            let file = frame
                .location
                .as_ref()
                .and_then(|l| l.file)
                .map(|f| self.shorten(f));
            let line = frame.location.as_ref().and_then(|l| l.line);
            let function = frame
                .function
                .as_ref()
                .and_then(|f| f.demangle().ok())
                .map(|f| f.into_owned());
            if let Some(f) = &file
                && !is_library_path(f)
            {
                name.file = Some(f.clone());
                name.line = line;
                name.function = match (function, name.function.take()) {
                    // A closure or inlined helper has only a short DWARF name;
                    // the name section's full path is more telling.
                    (Some(short), Some(full))
                        if !short.contains("::")
                            && full
                                .strip_suffix(short.as_str())
                                .is_some_and(|path| path.ends_with("::")) =>
                    {
                        Some(full)
                    }
                    (Some(f), _) => Some(f),
                    (None, full) => full,
                };
                name.user_code = true;
                return name;
            }
            innermost.get_or_insert((function, file, line));
        }
        if let Some((function, file, line)) = innermost {
            name.function = function.or(name.function);
            name.file = file;
            name.line = line;
        }
        name
    }

    /// The source frames of the code at `code_offset`, innermost first:
    /// the functions inlined there, then the function that holds the code.
    /// Each frame's line is where it is at that code (for an outer frame:
    /// the line of the inlined call). Empty without DWARF.
    pub fn frames(&self, code_offset: u32) -> Vec<SourceFrame> {
        let Some(ctx) = &self.dwarf else {
            return Vec::new();
        };
        let Ok(mut frames) = ctx.find_frames(code_offset as u64).skip_all_loads() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        while let Ok(Some(frame)) = frames.next() {
            let file = frame
                .location
                .as_ref()
                .and_then(|l| l.file)
                .map(|f| self.shorten(f));
            out.push(SourceFrame {
                function: frame
                    .function
                    .as_ref()
                    .and_then(|f| f.demangle().ok())
                    .map(|f| f.into_owned()),
                user_code: file.as_deref().is_some_and(|f| !is_library_path(f)),
                line: frame.location.as_ref().and_then(|l| l.line),
                file,
            });
        }
        out
    }

    /// The module's DWARF, if it has any.
    pub fn dwarf(&self) -> Option<&gimli::Dwarf<Reader>> {
        self.sections.as_deref()
    }

    /// What the memory at `addr` is, in source terms (see
    /// [`VariableIndex::describe`](super::variables::VariableIndex::describe)).
    pub fn variable_at(&self, addr: u32) -> Option<String> {
        self.describe_variable(addr, 1).map(|(name, _)| name)
    }

    /// What the `width` bytes at `addr` are, and whether they are a number
    /// (see [`VariableIndex::describe`](super::variables::VariableIndex::describe)).
    pub fn describe_variable(&self, addr: u32, width: u32) -> Option<(String, bool)> {
        let dwarf = self.dwarf()?;
        self.variables
            .get_or_init(|| super::variables::VariableIndex::new(dwarf))
            .describe(dwarf, addr, width)
    }

    /// Every function of the name section: (index, demangled name).
    pub fn function_names(&self) -> impl Iterator<Item = (u32, &str)> {
        self.functions.iter().map(|(i, n)| (*i, n.as_str()))
    }

    /// The names of the functions the module's source defines: the name
    /// section's (each without its path and Rust's hash) and the debug
    /// information's, which keeps the functions the compiler inlined
    /// everywhere.
    pub fn source_function_names(&self) -> std::collections::BTreeSet<String> {
        let mut names: std::collections::BTreeSet<String> = self
            .function_names()
            .map(|(_, name)| last_segment(name).to_string())
            .collect();
        let Some(dwarf) = self.dwarf() else {
            return names;
        };
        super::variables::find_entry(dwarf, gimli::DW_TAG_subprogram, |unit, entry| {
            names.extend(super::variables::attr_name(dwarf, unit, entry));
            None::<()>
        });
        names
    }

    /// The demangled name of function `index` (original index space), if
    /// the name section has it.
    pub fn function_name(&self, index: u32) -> Option<&str> {
        self.functions.get(&index).map(String::as_str)
    }

    /// The demangled name of the function whose body holds `code_offset`,
    /// if the name section has it.
    pub fn function_at(&self, code_offset: u32) -> Option<&str> {
        self.function_name(self.function_index_at(code_offset)?)
    }

    /// The index of the function whose body holds `code_offset`.
    fn function_index_at(&self, code_offset: u32) -> Option<u32> {
        let after = self
            .bodies
            .partition_point(|&(start, _)| start <= code_offset);
        Some(self.bodies.get(after.checked_sub(1)?)?.1)
    }

    /// Whether the function whose body holds `code_offset` is Rust `std`'s
    /// own code by its symbol (see [`super::rust_symbols`]).
    pub fn rust_std_function_at(&self, code_offset: u32) -> bool {
        self.function_index_at(code_offset)
            .is_some_and(|index| self.rust_std_functions.contains(&index))
    }

    /// Names every site of a table.
    pub fn all(&self, sites: &SiteTable) -> Vec<SiteName> {
        (0..sites.len() as u32)
            .filter_map(|id| sites.get(id))
            .map(|s| self.site(s))
            .collect()
    }

    fn shorten(&self, file: &str) -> String {
        // A module built with its compilation folder recorded as `.`
        // (as `weft build` does, for reproducible modules) names its
        // files `./dir/file.c`.
        let file = file.trim_start_matches("./");
        if let Some(rest) = file.strip_prefix(&self.cwd) {
            return rest.trim_start_matches('/').to_string();
        }
        for marker in ["/library/", "/wasi-libc/", "/libcxx/", "/libcxxabi/"] {
            if let Some(at) = file.rfind(marker) {
                return file[at + 1..].to_string();
            }
        }
        file.to_string()
    }
}

fn is_library_path(file: &str) -> bool {
    const MARKERS: [&str; 12] = [
        "guest-sdk/",
        // The SDK files `weft build` writes beside a C or Zig build.
        "weft-c-sdk/",
        "weft-zig-sdk",
        "/rust/deps/",
        "library/",
        "/rustc/",
        "/.cargo/",
        "wasi-libc",
        "libc-top-half",
        "libc-bottom-half",
        "/lib/std/",
        "/lib/compiler_rt",
    ];
    MARKERS.iter().any(|m| file.contains(m))
}

/// The functions of `mangled` (index, name as the name section has it)
/// whose symbols are `std`'s own code: none unless the program's Rust
/// symbols are legacy-mangled (see [`super::rust_symbols`]).
fn rust_std_functions(mangled: &[(u32, String)]) -> std::collections::HashSet<u32> {
    if !mangled
        .iter()
        .any(|(_, name)| rust_symbols::is_legacy_rust(name))
    {
        return Default::default();
    }
    mangled
        .iter()
        .filter(|(_, name)| rust_symbols::is_v0_naming_std(name))
        .map(|(index, _)| *index)
        .collect()
}

fn demangle(name: &str) -> String {
    let demangled: Cow<str> = match rustc_demangle::try_demangle(name) {
        Ok(d) => Cow::Owned(format!("{d:#}")),
        Err(_) => Cow::Borrowed(name),
    };
    demangled.into_owned()
}

/// A function's name without its path and Rust's hash
/// (`lost_update::deposit::h0123456789abcdef` is `deposit`).
pub(crate) fn last_segment(name: &str) -> &str {
    let name = match name.rsplit_once("::") {
        Some((path, hash)) if hash.starts_with('h') && hash.len() == 17 => path,
        _ => name,
    };
    name.rsplit("::").next().unwrap_or(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The symbols of a module of empty functions named `names`, and where
    /// each body starts (as a code offset).
    fn module(names: &[&str]) -> (Symbols, Vec<u32>) {
        use wasm_encoder::{
            CodeSection, Function, FunctionSection, IndirectNameMap, Module, NameMap, NameSection,
            TypeSection,
        };
        let mut types = TypeSection::new();
        types.ty().function([], []);
        let mut functions = FunctionSection::new();
        let mut code = CodeSection::new();
        let mut function_names = NameMap::new();
        for (index, name) in names.iter().enumerate() {
            functions.function(0);
            let mut body = Function::new([]);
            body.instruction(&wasm_encoder::Instruction::End);
            code.function(&body);
            function_names.append(index as u32, name);
        }
        let mut names_section = NameSection::new();
        names_section.functions(&function_names);
        names_section.locals(&IndirectNameMap::new());
        let mut module = Module::new();
        module
            .section(&types)
            .section(&functions)
            .section(&code)
            .section(&names_section);
        let symbols = Symbols::new(&module.finish());
        let starts = symbols.bodies.iter().map(|&(start, _)| start).collect();
        (symbols, starts)
    }

    #[test]
    fn std_functions_are_told_by_their_symbols_beside_a_legacy_mangled_program() {
        let std = "_RNvMs_NtNtCs1cbpOjQgv0Q_3std6thread6threadNtB4_6Thread3new";
        let program = "_ZN10increments4main17h53cf01c759c563cbE";
        let (symbols, starts) = module(&[program, std, "malloc"]);
        let std_at: Vec<bool> = starts
            .iter()
            .map(|&start| symbols.rust_std_function_at(start + 1))
            .collect();
        assert_eq!(std_at, [false, true, false]);
        // A program mangled as std is (v0 throughout) is told by nothing.
        let (symbols, starts) = module(&[std, "malloc"]);
        assert!(!starts.iter().any(|&s| symbols.rust_std_function_at(s + 1)));
    }
}
