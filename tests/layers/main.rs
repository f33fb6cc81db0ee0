//! The layer check: every `crate::`, `super::` and `self::` path in the
//! runtime, the macro crate and the kernels points at a module of the same
//! layer or a lower one, and no import cycle ties more than three files.
//!
//! Each crate's `layers.txt` assigns every module to a layer (one line per
//! module, the longest matching module path wins) and may list exceptions
//! (`allow FROM -> TO: reason`). A path resolves to the file of the longest
//! module prefix it names, or through a `pub use` at the crate root, as
//! `import_cycles.py` does: a text-level reading, the same every time.
//! A failure prints the file, the line and the rule it breaks.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs;
use std::path::{Path, PathBuf};

mod reader;
use reader::{expand_use, path_at, strip, without_test_items};

/// One crate's layer table.
struct Table {
    /// Module path (`fused/lanes`, `array`) to (layer number, layer name).
    modules: Vec<(String, usize, String)>,
    /// Allowed upward imports, as (from file, to file).
    allowed: BTreeSet<(String, String)>,
}

fn read_table(krate: &Path) -> Table {
    let path = krate.join("layers.txt");
    let text =
        fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let mut modules = Vec::new();
    let mut allowed = BTreeSet::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap().trim();
        if line.is_empty() {
            continue;
        }
        if let Some(rule) = line.strip_prefix("allow ") {
            let (edge, reason) = rule.split_once(':').unwrap_or((rule, ""));
            let (from, to) = edge.split_once("->").unwrap_or_else(|| {
                panic!(
                    "{}:{}: write `allow FROM -> TO: reason`",
                    path.display(),
                    i + 1
                )
            });
            assert!(
                !reason.trim().is_empty(),
                "{}:{}: an exception needs its reason after a colon",
                path.display(),
                i + 1
            );
            allowed.insert((from.trim().to_string(), to.trim().to_string()));
            continue;
        }
        // `module  L3 primitives`
        let mut words = line.split_whitespace();
        let (Some(module), Some(level)) = (words.next(), words.next()) else {
            panic!("{}:{}: write `MODULE Ln NAME`", path.display(), i + 1);
        };
        let n: usize = level
            .strip_prefix('L')
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| {
                panic!(
                    "{}:{}: the layer is written `L0`, `L1`, ..",
                    path.display(),
                    i + 1
                )
            });
        let name = words.collect::<Vec<_>>().join(" ");
        modules.push((module.trim_end_matches('/').to_string(), n, name));
    }
    Table { modules, allowed }
}

impl Table {
    /// The layer of a file (`fused/lanes.rs`): its longest listed module prefix.
    fn layer(&self, file: &str) -> Option<(usize, &str, &str)> {
        let module = module_path(file).join("/");
        self.modules
            .iter()
            .filter(|(m, _, _)| module == *m || module.starts_with(&format!("{m}/")))
            .max_by_key(|(m, _, _)| m.len())
            .map(|(m, n, name)| (*n, name.as_str(), m.as_str()))
    }
}

/// The module path of a file: `fused/mod.rs` is `fused`, `a/b.rs` is `a/b`.
fn module_path(file: &str) -> Vec<String> {
    let mut parts: Vec<String> = file
        .trim_end_matches(".rs")
        .split('/')
        .map(String::from)
        .collect();
    if parts.last().map(String::as_str) == Some("mod") || parts == ["lib"] {
        parts.pop();
    }
    parts
}

struct Crate {
    name: String,
    files: BTreeMap<String, String>,
    reexport: HashMap<String, Vec<String>>,
}

fn load(krate: &Path) -> Crate {
    let src = krate.join("src");
    let mut files = BTreeMap::new();
    let mut stack = vec![src.clone()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let p: PathBuf = entry.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "rs") {
                let rel = p
                    .strip_prefix(&src)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                files.insert(rel, strip(&fs::read_to_string(&p).unwrap()));
            }
        }
    }
    // `pub use a::b::{C, D};` and `pub use a::b::C;` at the crate root.
    let mut reexport = HashMap::new();
    if let Some(lib) = files.get("lib.rs") {
        let mut i = 0;
        while let Some(at) = lib[i..].find("pub use ") {
            let start = i + at + "pub use ".len();
            let end = start + lib[start..].find(';').unwrap();
            let mut paths = Vec::new();
            expand_use(
                lib[start..end].trim_start_matches("crate::"),
                &[],
                &mut paths,
            );
            for p in paths {
                let alias = lib[start..end].split(',').find_map(|item| {
                    let (path, alias) = item.split_once(" as ")?;
                    path.trim()
                        .ends_with(p.last()?.as_str())
                        .then(|| alias.trim().trim_end_matches('}').trim().to_string())
                });
                if let Some(last) = p.last() {
                    reexport.insert(
                        alias.unwrap_or_else(|| last.clone()),
                        p[..p.len() - 1].to_vec(),
                    );
                }
            }
            i = end;
        }
    }
    Crate {
        name: krate.file_name().unwrap().to_string_lossy().into(),
        files,
        reexport,
    }
}

impl Crate {
    /// The file of the longest module prefix of `parts`.
    fn module_file(&self, parts: &[String]) -> Option<String> {
        (1..=parts.len()).rev().find_map(|k| {
            let base = parts[..k].join("/");
            [format!("{base}.rs"), format!("{base}/mod.rs")]
                .into_iter()
                .find(|c| self.files.contains_key(c))
        })
    }

    fn resolve(&self, parts: &[String]) -> Option<String> {
        let direct = self.module_file(parts);
        if (direct.is_none() || direct.as_deref() == Some("lib.rs"))
            && let Some(base) = parts.first().and_then(|p| self.reexport.get(p))
        {
            let mut full = base.clone();
            full.extend(parts[1..].iter().cloned());
            return self.module_file(&full);
        }
        direct
    }

    /// Every (target file, line) a file imports.
    fn imports(&self, file: &str) -> Vec<(String, usize, String)> {
        let text = &self.files[file];
        // Test-only items (unit test modules, helpers) see everything.
        let text = &without_test_items(text);
        let line_of = |at: usize| text[..at].matches('\n').count() + 1;
        let module = module_path(file);
        let mut found: Vec<(Vec<String>, usize)> = Vec::new();
        let bytes = text.as_bytes();
        let word_before = |at: usize| {
            at > 0
                && (bytes[at - 1].is_ascii_alphanumeric()
                    || bytes[at - 1] == b'_'
                    || bytes[at - 1] == b':')
        };
        // use trees
        let mut i = 0;
        while let Some(at) = text[i..].find("use ") {
            let start = i + at;
            i = start + 4;
            if word_before(start) {
                continue;
            }
            let Some(len) = text[i..].find(';') else {
                break;
            };
            let tree = text[i..i + len].trim();
            let (base, rest): (Vec<String>, &str) = if let Some(r) = tree.strip_prefix("crate::") {
                (Vec::new(), r)
            } else if tree.starts_with("super::") || tree.starts_with("self::") {
                let mut r = tree;
                let mut base = module.clone();
                if let Some(s) = r.strip_prefix("self::") {
                    r = s;
                }
                while let Some(s) = r.strip_prefix("super::") {
                    base.pop();
                    r = s;
                }
                (base, r)
            } else {
                continue;
            };
            let mut paths = Vec::new();
            expand_use(rest, &base, &mut paths);
            let line = line_of(start);
            found.extend(paths.into_iter().map(|p| (p, line)));
        }
        // inline paths
        for pat in ["crate::", "super::"] {
            let mut i = 0;
            while let Some(at) = text[i..].find(pat) {
                let start = i + at;
                i = start + pat.len();
                if word_before(start) {
                    continue;
                }
                let mut parts = path_at(text, start);
                let mut base = module.clone();
                if parts.first().map(String::as_str) == Some("crate") {
                    parts.remove(0);
                    base.clear();
                } else {
                    while parts.first().map(String::as_str) == Some("super") {
                        parts.remove(0);
                        base.pop();
                    }
                    if parts.is_empty() {
                        // `super::{..}`: the use tree above reads it.
                        continue;
                    }
                }
                base.extend(parts);
                found.push((base, line_of(start)));
            }
        }
        let mut out = Vec::new();
        found.sort();
        found.dedup();
        for (parts, line) in found {
            if parts.is_empty() {
                continue;
            }
            if let Some(target) = self.resolve(&parts)
                && target != file
                && target != "lib.rs"
            {
                out.push((target, line, parts.join("::")));
            }
        }
        out
    }
}

/// Tarjan's strongly connected components of more than one file.
fn cycles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct S<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: HashMap<&'a str, usize>,
        low: HashMap<&'a str, usize>,
        on: BTreeSet<&'a str>,
        stack: Vec<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut S<'a>, v: &'a str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on.insert(v);
        if let Some(ws) = s.edges.get(v) {
            for w in ws {
                if !s.index.contains_key(w.as_str()) {
                    visit(s, w);
                    let lw = s.low[w.as_str()];
                    let lv = s.low.get_mut(v).unwrap();
                    *lv = (*lv).min(lw);
                } else if s.on.contains(w.as_str()) {
                    let iw = s.index[w.as_str()];
                    let lv = s.low.get_mut(v).unwrap();
                    *lv = (*lv).min(iw);
                }
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            loop {
                let w = s.stack.pop().unwrap();
                s.on.remove(w);
                comp.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                s.out.push(comp);
            }
        }
    }
    let mut s = S {
        edges,
        index: HashMap::new(),
        low: HashMap::new(),
        on: BTreeSet::new(),
        stack: Vec::new(),
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out
}

/// Checks one crate; returns the problems found.
fn check(krate: &str) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(krate);
    let table = read_table(&root);
    let c = load(&root);
    let mut problems = Vec::new();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut used_allows = BTreeSet::new();
    for file in c.files.keys() {
        if file == "lib.rs" || file.ends_with("/tests.rs") {
            continue;
        }
        let Some((from, from_name, _)) = table.layer(file) else {
            problems.push(format!(
                "{}/src/{file}: no line of {krate}/layers.txt names this module; add one",
                c.name
            ));
            continue;
        };
        for (target, line, path) in c.imports(file) {
            edges
                .entry(file.clone())
                .or_default()
                .insert(target.clone());
            let Some((to, to_name, _)) = table.layer(&target) else {
                continue;
            };
            if to > from {
                if table.allowed.contains(&(file.clone(), target.clone())) {
                    used_allows.insert((file.clone(), target.clone()));
                    continue;
                }
                problems.push(format!(
                    "{krate}/src/{file}:{line}: `{path}` runs upward: L{from} {from_name} may import L0-L{from} only, and {target} is L{to} {to_name}"
                ));
            }
        }
    }
    for (from, to) in table.allowed.difference(&used_allows) {
        problems.push(format!("{krate}/layers.txt: `allow {from} -> {to}` allows an import that no longer exists; remove it"));
    }
    for comp in cycles(&edges) {
        if comp.len() > 3 {
            problems.push(format!(
                "{krate}/src: an import cycle of {} files: {}",
                comp.len(),
                comp.join(", ")
            ));
        }
    }
    problems
}

/// Fails with every problem of `krate`'s layer check.
fn assert_layered(krate: &str) {
    let problems = check(krate);
    assert!(
        problems.is_empty(),
        "{} layer problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn runtime_imports_run_downward() {
    assert_layered("nabla-runtime");
}

#[test]
fn macro_pipeline_runs_forward() {
    assert_layered("nabla-macros");
}

#[test]
fn kernels_imports_run_downward() {
    assert_layered("nabla-kernels");
}

#[test]
fn the_reader_finds_upward_paths() {
    let stripped = strip(
        "use crate::a::{b, c::{d as e}}; // crate::zz\nlet s = \"crate::q\"; let t = crate::f::g(x);",
    );
    assert!(!stripped.contains("zz") && !stripped.contains("crate::q"));
    let mut paths = Vec::new();
    expand_use("a::{b, c::{d as e}}", &[], &mut paths);
    assert_eq!(paths, vec![vec!["a", "b"], vec!["a", "c", "d"]]);
    assert_eq!(path_at("crate::f::g(x)", 0), vec!["crate", "f", "g"]);
    assert_eq!(module_path("fused/mod.rs"), vec!["fused"]);
    let t = without_test_items(
        "#[cfg(test)]\nmod testing;\nuse crate::a;\n#[cfg(test)]\nmod t { use crate::b; }\nuse crate::c;",
    );
    assert!(t.contains("crate::a") && !t.contains("crate::b") && t.contains("crate::c"));
}
